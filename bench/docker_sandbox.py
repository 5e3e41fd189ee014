"""Docker sandbox trials: the old ``docker`` CLI path against the Engine API path, in one run (#16).

One trial = the oracle of a simple bundle (`sandbox_bench.make_bundle`): open a session, upload
``solution/`` and run ``solve.sh``, upload ``tests/`` and run ``test.sh``, read the reward, close.
Three paths run K trials each, interleaved (cli, api, api-no-spare, cli, ...), after one warm-up
trial each (image build, first spare, client set-up excluded):

  cli            `docker_cli_baseline.LegacyCliDockerSandbox`: the pre-#16 session, a CLI process
                 per create/exec/cp/rm (the baseline)
  api            `DockerSandbox()`: Engine API requests, warm spare started ahead (the default)
  api-no-spare   `DockerSandbox(warm_spare=False)`: Engine API requests only

Per path: median wall seconds per trial, CPU seconds per trial of this process and its children
(and of dockerd + containerd where /proc shows them), processes spawned per trial (all, and
``docker`` CLI ones; counted by wrapping `subprocess.Popen`), and the ratio of each to cli.
Wall time stops when `close` returns; processes and CPU are counted once the next spare of the
api path is up too, so the work done ahead is charged to the trial that caused it.

Usage: python bench/docker_sandbox.py [--trials 10]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from docker_cli_baseline import LegacyCliDockerSandbox  # noqa: E402
from sandbox_bench import make_bundle, verify  # noqa: E402

from envpipeline.sandbox import ownership  # noqa: E402
from envpipeline.sandbox.base import BASE_IMAGE  # noqa: E402
from envpipeline.sandbox.docker import SESSION_LABEL, DockerSandbox, image_exists  # noqa: E402


class _Counts:
    """Processes started through `subprocess.Popen` (all threads), by program."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.total = 0
        self.docker = 0

    def snapshot(self) -> tuple[int, int]:
        with self.lock:
            return self.total, self.docker


COUNTS = _Counts()
_Popen = subprocess.Popen


class _CountingPopen(_Popen):  # type: ignore[type-arg]
    def __init__(self, args: Any, *rest: Any, **kwargs: Any) -> None:
        program = args[0] if isinstance(args, list | tuple) and args else str(args).split()[0]
        with COUNTS.lock:
            COUNTS.total += 1
            COUNTS.docker += os.path.basename(str(program)) == "docker"
        super().__init__(args, *rest, **kwargs)


def engine_cpu() -> float | None:
    """CPU seconds of dockerd and containerd so far (None where /proc does not show them)."""
    tick = os.sysconf("SC_CLK_TCK")
    total, seen = 0.0, False
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (entry / "comm").read_text().strip() not in ("dockerd", "containerd"):
                continue
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
        seen = True
    return total if seen else None


def own_cpu() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


@dataclass
class PathStats:
    name: str
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    engine_cpus: list[float] = field(default_factory=list)
    processes: list[int] = field(default_factory=list)
    docker_processes: list[int] = field(default_factory=list)
    rewards: set[bytes | None] = field(default_factory=set)


def wait_for_spare(sandbox: DockerSandbox) -> None:
    spare = sandbox._spare  # pyright: ignore[reportPrivateUsage] - the bench charges it to the trial
    if spare is not None:
        spare[1].result()


def trial(sandbox: DockerSandbox, bundle: Any, stats: PathStats | None) -> None:
    before_counts, before_cpu, before_engine = COUNTS.snapshot(), own_cpu(), engine_cpu()
    seconds, reward = verify(sandbox, bundle)
    wait_for_spare(sandbox)
    after_counts, after_cpu, after_engine = COUNTS.snapshot(), own_cpu(), engine_cpu()
    if stats is None:
        return
    stats.walls.append(seconds)
    stats.cpus.append(after_cpu - before_cpu)
    if before_engine is not None and after_engine is not None:
        stats.engine_cpus.append(after_engine - before_engine)
    stats.processes.append(after_counts[0] - before_counts[0])
    stats.docker_processes.append(after_counts[1] - before_counts[1])
    stats.rewards.add(reward)


def session_containers() -> list[str]:
    """This process's session containers (the engine may be shared with other runs)."""
    owned = f"label={ownership.OWNER_LABEL}={ownership.owner()}"
    listed = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label={SESSION_LABEL}", "--filter", owned],
        capture_output=True,
        text=True,
    )
    return listed.stdout.split()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--trials", type=int, default=10, help="trials per path (after one warm-up each)")
    options = parser.parse_args()
    if not DockerSandbox.available() or not image_exists(BASE_IMAGE):
        print(f"needs a Docker engine and {BASE_IMAGE} (`make base-image`)")
        return
    load = os.getloadavg()[0]
    print(f"machine: {os.cpu_count()} CPUs, load average {load:.1f} at start (shared: figures are noisy)")
    containers_before = set(session_containers())
    subprocess.Popen = _CountingPopen  # type: ignore[misc]
    paths: list[tuple[PathStats, DockerSandbox]] = [
        (PathStats("cli"), LegacyCliDockerSandbox()),
        (PathStats("api"), DockerSandbox()),
        (PathStats("api-no-spare"), DockerSandbox(warm_spare=False)),
    ]
    with tempfile.TemporaryDirectory(prefix="docker-sandbox-bench-") as work:
        bundle = make_bundle(Path(work) / "task")
        for _, sandbox in paths:
            trial(sandbox, bundle, None)  # warm-up: image build, client, first spare
        for k in range(options.trials):
            order = paths if k % 2 == 0 else list(reversed(paths))
            for stats, sandbox in order:
                trial(sandbox, bundle, stats)
    for _, sandbox in paths:
        sandbox.close()
    subprocess.Popen = _Popen  # type: ignore[misc]
    report([stats for stats, _ in paths], options.trials)
    leaked = set(session_containers()) - containers_before
    print(
        f"this run's session containers left behind: {len(leaked)}; load average at end {os.getloadavg()[0]:.1f}"
    )


def report(all_stats: list[PathStats], trials: int) -> None:
    baseline = all_stats[0]
    mean: Callable[[list[int]], float] = lambda xs: sum(xs) / len(xs)  # noqa: E731
    print(f"\n{trials} trials per path, interleaved; medians of wall and CPU, means of processes")
    header = (
        f"  {'path':<14}{'wall s/trial':>13}{'CPU s/trial':>12}{'engine CPU':>11}{'procs':>7}{'docker':>7}"
    )
    print(header + f"{'wall vs cli':>13}{'procs vs cli':>13}  rewards")
    for stats in all_stats:
        wall = statistics.median(stats.walls)
        engine = f"{statistics.median(stats.engine_cpus):11.3f}" if stats.engine_cpus else f"{'n/a':>11}"
        procs = mean(stats.processes)
        ratio_wall = statistics.median(baseline.walls) / wall
        base_procs = mean(baseline.processes)
        ratio_procs = f"{base_procs / procs:12.1f}x" if procs else f"{'inf':>12} "
        print(
            f"  {stats.name:<14}{wall:13.3f}{statistics.median(stats.cpus):12.3f}{engine}"
            f"{procs:7.1f}{mean(stats.docker_processes):7.1f}{ratio_wall:12.2f}x{ratio_procs}"
            f"  {sorted(map(repr, stats.rewards))}"
        )
    print("  (vs cli: how many times faster / fewer than the CLI baseline; 'docker' = docker CLI processes)")


if __name__ == "__main__":
    main()
