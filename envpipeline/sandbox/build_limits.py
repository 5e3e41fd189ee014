"""Limits on ``docker build``: memory, CPU, processes, time and the size of the image it leaves.

A task's Dockerfile is untrusted code that runs at build time, before any session limit applies:
without limits a ``RUN`` can allocate all of the host's memory, fork thousands of processes or
leave a multi-gigabyte image. `build_limit_args` gives the classic builder's own limits
(``--memory``/``--memory-swap``, ``--cpu-period``/``--cpu-quota``; see
https://docs.docker.com/reference/cli/docker/image/build/#options) at the operator's ceiling
(`envpipeline.sandbox.ceiling`), and, where the engine uses the cgroupfs driver and a pids
controller is writable here, a ``--cgroup-parent`` whose ``pids.max`` is the ceiling's process
count (``docker build`` has no pids option; RUN steps run as root, which ignores RLIMIT_NPROC).
`image_size_problem` refuses an image larger than the ceiling's storage. The build time is capped
by the sandbox's build timeout.
"""

from __future__ import annotations

import contextlib
from functools import cache
from pathlib import Path

from envpipeline.sandbox.ceiling import OperatorCeiling

#: The parent cgroup of every build's RUN containers (cgroupfs driver: a path from the root).
BUILD_CGROUP = "envpipeline-build"
#: Where a v1 pids hierarchy is mounted.
PIDS_ROOT = Path("/sys/fs/cgroup/pids")
#: CFS period of the CPU quota (microseconds).
CPU_PERIOD = 100_000


@cache
def build_cgroup_parent(pids: int, driver: str) -> str | None:
    """``/envpipeline-build-<pids>`` with ``pids.max = pids`` made on the pids hierarchy, or None
    where the engine's cgroup driver is not cgroupfs or no pids hierarchy is writable here.

    One folder per ceiling: with one folder for all, a build under another ceiling (another
    sandbox, another worker) rewrote ``pids.max`` while this one ran, and a 64-process ceiling let
    a 300-process flood through (seen in the suite, two workers building at once). Builds under
    the same ceiling share its folder, so together they stay within it."""
    if driver != "cgroupfs":
        return None
    for root in (PIDS_ROOT, Path("/sys/fs/cgroup")):
        folder = root / f"{BUILD_CGROUP}-{pids}"
        with contextlib.suppress(OSError):
            if not (root / "cgroup.procs").exists() or not (
                root == PIDS_ROOT or "pids" in (root / "cgroup.controllers").read_text().split()
            ):
                continue
            if root != PIDS_ROOT:
                (root / "cgroup.subtree_control").write_text("+pids")
            folder.mkdir(exist_ok=True)
            (folder / "pids.max").write_text(str(pids))
            return f"/{folder.name}"
    return None


def build_limit_args(ceiling: OperatorCeiling, cgroup_driver: str) -> list[str]:
    """``docker build`` options that hold a build to the operator's ceiling."""
    memory = f"{ceiling.memory_mb}m"
    args = ["--memory", memory, "--memory-swap", memory]
    args += ["--cpu-period", str(CPU_PERIOD), "--cpu-quota", str(max(1000, int(ceiling.cpus * CPU_PERIOD)))]
    parent = build_cgroup_parent(ceiling.pids, cgroup_driver)
    if parent is not None:
        args += ["--cgroup-parent", parent]
    return args


def image_size_problem(size_bytes: int, ceiling: OperatorCeiling) -> str:
    """Why an image is too large to keep ("" when it is not)."""
    size_mb = size_bytes / 2**20
    if size_mb > ceiling.storage_mb:
        return (
            f"the built image is {size_mb:.0f} MB, above the operator's storage ceiling of "
            f"{ceiling.storage_mb} MB (ENVPIPELINE_MAX_STORAGE_MB); it was removed"
        )
    return ""
