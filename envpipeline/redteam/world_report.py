"""The world red-team suite over a store's gated world tasks, for `envpipeline redteam --family world`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from envpipeline.errors import ConfigError
from envpipeline.models.world_task import GatedTask
from envpipeline.redteam.base import PolicyOutcome
from envpipeline.redteam.summary import fold_outcomes, red_team_summary
from envpipeline.redteam.world import red_team_world
from envpipeline.scratch import scratch_folder
from envpipeline.worlds.tasks import prepare_initial


def world_records(home: Path) -> tuple[Path, list[GatedTask]]:
    """The worlds folder of a data folder and its gated tasks (``worlds build``'s tasks.jsonl, else the lake)."""
    root = home / "worlds"
    jsonl = root / "tasks.jsonl"
    if jsonl.is_file():
        lines = jsonl.read_text(encoding="utf-8").splitlines()
        return root, [GatedTask.model_validate_json(line) for line in lines if line.strip()]
    from envpipeline.store.lake import Lake
    from envpipeline.store.tables import GATED_WORLD_TASKS

    lake = Lake(home)
    if "gated_world_tasks" not in lake.assets():
        raise ConfigError(
            f"no gated world tasks under {home}: run `envpipeline worlds build --home {home}` or `envpipeline run`"
        )
    return root, [GATED_WORLD_TASKS.decode(row) for row in lake.read("gated_world_tasks")]


def world_suite_report(records: list[GatedTask], root: Path, limit: int | None = None) -> dict[str, Any]:
    """Per policy over (at most `limit`) accepted tasks: attacked, broke, mean checklist; plus the gate's record."""
    accepted = [r for r in records if r.status == "accepted"][:limit]
    with scratch_folder("wildawm-suite-") as tmp:

        def attacks() -> Iterator[tuple[str, list[PolicyOutcome]]]:
            for record in accepted:
                task = record.task
                day_dir = root / task.persona_id / f"day-{task.day:02d}"
                w0 = prepare_initial(task, day_dir, Path(tmp) / task.task_id / day_dir.name)
                yield task.task_id, red_team_world(task, w0)

        folded = fold_outcomes(attacks())
    return {"accepted_tasks": len(accepted), **folded, "candidates": red_team_summary(records)}
