"""A small Harbor export of every kind: one bundle per terminal family, composed tasks, world tasks.

`make harbor-validate` writes this sample and runs `envpipeline bundle check`, `envpipeline bundle
verify` and Harbor's own validator (`scripts/harbor-validate.sh`) on it, so every exporter is
exercised on every family at once. Everything is built offline in under a minute::

    python -m envpipeline.export.harbor_sample OUT [--composed N] [--world N] [--mode offline|portable]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from envpipeline.compose.author import ComposeConfig
from envpipeline.compose.pipeline import compose_task
from envpipeline.errors import ConfigError
from envpipeline.export.harbor import export_harbor
from envpipeline.export.harbor_common import HARBOR_MODES, HarborMode
from envpipeline.export.unified import load_gated_tasks
from envpipeline.models.task import TaskRecord
from envpipeline.models.world_task import GatedTask
from envpipeline.terminal.families.base import write_generated
from envpipeline.terminal.families.registry import all_families
from envpipeline.worlds.pipeline import build_and_gate

#: Composition seeds tried before giving up on `n` accepted composed tasks.
MAX_COMPOSE_SEEDS = 60


def family_bundles(root: Path, seed: int = 0) -> list[Path]:
    """One easy oracle bundle of every registered terminal family, written under `root`."""
    bundles = []
    for name, family in sorted(all_families().items()):
        task = family.generate(seed, family.knobs_for("easy"), "easy")
        bundles.append(write_generated(task, root / name))
    return bundles


def accepted_composed(n: int) -> list[TaskRecord]:
    """The first `n` accepted composed tasks over seeds 0, 1, ... (raises if too few are accepted)."""
    records: list[TaskRecord] = []
    for seed in range(MAX_COMPOSE_SEEDS):
        if len(records) == n:
            break
        record = compose_task(seed, ComposeConfig(), seed_key=f"harbor-sample-{seed}")
        if record.status == "accepted":
            records.append(record)
    if len(records) < n:
        raise ConfigError(f"only {len(records)} of {n} composed tasks accepted in {MAX_COMPOSE_SEEDS} seeds")
    return records


def accepted_world_tasks(root: Path, n: int) -> list[GatedTask]:
    """Up to `n` accepted tasks of one offline persona world built under `root`."""
    build_and_gate(1, 1, 0, root, tasks_per_world_day=max(n, 1), live_health=False, replay=False)
    gated = load_gated_tasks(root / "tasks.jsonl")
    return [g for g in gated if g.status == "accepted"][:n]


def export_harbor_sample(
    out: str | Path, composed: int = 2, world: int = 2, mode: HarborMode = "offline"
) -> list[Path]:
    """Export every terminal family plus `composed` composed and `world` world tasks under `out`.

    Returns the exported task folders (``out/<task>``), terminal families first. `mode` is the
    composed and world tasks' `HarborMode`.
    """
    out = Path(out)
    with tempfile.TemporaryDirectory(prefix="harbor-sample-") as scratch:
        sources = family_bundles(Path(scratch) / "bundles")
        worlds_root = Path(scratch) / "worlds"
        worlds = accepted_world_tasks(worlds_root, world) if world else []
        items = [*sources, *accepted_composed(composed), *worlds]
        return export_harbor(items, out, world_root=worlds_root, mode=mode)


def main(argv: list[str] | None = None) -> int:
    """Command line: write the sample and print one exported folder per line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("out", type=Path, help="output folder (one sub-folder per task)")
    parser.add_argument("--composed", type=int, default=2, help="composed tasks to export")
    parser.add_argument("--world", type=int, default=2, help="world tasks to export")
    parser.add_argument("--mode", choices=HARBOR_MODES, default="offline", help="Harbor export mode")
    args = parser.parse_args(argv)
    for path in export_harbor_sample(args.out, args.composed, args.world, args.mode):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
