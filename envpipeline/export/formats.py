"""Export formats: one registry entry per trainer row format (verl, verl-sft, trl-sft, trl-rl, skyrl).

A format says which stage it trains (``rl`` formats take the ``rl`` and ``eval`` splits, ``sft``
formats the ``sft`` and ``eval`` splits, tasks with an SFT trajectory only) and how one accepted
task becomes one row. `writers.write_format` writes any registered format; `envpipeline export
--format` offers exactly the registered names (plus ``harbor`` and ``all``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from envpipeline.export import rows
from envpipeline.models.dataset import AcceptedTask
from envpipeline.plugins import PluginRegistry

Stage = Literal["rl", "sft"]
#: The splits each stage writes.
STAGE_SPLITS: dict[Stage, tuple[str, str]] = {"rl": ("rl", "eval"), "sft": ("sft", "eval")}


@dataclass(frozen=True)
class ExportFormat:
    """One trainer row format."""

    name: str
    stage: Stage
    description: str
    #: rl: (task, split, index) -> row; sft: (task,) -> row
    build: Callable[..., dict[str, Any]]

    def row(self, task: AcceptedTask, split: str, index: int) -> dict[str, Any]:
        """The row of one task in one split."""
        return self.build(task, split, index) if self.stage == "rl" else self.build(task)


_REGISTRY: PluginRegistry[ExportFormat] = PluginRegistry("export format", __name__)


def register_format(fmt: ExportFormat) -> ExportFormat:
    """Add a format; a second, different one under a taken name is an error."""
    return _REGISTRY.register(fmt.name, fmt)


def export_formats() -> dict[str, ExportFormat]:
    """Every registered format by name (in registration order, the order files are written)."""
    _REGISTRY.all()
    return dict(_REGISTERED)


def get_format(name: str) -> ExportFormat:
    """One format by name, with a clear error listing the known ones."""
    return _REGISTRY.get(name)


_REGISTERED: dict[str, ExportFormat] = {}
for _fmt in (
    ExportFormat("verl", "rl", "verl RLHFDataset rows (prompt, reward_model, extra_info)", rows.verl_rl_row),
    ExportFormat("skyrl", "rl", "SkyRL prompt/env_class rows", rows.skyrl_row),
    ExportFormat("trl-rl", "rl", "TRL GRPO / verifiers rows (prompt, task columns)", rows.trl_rl_row),
    ExportFormat("verl-sft", "sft", "verl multi-turn SFT rows (messages, tools)", rows.verl_sft_row),
    ExportFormat("trl-sft", "sft", "TRL SFT conversational rows (messages, tools)", rows.trl_sft_row),
):
    _REGISTERED[_fmt.name] = register_format(_fmt)
