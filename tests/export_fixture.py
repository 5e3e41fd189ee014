"""Accepted tasks of all three families for the export tests (built offline in a few seconds)."""

from __future__ import annotations

from pathlib import Path

from envpipeline.compose.author import ComposeConfig
from envpipeline.compose.pipeline import compose_task
from envpipeline.export.unified import AcceptedTask, load_gated_tasks
from envpipeline.export.writers import accepted_tasks
from envpipeline.models.task import TaskRecord
from envpipeline.terminal.seeds import materialize_seed
from envpipeline.worlds.pipeline import build_and_gate

TERMINAL_SEED = "fam-text-parsing-easy-0"


def composed_records(n: int = 4) -> list[TaskRecord]:
    """`n` accepted composed tasks; the first two share a seed key (one batch)."""
    records = []
    for seed in range(40):
        record = compose_task(seed, ComposeConfig(), seed_key=f"batch-{seed}")
        if record.status == "accepted":
            records.append(record)
        if len(records) == n:
            break
    records[1] = records[1].model_copy(
        update={"seed_key": records[0].seed_key, "provenance": records[0].provenance}
    )
    return records


def build_tasks(root: Path) -> list[AcceptedTask]:
    """4 composed tasks, 1 WildAWM task and 1 terminal bundle, as AcceptedTask records."""
    materialize_seed(TERMINAL_SEED, root / "bundles")
    build_and_gate(1, 1, 0, root / "worlds", tasks_per_world_day=1, live_health=False, replay=False)
    gated = load_gated_tasks(root / "worlds" / "tasks.jsonl")
    return accepted_tasks(
        composed_records(), gated, [root / "bundles" / TERMINAL_SEED], worlds_root=root / "worlds"
    )
