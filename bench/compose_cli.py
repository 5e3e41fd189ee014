"""End-to-end throughput of `envpipeline compose` (the real CLI, storage included) beside the core alone.

For each N the CLI runs in a subprocess pinned to one core, into a fresh data folder and output
folder, and the bench prints accepted tasks/s over the process's wall time, its CPU time (user +
sys) and its peak RSS (`ru_maxrss` of that child). The reference is the core alone in this
process on the same core: `compose_task` over the same seeds the CLI drew, warm-up excluded, with
its accepted tasks/s by wall and by CPU time. Each CLI run pays its own start-up (imports, the
service library's schemas): that is part of "end to end".

Measured 2026-12-04 (2 cores, one used): --tasks 1000: 19.7 accepted/s, peak RSS 392 MB (408 MB
before the spool's read-ahead fix, same bench run); --tasks 50000 (47 min, 55,689 candidates):
17.7 accepted/s, peak RSS 504 MB, with the read-ahead fix but before the statistics fix
(`store/spool.py`), which was not measured at that size. With both fixes, one bench run:
--tasks 5000: 13.9 accepted/s, peak RSS 381 MB; --tasks 10000: 14.5 accepted/s, 377 MB.

Measured 2026-12-05 (2 cores; the two trees' benches side by side, one core each), fixed costs cut:
before (65704ff) --tasks 50: 6.4 accepted/s, peak RSS 344 MB; --tasks 5000: 15.3 accepted/s
(19.8/s CPU), 377 MB. After: --tasks 50: 7.6 accepted/s, 226 MB; --tasks 5000: 15.4 accepted/s
(19.5/s CPU), 230 MB (goal <= 300 met). The CLI alone at 50,000 (451c767's code, one core, the
test suite on the other core for its first 38 minutes; `/usr/bin/time -v`): 50,000 accepted of
53,983 in 3,028 s (16.5/s), peak RSS 264 MB (goal met): VmRSS went 164 MB at the start to 205 MB
after composing, then 248-264 MB while publishing and refreshing the catalog. What went: the world red team's HTTP
and MCP clients (-31 MB at 50 tasks), Arrow's C++ mimalloc pool (-38, ARROW_DEFAULT_MEMORY_POOL in
the CLI), pandas loaded by pyarrow's first list conversion (-41, `store/arrow_memory.py`), eager
validators of the imported services' records (-7), glibc's sliding mmap threshold (-9 at 5,000).
What is left at 5,000 (stage samples of VmRSS): ~96 MB after the CLI's imports (pyarrow ~45 of it,
most of that its libraries' code pages; DuckDB ~16), ~60 MB loading the service library (114
services, ~3,400 pydantic models), ~25 MB of composing working set, ~25 MB for the library partition
(JSON schemas complete ~2,400 deferred argument models), ~25 MB for the DuckDB catalog refresh (its
engine's code pages). No help: MALLOC_ARENA_MAX=1, MALLOC_TRIM_THRESHOLD_, malloc_trim between
stages (<= 3 MB), DuckDB threads=1 / memory_limit for the refresh, lazy CLI command imports (~1 MB).

Measured 2026-12-05 on a faster machine, the code before (b1eb25b) and after the plantings'
state copies went record by record (`services.base.copy_state`), alternated, --tasks 1000: before
28.0 and 30.8 accepted/s, after 32.0 and 29.9 (peak RSS 227 MB every time): no difference beyond
this machine's noise. The core alone over seeds 0-299 (CPU time, three alternated pairs): 9.13 s
before, 8.90 s after (2.5%). Goal 500 accepted/s: missed by far; under cProfile the red-team gate
is about half of a candidate's time and each of its two drafts (the replay gate drafts it again)
about a fifth.

Usage: python bench/compose_cli.py [--tasks 500 5000] [--large] [--core-seeds 300]
  --large adds a 50,000-task run (peak RSS target <= 300 MB).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GOAL_PER_S = 500
GOAL_RSS_MB = 300


def one_core() -> int:
    return sorted(os.sched_getaffinity(0))[0] if hasattr(os, "sched_getaffinity") else 0


def run_cli(n: int, core: int, scratch: Path) -> dict[str, float]:
    """One `envpipeline compose --tasks n` in a child process; wall, CPU and peak RSS of that child."""
    folder = Path(tempfile.mkdtemp(prefix=f"compose-{n}-", dir=scratch))
    args = [
        "compose",
        "--tasks",
        str(n),
        "--out",
        str(folder / "out"),
        "--home",
        str(folder / "home"),
        "--json",
    ]
    cmd = [sys.executable, "-m", "envpipeline.cli", *args]
    if hasattr(os, "sched_setaffinity"):
        cmd = ["taskset", "-c", str(core), *cmd]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    code = (
        "import resource, subprocess, sys, json, time\n"
        "t = time.perf_counter(); done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "wall = time.perf_counter() - t; u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "print(json.dumps({'rc': done.returncode, 'wall': wall, 'cpu': u.ru_utime + u.ru_stime,"
        " 'rss_kb': u.ru_maxrss, 'stdout': done.stdout, 'stderr': done.stderr[-2000:]}))\n"
    )
    # a fresh parent per run, so RUSAGE_CHILDREN's peak RSS is this run's alone
    probe = subprocess.run(
        [sys.executable, "-c", code, *cmd], capture_output=True, text=True, env=env, check=True
    )
    measured = json.loads(probe.stdout)
    if measured["rc"] != 0:
        raise SystemExit(f"compose --tasks {n} failed ({measured['rc']}): {measured['stderr']}")
    summary = json.loads(measured["stdout"])
    shutil.rmtree(folder)  # a 50,000-task run writes gigabytes
    return {
        "n": n,
        "accepted": summary["accepted"],
        "attempts": summary["attempts"],
        "wall": measured["wall"],
        "cpu": measured["cpu"],
        "rss_mb": measured["rss_kb"] / 1024,
        "compose_seconds": summary["seconds"],
    }


def core_reference(seeds: int, core: int) -> dict[str, float]:
    """The core alone (draft + gates, no storage) on the same core, after a warm-up."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {core})
    from envpipeline.compose.author import ComposeConfig
    from envpipeline.compose.pipeline import compose_task

    config = ComposeConfig()
    for seed in range(5):  # warm-up: imports, link derivation, first-use caches
        compose_task(seed, config, "bench")
    wall, cpu = time.perf_counter(), time.process_time()
    accepted = sum(compose_task(seed, config, "bench").status == "accepted" for seed in range(5, 5 + seeds))
    return {
        "accepted": accepted,
        "wall": time.perf_counter() - wall,
        "cpu": time.process_time() - cpu,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--tasks", type=int, nargs="+", default=[500, 5000], help="accepted tasks per CLI run"
    )
    parser.add_argument("--large", action="store_true", help="add a 50,000-task run")
    parser.add_argument("--core-seeds", type=int, default=300, help="candidates for the core-only reference")
    args = parser.parse_args()
    sizes = [*args.tasks, *([50_000] if args.large else [])]
    core = one_core()
    scratch = Path(tempfile.mkdtemp(prefix="bench-compose-cli-"))
    print(f"one core (cpu {core}); machine load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus")
    ref = core_reference(args.core_seeds, core)
    print(
        f"core only (compose_task, {args.core_seeds} candidates, warm): "
        f"{ref['accepted'] / ref['wall']:,.1f} accepted/s wall, {ref['accepted'] / ref['cpu']:,.1f}/s CPU "
        f"({ref['wall']:.1f}s wall, {ref['cpu']:.1f}s CPU)"
    )
    for n in sizes:
        r = run_cli(n, core, scratch)
        print(
            f"CLI --tasks {n:>6}: {r['accepted'] / r['wall']:7.1f} accepted/s wall "
            f"({r['accepted'] / r['cpu']:7.1f}/s CPU; goal >= {GOAL_PER_S})  "
            f"wall {r['wall']:7.1f}s  CPU {r['cpu']:7.1f}s  peak RSS {r['rss_mb']:6.0f} MB "
            f"(goal <= {GOAL_RSS_MB})  candidates {r['attempts']}  "
            f"CLI/core (CPU rate): {(r['accepted'] / r['cpu']) / (ref['accepted'] / ref['cpu']):.2f}x"
        )
    shutil.rmtree(scratch)
    print(f"bench process peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
