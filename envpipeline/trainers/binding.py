"""`bind_environment`: a trainer environment class bound to tasks, a lake and episode options.

Trainers build environments with no arguments (TRL's ``environment_factory()``) or with their own
(SkyRL's ``env_config, extras``), so what the rows do not carry is class state: a subclass with
``tasks`` (task id -> record, for rows that name only a task id), ``home`` (the lake to fall back
on), ``reward_mode`` and ``options`` for the episodes (``worlds_root``, ``sandbox``,
``bundle_root``). Rows that carry ``env_spec`` need none of it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from envpipeline.models.task import TaskRecord
from envpipeline.trainers.episode import REWARD_MODES, RewardMode

T = TypeVar("T", bound=type)


def bind_environment(
    cls: T,
    tasks: list[TaskRecord] | dict[str, TaskRecord] | None = None,
    home: str | Path | None = None,
    reward_mode: RewardMode = "binary",
    **options: Any,
) -> T:
    """A subclass of `cls` bound to these tasks / lake / options (pass it as the trainer's env class)."""
    if reward_mode not in REWARD_MODES:
        raise ValueError(f"unknown reward mode {reward_mode!r}; choose binary or checklist")
    table = tasks if isinstance(tasks, dict) else {t.task_id: t for t in tasks or []}
    attrs = {
        "tasks": dict(table),
        "home": Path(home) if home else None,
        "reward_mode": reward_mode,
        "options": dict(options),
    }
    return type(cls.__name__, (cls,), attrs)  # pyright: ignore[reportReturnType]  # a subclass of cls
