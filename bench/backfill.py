"""Backfill bench: composition batches and terminal seeds backfilled with the multi-run policies.

Each phase is one asset backfill on a fresh instance and a fresh data folder, created as the UI
creates one and processed by the backfill daemon's own iteration in this process; each submitted
run executes in this process too (`tests/dagster/backfill_project/harness.py`), its steps in the
run's process (`--executor in_process`, default) or in one child process each (`multiprocess`,
Dagster's default executor, which the project's runs use).

Phases, each in a fresh process (so its CPU time and peak RSS are its own), each after a warm-up
backfill of one partition in that process that is not counted:
- baseline, compose: the first --baseline batches, one run per partition (max_partitions_per_run=1);
- policy, compose: the same batches with the project's policy (the like-for-like ratio);
- policy, compose: all --batches batches; policy, terminal: --seeds seeds (terminal_seeds and, when
  the local sandbox can isolate here, seed_verification).
The baseline's figures are extrapolated to --batches at its measured partitions/s, and printed as
an extrapolation. Printed per phase: runs, partitions, wall and CPU seconds (this process and its
children), runs/s, partitions/s, and peak RSS (this process; its children's largest, from
RUSAGE_CHILDREN; the sum as an upper bound of the tree).

Measured at full size on 2026-12-04 (2 cores, `python bench/backfill.py --batches 1000 --seeds 200`,
in_process executor; the machine also ran one other single-core job part of the time):
    baseline 1/run, 50 batches: 50 runs, 50.7 s wall, 45.4 s CPU, 0.99 partitions/s, peak RSS 441 MiB
    policy, 50 batches: 2 runs, 14.7 s wall, 13.9 s CPU, 3.41 partitions/s (x3.46 wall, x3.26 CPU)
    policy, 1000 batches: 40 runs, 335.4 s wall, 316.9 s CPU, 0.119 runs/s, 2.98 partitions/s,
        peak RSS 447 MiB (baseline extrapolated, not measured: 1000 runs, ~1013 s)
    policy, 200 terminal seeds (seeds + verification): 20 runs, 268.8 s wall, 213.3 s CPU,
        0.074 runs/s, 0.744 partitions/s, peak RSS 339 MiB

Usage: python bench/backfill.py [--batches 1000] [--seeds 200] [--candidates-per-batch 2]
                                [--baseline 50] [--executor in_process|multiprocess]
"""

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from assets.compose import COMPOSITION_BATCHES  # noqa: E402
from assets.partition_runs import COMPOSE_PARTITIONS_PER_RUN, SEED_PARTITIONS_PER_RUN  # noqa: E402
from assets.terminal import TERMINAL_SEEDS  # noqa: E402
from envpipeline.terminal.families.registry import all_families  # noqa: E402
from envpipeline.terminal.seeds import procedural_key  # noqa: E402
from tests.dagster.backfill_project.harness import (  # noqa: E402
    backfill_instance,
    backfill_runs,
    run_backfill,
)

COMPOSE = ["composed_task_specs", "verified_composed_tasks", "composed_rollouts"]
WARMUP_SEED = procedural_key(sorted(all_families())[0], "easy", 0)  # seed_keys() takes medium ones


