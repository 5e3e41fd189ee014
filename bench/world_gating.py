"""WildAWM gating throughput: the old settings (baseline) and the new ones, in the same run.

Builds the worlds (not timed), takes the first M candidate tasks and gates them four times with
`pipeline.gate_all`:

  baseline  one task at a time, web + MCP servers and a sandbox session started per rollout
            (``GateConfig(task_workers=1, reuse_services=False)``: main's behaviour before pooling)
  threads   pooled servers and sandbox sessions, `--task-workers` tasks gated at once by threads
            of this process (``task_processes=1``: the GIL keeps them on one core)
  new, cold the same in worker processes, one per core (the default config, `gate_processes`),
            the workers' fork server started inside the timed span: the first gating of a process
            that did not start it ahead (the Dagster asset's run)
  new       the same again, the fork server running (`worlds build` starts it before it builds
            the worlds, so that its imports overlap the build)

Each is preceded by a one-task warm-up (imports, image tree lookup, sandbox helper), not counted;
one task is too few for worker processes, so both `new` settings pay their workers' start-up in the
timed run, as a user does. The bench process loads numpy as the command line does
(`envpipeline.blas_threads`: one BLAS thread). Printed per setting: tasks/min (wall), wall and CPU
seconds (busy CPU of the whole machine), tasks per CPU-minute, process spawns started by this
process (subprocess.Popen; the workers of `new` spawn theirs out of sight, so its count is not
comparable), the load average; then the ratios, and whether the four settings took the same
decisions (every record but the rollouts' seconds). Run it on a quiet machine: the CPU count is
machine-wide.

Measured 2026-12-05 (2 cores, --tasks 30 --personas 3 --days 4, the code before and after world
gating moved to a memory-backed scratch folder, run back to back): before (65704ff) baseline 25.5,
threads 68.5, new 90.1 tasks/min (CPU 32.9 s); after, baseline 30.0, threads 94.9, **new 159.9
tasks/min** (CPU 18.9 s): 1.77x, 1.74x less CPU, the same decisions in every setting (and records
byte-identical before and after, threads, 30 tasks). Goal 300 tasks/min: missed. Since these
changes the gate code uses the scratch folder in every setting, so `baseline` no longer shows the
disk-backed copies of the earlier code.

Measured again later that day on another (slower) 2-core machine, the code before (d1d7b41) and
after the world shell stopped launching processes to read its home back and to empty it, pooled
slots kept their MCP and HTTP clients, and diffs stopped re-reading an unchanged W0 (51eff27),
back to back: before, baseline 29.9, threads 84.5, new 141.9 tasks/min (CPU 21.6 s, 45.2 spawns
a task with threads); after, baseline 31.5, threads 98.0, **new 188.8 tasks/min** (CPU 15.3 s,
14.3 spawns a task): 1.33x, 1.41x less CPU, the same decisions in every setting. On 70 tasks (6
personas) paired runs gave 147-153 before and 223-224 after. Goal 300 tasks/min: still missed.

Measured 2026-12-05 (a third, faster 2-core machine), the code before (76854ba) and after the
workers' fork server preloaded the gates' code (`gate_worker_preload`: each worker had imported the
project on its own, 12% of gating's CPU), the diversity gate computed one row of similarities
instead of the whole matrix, and numpy got one BLAS thread (`envpipeline.blas_threads`: OpenBLAS's
threads spun after every product, 2.1 s of the gating process's CPU in 70 tasks). --tasks 70
--personas 6 --days 4: before, new 263.3 and 298.2 tasks/min (CPU 26.3 and 23.5 s) in two runs an
hour apart; after, new, cold 315.7 and **new 322.4 tasks/min** (CPU 20.1-20.3 s). --tasks 30
--personas 3: before 273.1 (CPU 10.0 s); after, cold 287.8, new 314.8 (CPU 8.7-9.0 s). The same
decisions in every setting. Goal 300 tasks/min: met with the fork server started ahead (`worlds
build`) and at 70 tasks cold; not at 30 tasks cold.

Measured 2026-12-06 on a slower 2-core machine (I/O wait up to a third of the time), --tasks 70
--personas 6 --days 4, the previous session's last commit (d55a8cd) and this session's (54d4e5c)
back to back: before, new, cold 208.7 and **new 217.6 tasks/min** (CPU 31.7 / 30.9 s); after,
208.5 and **227.3** (CPU 31.2 / 29.6 s); the same decisions in every setting. No regression:
this machine spends 1.5x the CPU per task of the faster one (29.6 s against 20.2 s for 70 tasks),
and the goal of 300 tasks/min is missed on it with either code. `envpipeline worlds build
--personas 30 --days 3` on it gated 270 tasks in 65.3 s (248 tasks/min).

Usage: python bench/world_gating.py [--tasks 8] [--personas 1] [--days 3] [--seed 3]
                                    [--task-workers 4] [--root /dev/shm]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import envpipeline.blas_threads  # noqa: F401  (as the command line: before numpy loads)
from envpipeline.models.world_task import GatedTask, WorldTask
from envpipeline.worlds.build import build_world
from envpipeline.worlds.gates import GateConfig
from envpipeline.worlds.personas import propose_personas
from envpipeline.worlds.pipeline import gate_all, world_candidates

SPAWNS = [0]
_popen_init = subprocess.Popen.__init__


def _counting_init(self: subprocess.Popen, *args: Any, **kwargs: Any) -> None:
    SPAWNS[0] += 1
    _popen_init(self, *args, **kwargs)


def _cpu() -> float:
    """Busy CPU seconds of the whole machine (/proc/stat): the worker processes of `new` are
    children of multiprocessing's fork server, not of this process, so only a machine-wide count
    sees them (run the bench on a quiet machine; the load average is printed beside it)."""
    with open("/proc/stat") as stat:
        user, nice, system, _idle, _iowait, irq, softirq, steal = map(int, stat.readline().split()[1:9])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def _decisions(gated: list[GatedTask]) -> list[dict[str, Any]]:
    rows = []
    for record in gated:
        row = record.model_dump(mode="json")
        for rollout in row["rollouts"]:
            rollout.pop("seconds")
        rows.append(row)
    return rows


def measure(
    name: str, candidates: list[tuple[WorldTask, Path]], work: Path, config: GateConfig
) -> dict[str, Any]:
    """Warm up on one task, then gate `candidates` and return the figures."""
    gate_all(candidates[:1], work / "warm-up", config=config)
    SPAWNS[0] = 0
    wall0, cpu0 = time.perf_counter(), _cpu()
    gated = gate_all(candidates, work / name, config=config)
    wall, cpu = time.perf_counter() - wall0, _cpu() - cpu0
    n = len(gated)
    return {
        "name": name,
        "tasks": n,
        "accepted": sum(g.status == "accepted" for g in gated),
        "wall_s": wall,
        "cpu_s": cpu,
        "tasks_per_min": n / wall * 60,
        "tasks_per_cpu_min": n / cpu * 60 if cpu else 0.0,
        "spawns": SPAWNS[0],
        "spawns_per_task": SPAWNS[0] / n if n else 0.0,
        "load": os.getloadavg()[0],
        "decisions": _decisions(gated),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=8, help="M: candidate tasks gated per setting")
    parser.add_argument("--personas", type=int, default=1)
    parser.add_argument("--days", type=int, default=3)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--per-day", type=int, default=3, help="candidate tasks per world day")
    parser.add_argument("--task-workers", type=int, default=GateConfig().task_workers)
    parser.add_argument("--root", default=None, help="folder for worlds and gate work (default: temp)")
    args = parser.parse_args()

    subprocess.Popen.__init__ = _counting_init  # count spawns from here on
    with tempfile.TemporaryDirectory(prefix="world-gating-", dir=args.root) as tmp:
        root = Path(tmp)
        candidates: list[tuple[WorldTask, Path]] = []
        personas, _ = propose_personas(args.personas, args.seed)
        for persona in personas:
            build = build_world(persona, args.days, root / "worlds", live_health=False, replay=False)
            if build.passed:
                candidates += world_candidates(Path(build.root), list(range(1, args.days + 1)), args.per_day)
        candidates = candidates[: args.tasks]
        print(
            f"{len(candidates)} candidate tasks from {len(personas)} world(s); {os.cpu_count()} CPUs visible"
        )
        baseline = measure("baseline", candidates, root, GateConfig(task_workers=1, reuse_services=False))
        threads = measure(
            "threads", candidates, root, GateConfig(task_workers=args.task_workers, task_processes=1)
        )
        # first in this process, so its fork server starts inside the timed span (a Dagster run)
        cold = measure("new, cold", candidates, root, GateConfig(task_workers=args.task_workers))
        new = measure("new", candidates, root, GateConfig(task_workers=args.task_workers))
    for r in (baseline, threads, cold, new):
        print(
            f"{r['name']:10s} {r['tasks']} tasks ({r['accepted']} accepted): {r['tasks_per_min']:7.1f} tasks/min, "
            f"wall {r['wall_s']:6.2f} s, CPU {r['cpu_s']:6.2f} s ({r['tasks_per_cpu_min']:6.1f} tasks/CPU-min), "
            f"{r['spawns']} spawns ({r['spawns_per_task']:.1f}/task), load avg {r['load']:.1f}"
        )
    print(
        f"new / baseline: {new['tasks_per_min'] / baseline['tasks_per_min']:.2f}x tasks/min (wall), "
        f"{baseline['cpu_s'] / new['cpu_s']:.2f}x less CPU; threads / baseline: "
        f"{baseline['spawns'] / max(threads['spawns'], 1):.2f}x fewer spawns"
    )
    print(f"new / threads: {new['tasks_per_min'] / threads['tasks_per_min']:.2f}x tasks/min (wall)")
    print(f"new, cold / baseline: {cold['tasks_per_min'] / baseline['tasks_per_min']:.2f}x tasks/min (wall)")
    same = new["decisions"] == cold["decisions"] == baseline["decisions"] == threads["decisions"]
    print(f"same decisions in all four (every record but rollout seconds): {same}")


if __name__ == "__main__":
    main()
