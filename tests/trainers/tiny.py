"""A tiny random Qwen2-style model and a locally trained tokenizer (no downloads) for trainer tests.

The tokenizer is a byte-level BPE trained in memory on the rows' own text (so every observation
encodes, in few tokens) with the Qwen special tokens and TRL's shipped Qwen3 chat template
(``trl/chat_templates/qwen3.jinja``), which renders tools and tool responses and which TRL's
``add_response_schema`` recognises, so ``parse_response`` turns ``<tool_call>`` blocks into tool
calls as it does for real Qwen3 models.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import trl
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
MARKERS = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>"]


def qwen3_template() -> str:
    """The Qwen3 chat template TRL ships (tools, tool calls and tool responses)."""
    return (Path(trl.__file__).parent / "chat_templates" / "qwen3.jinja").read_text()


def tiny_tokenizer(corpus: Iterable[str], vocab_size: int = 3000) -> PreTrainedTokenizerFast:
    """A byte-level BPE trained on `corpus`, with Qwen's special tokens and chat template."""
    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    core.train_from_iterator(list(corpus), trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=[],
    )
    tokenizer.add_tokens(MARKERS)
    tokenizer.chat_template = qwen3_template()
    return tokenizer


def tiny_model(tokenizer: PreTrainedTokenizerFast) -> Qwen2ForCausalLM:
    """A one-layer random Qwen2 model sized to the tokenizer."""
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=32768,
        tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
    )
    return Qwen2ForCausalLM(config)
