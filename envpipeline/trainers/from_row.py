"""`episode_from_row`: the live episode of a dataset row of any of our RL formats.

Where the spec is looked for, first hit wins:

1. ``env_spec`` at the top of the row (TRL / verifiers rows; a JSON string or a dict);
2. ``env_spec`` inside ``extra_info`` (verl / SkyRL rows) or ``info`` (TRL / verifiers), each a
   dict or a JSON string;
3. ``task``: a whole `TaskRecord` (model, dict or JSON);
4. the task id (``task_id``, ``extra_info.task_id`` or ``info.task_id``) in `tasks` given by the
   caller, else in the lake (``verified_composed_tasks``, composed tasks only) under `home` or
   ``$ENVPIPELINE_HOME`` — the only path that needs the lake.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from envpipeline.errors import ConfigError, UnknownTaskError
from envpipeline.models.env_spec import EnvSpec, env_spec_of
from envpipeline.models.task import TaskRecord
from envpipeline.trainers.episode import Episode, build_episode

NESTED_KEYS = ("extra_info", "info")


def as_dict(value: Any) -> dict[str, Any]:
    """A dict, or a JSON string holding one; {} otherwise."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return {}
    return value if isinstance(value, dict) else {}


def task_id_of(row: Mapping[str, Any]) -> str | None:
    """The task id a row names: ``task_id``, or inside ``info`` / ``extra_info`` (dict or JSON)."""
    if isinstance(row.get("task_id"), str):
        return row["task_id"]
    for key in NESTED_KEYS:
        found = as_dict(row.get(key)).get("task_id")
        if isinstance(found, str):
            return found
    return None


def spec_in_row(row: Mapping[str, Any]) -> EnvSpec | None:
    """The row's inline `EnvSpec`, or None when it carries none."""
    candidates = [row.get("env_spec")] + [as_dict(row.get(key)).get("env_spec") for key in NESTED_KEYS]
    for candidate in candidates:
        if isinstance(candidate, EnvSpec):
            return candidate
        if isinstance(candidate, str) and candidate:
            return EnvSpec.model_validate_json(candidate)
        if isinstance(candidate, dict) and candidate:
            return EnvSpec.model_validate(candidate)
    task = row.get("task")
    if isinstance(task, TaskRecord):
        return env_spec_of(task)
    if isinstance(task, dict | str) and task:
        return env_spec_of(TaskRecord.model_validate(as_dict(task)))
    return None


def load_accepted_task(task_id: str, home: str | Path | None = None) -> TaskRecord:
    """An accepted composed task from the lake (``verified_composed_tasks``); UnknownTaskError if absent."""
    from envpipeline.store.lake import Lake
    from envpipeline.store.records import row_to_task

    lake = Lake(Path(home or os.environ.get("ENVPIPELINE_HOME", "data")).resolve())
    if "verified_composed_tasks" not in lake.assets():
        raise UnknownTaskError(f"no verified_composed_tasks in the lake at {lake.root}")
    rows = lake.query(
        "SELECT * FROM verified_composed_tasks WHERE task_id = ? AND status = 'accepted' LIMIT 1", [task_id]
    )
    if not rows:
        raise UnknownTaskError(f"no accepted composed task {task_id!r} in {lake.root}")
    return row_to_task(rows[0])


def spec_of_row(
    row: Mapping[str, Any],
    tasks: Mapping[str, TaskRecord] | None = None,
    home: str | Path | None = None,
) -> EnvSpec:
    """The row's spec: inline, else its task id in `tasks`, else the lake (see the module docstring)."""
    spec = spec_in_row(row)
    if spec is not None:
        return spec
    task_id = task_id_of(row)
    if task_id is None:
        raise ConfigError("the row names no task: give env_spec, task, task_id or extra_info/info.task_id")
    if tasks and task_id in tasks:
        return env_spec_of(tasks[task_id])
    return env_spec_of(load_accepted_task(task_id, home))


def episode_from_row(
    row: Mapping[str, Any],
    tasks: Mapping[str, TaskRecord] | None = None,
    home: str | Path | None = None,
    **options: Any,
) -> Episode:
    """The live episode of a row of any of our RL formats (verl, SkyRL, TRL, verifiers).

    Args:
        row: the dataset row (or the keyword arguments a trainer passes from it).
        tasks: task id -> record, consulted when the row carries no inline spec.
        home: the lake to fall back on (default ``$ENVPIPELINE_HOME``).
        options: family options, e.g. ``worlds_root`` (world days) or ``sandbox`` (terminal).
    """
    return build_episode(spec_of_row(row, tasks, home), **options)
