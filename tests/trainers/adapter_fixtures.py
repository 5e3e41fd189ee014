"""Shared pieces of the trainer-adapter tests: a composed export, the reference replay, a tiny tokenizer."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from envpipeline.export.splits import SplitConfig
from envpipeline.export.writers import accepted_tasks, write_all
from envpipeline.models.dataset import AcceptedTask
from envpipeline.trainers.replay import episode_call
from tests.export_fixture import composed_records

CHAT_TEMPLATE = (
    "{%- if tools %}<|im_start|>system <tools> {{ tools | tojson }} </tools><|im_end|>\n{% endif %}"
    "{%- for m in messages %}<|im_start|>{{ m['role'] }} {{ m['content'] }}"
    "{%- if m.get('tool_calls') %} <tool_call> {{ m['tool_calls'] | tojson }} </tool_call>{% endif %}"
    "<|im_end|>\n{% endfor %}"
    "{%- if add_generation_prompt %}<|im_start|>assistant {% endif %}"
)
SPECIAL = ["<unk>", "<pad>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>", "<tool_response>"]
SPECIAL += ["</tool_response>"]


def composed_export(root: Path, n: int = 2) -> tuple[Path, list[AcceptedTask]]:
    """`n` accepted composed tasks exported as verl and TRL/verifiers rows under ``root/out``."""
    tasks = accepted_tasks(composed_records(max(n, 2)))[:n]
    out = root / "out"
    write_all(tasks, out, formats=["verl", "trl-rl"], config=SplitConfig(sft=0, rl=1, eval=0))
    return out, tasks


def reference_calls(task: AcceptedTask) -> tuple[list[tuple[str, dict[str, Any]]], str]:
    """The reference trajectory as (episode tool, arguments) calls, and its final answer."""
    calls: list[tuple[str, dict[str, Any]]] = []
    final = ""
    for message in task.messages() or []:
        if message.get("role") != "assistant":
            continue
        for call in message.get("tool_calls") or []:
            arguments = call["function"].get("arguments") or {}
            if isinstance(arguments, str):
                arguments = json.loads(arguments) if arguments.strip() else {}
            calls.append(episode_call(call["function"]["name"], arguments))
        if not message.get("tool_calls") and message.get("content"):
            final = str(message["content"])
    return calls, final


def tiny_tokenizer(texts: list[str]) -> Any:
    """A word-level `PreTrainedTokenizerFast` over the words of `texts`, with a ChatML-like template."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = sorted({w for text in texts for w in re.findall(r"\w+|[^\w\s]", text)})
    vocab = {token: i for i, token in enumerate(SPECIAL + [w for w in words if w not in SPECIAL])}
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Split(Regex(r"\w+|[^\w\s]"), "isolated")]
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, unk_token="<unk>", pad_token="<pad>", eos_token="<|im_end|>"
    )
    fast.add_special_tokens({"additional_special_tokens": SPECIAL[2:]})
    fast.chat_template = CHAT_TEMPLATE
    return fast