def cpu_seconds() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def peak_rss_mib() -> tuple[float, float]:
    """(this process, its largest child) peak resident set, MiB (Linux reports KiB)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_maxrss / 1024, kids.ru_maxrss / 1024


def phase(
    label: str,
    root: Path,
    assets: list[str],
    partitions_def: str,
    keys: list[str],
    candidates: int,
    definitions: str = "defs",
) -> dict[str, Any]:
    """One backfill of `keys` on a fresh instance and data folder; its figures."""
    slug = re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")
    home = Path(tempfile.mkdtemp(prefix=f"{slug}-", dir=root))
    with backfill_instance(home, candidates) as instance:
        instance.add_dynamic_partitions(partitions_def, keys)
        wall0, cpu0 = time.perf_counter(), cpu_seconds()
        done = run_backfill(
            instance,
            assets,
            keys,
            backfill_id=f"{slug}-{home.name[-8:].lower()}",
            definitions=definitions,
            max_iterations=10 * len(keys) + 10,
        )
        wall, cpu = time.perf_counter() - wall0, cpu_seconds() - cpu0
        runs = backfill_runs(instance, done.backfill_id)
    failed = [r for r, status in runs if status.value != "SUCCESS"]
    me, child = peak_rss_mib()
    return {
        "label": label,
        "status": done.status.value,
        "runs": len(runs),
        "failed_runs": len(failed),
        "partitions": len(keys),
        "wall_s": wall,
        "cpu_s": cpu,
        "runs_per_s": len(runs) / wall,
        "partitions_per_s": len(keys) / wall,
        "rss_self_mib": me,
        "rss_child_mib": child,
    }


def show(f: dict[str, Any]) -> None:
    print(
        f"{f['label']:<34} {f['status']:<18} runs {f['runs']:>5} (failed {f['failed_runs']})"
        f"  partitions {f['partitions']:>5}  wall {f['wall_s']:8.1f}s  cpu {f['cpu_s']:8.1f}s"
        f"  runs/s {f['runs_per_s']:7.3f}  partitions/s {f['partitions_per_s']:7.3f}"
        f"  peak RSS self {f['rss_self_mib']:.0f} MiB, largest child {f['rss_child_mib']:.0f} MiB,"
        f" tree <= {f['rss_self_mib'] + f['rss_child_mib']:.0f} MiB",
        flush=True,
    )


def seed_keys(n: int) -> list[str]:
    families = sorted(all_families())
    return [procedural_key(families[i % len(families)], "medium", i // len(families)) for i in range(n)]


def terminal_assets() -> list[str]:
    from envpipeline.sandbox.local import LocalSandbox

    return ["terminal_seeds", "seed_verification"] if LocalSandbox.available() else ["terminal_seeds"]


def run_phase(spec: dict[str, Any]) -> dict[str, Any]:
    """A phase in a fresh process, so that its peak RSS and CPU time are its own."""
    out = subprocess.run(
        [sys.executable, __file__, "--phase", json.dumps(spec)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "BACKFILL_EXECUTOR": spec["executor"]},
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def one_phase(spec: dict[str, Any]) -> None:
    """In the phase's process: warm up (imports, caches) on one partition outside the measured
    ones, then measure the phase."""
    root, c = Path(spec["root"]), spec["candidates"]
    warm = ["batch-999999"] if spec["partitions_def"] == COMPOSITION_BATCHES else [WARMUP_SEED]
    phase("warm-up", root, spec["assets"], spec["partitions_def"], warm, c, spec["definitions"])
    figures = phase(
        spec["label"], root, spec["assets"], spec["partitions_def"], spec["keys"], c, spec["definitions"]
    )
    print(json.dumps(figures))


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--batches", type=int, default=1000)
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--candidates-per-batch", type=int, default=2)
    parser.add_argument("--baseline", type=int, default=50, help="batches backfilled both ways")
    parser.add_argument("--executor", choices=["in_process", "multiprocess"], default="in_process")
    parser.add_argument("--phase", help=argparse.SUPPRESS)  # internal: one phase, in a fresh process
    args = parser.parse_args()
    if args.phase:
        one_phase(json.loads(args.phase))
        return 0
    root = Path(tempfile.mkdtemp(prefix="backfill-bench-"))
    batches = [f"batch-{i}" for i in range(args.batches)]
    subset = batches[: args.baseline]
    common = {"root": str(root), "candidates": args.candidates_per_batch, "executor": args.executor}
    compose = {**common, "assets": COMPOSE, "partitions_def": COMPOSITION_BATCHES, "definitions": "defs"}
    print(
        f"executor {args.executor}; compose {COMPOSE_PARTITIONS_PER_RUN} partitions/run, terminal "
        f"{SEED_PARTITIONS_PER_RUN}; {args.candidates_per_batch} candidates/batch; each phase in a fresh "
        f"process after a 1-partition warm-up (not counted); data under {root}",
        flush=True,
    )
    base = run_phase(
        {
            **compose,
            "label": f"baseline 1/run, {len(subset)} batches",
            "keys": subset,
            "definitions": "one_run_per_partition",
        }
    )
    show(base)
    same = run_phase({**compose, "label": f"policy, {len(subset)} batches", "keys": subset})
    show(same)
    print(
        f"  like-for-like on {len(subset)} batches: runs {base['runs']} -> {same['runs']}, wall "
        f"x{base['wall_s'] / same['wall_s']:.2f} faster, cpu x{base['cpu_s'] / same['cpu_s']:.2f} less",
        flush=True,
    )
    if len(batches) > len(subset):
        full = run_phase({**compose, "label": f"policy, {len(batches)} batches", "keys": batches})
        show(full)
        est = len(batches) / base["partitions_per_s"]
        print(
            f"  baseline EXTRAPOLATED (not measured) to {len(batches)} batches from its {len(subset)}: "
            f"{len(batches)} runs, ~{est:.0f}s wall; measured policy: {full['runs']} runs, {full['wall_s']:.0f}s",
            flush=True,
        )
    seeds = seed_keys(args.seeds)
    if seeds:
        assets = terminal_assets()
        label = f"policy, {len(seeds)} seeds ({'+'.join(a.split('_')[-1] for a in assets)})"
        show(
            run_phase(
                {
                    **common,
                    "assets": assets,
                    "partitions_def": TERMINAL_SEEDS,
                    "definitions": "defs",
                    "label": label,
                    "keys": seeds,
                }
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
