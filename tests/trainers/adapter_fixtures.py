"""Shared pieces of the trainer-adapter tests: a composed export and the reference replay.

The tokenizer is `tests.trainers.tiny.tiny_tokenizer` (byte-level BPE trained on the rows, Qwen3 template).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from envpipeline.export.splits import SplitConfig
from envpipeline.export.writers import accepted_tasks, write_all
from envpipeline.models.dataset import AcceptedTask
from envpipeline.trainers.replay import episode_call
from tests.export_fixture import composed_records


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
