"""What one asset check costs as its asset grows: every partition read vs the run's partition.

    PYTHONPATH=. .venv/bin/python bench/asset_checks.py [--sizes 1,100,1000] [--repeats 5]

Writes N partitions of a realistic ``seed_verification`` asset (one row per seed with its trial
logs, as `verification_row` writes it; about 12 KB a partition) to a temp lake, then times the
bodies of two of its checks (``oracle_scores_one``: JSON per row in Python; ``nop_scores_zero``:
a scalar condition) as a backfill run of one partition executes them:

- old: every row of the asset read into Python (``Lake.read(asset)``), as the checks did;
- new: only the run's partition file (``Lake.scan``/``Lake.tally`` with its key);
- whole: the new check outside a partitioned run (every partition, counted in DuckDB).

Each figure is the median of `repeats` timed calls after one warm-up call, wall and CPU time
(CPU counts DuckDB's threads). A backfill of N partitions runs the check N times, so its check
time is about N x the per-check figure: quadratic for old, linear for new.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

from envpipeline.store.lake import Lake, Lineage

ASSET = "seed_verification"


def verification(key: str, k: int) -> dict[str, Any]:
    """One seed's verification row, shaped (and sized) like `verification_row`'s."""
    log = f"step {k}: ran the verifier\n" * 120
    trials = [
        {"kind": kind, "reward": 1.0, "verifier_exec": {"stdout": log, "stderr": ""}}
        for kind in ("oracle", "oracle", "nop")
    ]
    return {
        "seed_key": key,
        "bundle": f"/data/bundles/seeds/{key}",
        "backend": "docker",
        "verdict": "verified",
        "status": "verified",
        "oracle_rewards": json.dumps([1.0, 1.0]),
        "nop_reward": 0.0,
        "nondeterministic": False,
        "reasons": "[]",
        "fingerprint": f"{k:064x}",
        "verifier_version": "v1",
        "environment_fingerprint": "docker:abc",
        "trials": json.dumps(trials),
        "red_team": json.dumps([{"policy": "nop", "binary": 0.0, "moot": False}]),
        "verified_at": 1.7e9 + k,
    }


def old_oracle(lake: Lake, key: str) -> int:
    rows = lake.read(ASSET)
    return len([r["seed_key"] for r in rows if any(x != 1.0 for x in json.loads(r["oracle_rewards"]))])


def new_oracle(lake: Lake, key: str | None) -> int:
    rows = lake.scan(ASSET, None if key is None else [key], "seed_key, oracle_rewards")
    return len([r["seed_key"] for r in rows if any(x != 1.0 for x in json.loads(r["oracle_rewards"]))])


def old_nop(lake: Lake, key: str) -> int:
    return len([r["seed_key"] for r in lake.read(ASSET) if r["nop_reward"] != 0.0])


def new_nop(lake: Lake, key: str | None) -> int:
    return len(
        lake.tally(ASSET, None if key is None else [key], "seed_key", "nop_reward IS DISTINCT FROM 0.0")[1]
    )


def timed(call: Callable[[], object], repeats: int) -> tuple[float, float]:
    """Median (wall, cpu) seconds of `repeats` calls, after one warm-up call."""
    call()
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        call()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,100,1000", help="partition counts, comma-separated")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    sizes = sorted(int(n) for n in args.sizes.split(","))
    print(
        f"{'check':<8} {'N':>5} {'old wall':>9} {'old cpu':>8} {'new wall':>9} {'new cpu':>8} {'old/new':>8} {'whole wall':>11}"
    )
    with tempfile.TemporaryDirectory(prefix="bench-asset-checks-") as home:
        lake, written = Lake(home), 0
        for n in sizes:
            while written < n:  # the lake grows from one size to the next
                key = f"seed-{written:05d}"
                lake.write_partition(
                    ASSET, key, [verification(key, written)], Lineage(f"run-{written}", "v1")
                )
                written += 1
            key = f"seed-{n - 1:05d}"  # the partition the last run of a backfill checks
            for name, old, new in (("oracle", old_oracle, new_oracle), ("nop", old_nop, new_nop)):
                assert old(lake, key) == new(lake, None) == new(lake, key) == 0
                old_wall, old_cpu = timed(lambda old=old, key=key: old(lake, key), args.repeats)
                new_wall, new_cpu = timed(lambda new=new, key=key: new(lake, key), args.repeats)
                whole_wall, _ = timed(lambda new=new: new(lake, None), args.repeats)
                print(
                    f"{name:<8} {n:>5} {old_wall:>8.4f}s {old_cpu:>7.4f}s {new_wall:>8.4f}s {new_cpu:>7.4f}s "
                    f"{old_wall / new_wall:>7.1f}x {whole_wall:>10.4f}s"
                )


if __name__ == "__main__":
    main()
