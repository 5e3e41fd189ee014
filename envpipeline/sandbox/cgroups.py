"""Whole-sandbox memory and process limits for the local backend, through cgroups.

Rlimits are per process (``RLIMIT_AS``) or per uid (``RLIMIT_NPROC``): four processes of 700 MB
each pass a 1 GB ``memory_mb``, and every local session shares the sandbox uid's process count,
so a hostile bundle can make another bundle's forks fail. A `SessionCgroup` holds one session's
processes in a cgroup of its own with ``memory`` (limit = ``memory_mb``, swap included where the
kernel accounts it) and ``pids`` (limit = ``pids``) set for the whole group, whatever uid or how
many processes. Processes join at start (`SessionCgroup.join_self` in the child before it
executes), so all their descendants are counted.

Both hierarchies are handled: cgroup v2 (one unified tree; a child of this process's own cgroup,
with the ``memory`` and ``pids`` controllers enabled for it) and cgroup v1 (one tree per
controller, under this process's own cgroup in each). Where neither is writable (no root, a
read-only ``/sys/fs/cgroup``), `SessionCgroup.create` returns None and the sandbox keeps the
rlimits alone; the caller reports that fallback.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from envpipeline.sandbox.base import Limits

#: Where the cgroup file systems are mounted.
CGROUP_ROOT = Path("/sys/fs/cgroup")
#: Name prefix of session cgroups.
PREFIX = "envpipeline-"


def _own_path(controller: str) -> str | None:
    """This process's cgroup path for a v1 controller ("" key for v2), from /proc/self/cgroup."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            if controller in controllers.split(",") or (controller == "" and controllers == ""):
                return path
    return None


def _v2_root() -> Path | None:
    """The unified hierarchy's mount point when it has the memory and pids controllers."""
    for candidate in (CGROUP_ROOT, CGROUP_ROOT / "unified"):
        controllers = candidate / "cgroup.controllers"
        with contextlib.suppress(OSError):
            if {"memory", "pids"} <= set(controllers.read_text().split()):
                return candidate
    return None


def _write(path: Path, value: str) -> None:
    path.write_text(value)


@dataclass
class SessionCgroup:
    """The cgroup folders of one session (one in v2; one per controller in v1)."""

    folders: list[Path]
    version: int

    @classmethod
    def create(cls, name: str, limits: Limits) -> SessionCgroup | None:
        """A fresh cgroup for a session with its memory and pids limits, or None where not possible."""
        for make in (cls._create_v2, cls._create_v1):
            with contextlib.suppress(OSError):
                group = make(f"{PREFIX}{name}", limits)
                if group is not None:
                    return group
        return None

    @classmethod
    def _create_v2(cls, name: str, limits: Limits) -> SessionCgroup | None:
        root = _v2_root()
        own = _own_path("")
        if root is None or own is None:
            return None
        parent = root / own.lstrip("/")
        # fails (EBUSY) where this cgroup holds processes and is not the root: then v1 or nothing
        _write(parent / "cgroup.subtree_control", "+memory +pids")
        folder = parent / name
        folder.mkdir()
        group = cls([folder], 2)
        try:
            _write(folder / "memory.max", str(limits.memory_mb * 2**20))
            with contextlib.suppress(FileNotFoundError):
                _write(folder / "memory.swap.max", "0")
            _write(folder / "pids.max", str(limits.pids))
        except OSError:
            group.remove()
            raise
        return group

    @classmethod
    def _create_v1(cls, name: str, limits: Limits) -> SessionCgroup | None:
        folders = []
        for controller in ("memory", "pids"):
            own = _own_path(controller)
            mount = CGROUP_ROOT / controller
            if own is None or not (mount / "cgroup.procs").exists():
                return None
            folders.append(mount / own.lstrip("/") / name)
        group = cls([], 1)
        try:
            for folder in folders:
                folder.mkdir()
                group.folders.append(folder)
            memory, pids = folders
            _write(memory / "memory.limit_in_bytes", str(limits.memory_mb * 2**20))
            with contextlib.suppress(FileNotFoundError, PermissionError):
                _write(memory / "memory.memsw.limit_in_bytes", str(limits.memory_mb * 2**20))
            _write(pids / "pids.max", str(limits.pids))
        except OSError:
            group.remove()
            raise
        return group

    def procs_files(self) -> list[str]:
        """The ``cgroup.procs`` files a process writes its pid to, to join."""
        return [str(folder / "cgroup.procs") for folder in self.folders]

    def join_self(self) -> None:
        """Move the calling process into the session's cgroup (run in a child before exec)."""
        for folder in self.folders:
            _write(folder / "cgroup.procs", "0")

    def join(self, pid: int) -> None:
        """Move another process into the session's cgroup."""
        for folder in self.folders:
            _write(folder / "cgroup.procs", str(pid))

    def pids(self) -> list[int]:
        """Processes in the cgroup now."""
        found: set[int] = set()
        for folder in self.folders:
            with contextlib.suppress(OSError):
                found |= {int(p) for p in (folder / "cgroup.procs").read_text().split()}
        return sorted(found)

    def memory_peak_mb(self) -> float | None:
        """Highest memory use of the group so far (MiB), where the kernel reports it."""
        name = "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"
        for folder in self.folders:
            with contextlib.suppress(OSError, ValueError):
                return int((folder / name).read_text()) / 2**20
        return None

    def oom_killed(self) -> bool:
        """Whether the kernel killed a process of the group for memory (``oom_kill`` counter)."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        for folder in self.folders:
            with contextlib.suppress(OSError, ValueError):
                lines = (folder / name).read_text().splitlines()
                counters = dict(line.split(maxsplit=1) for line in lines if " " in line)
                return int(counters.get("oom_kill", "0")) > 0
        return False

    def remove(self, timeout: float = 5.0) -> None:
        """Kill what is left in the group and remove its folders."""
        deadline = time.monotonic() + timeout
        while True:
            for pid in self.pids():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            try:
                for folder in self.folders:
                    if folder.exists():
                        folder.rmdir()
                return
            except OSError:
                if time.monotonic() > deadline:
                    return
                time.sleep(0.05)


#: Prefix a host command with this (then `join_argv`'s files) to join a cgroup before it executes:
#: a shell writes its own pid to each ``cgroup.procs`` and then becomes the command, so the command
#: and everything it starts are in the cgroup from their first instruction (no fork race, and no
#: Python code between fork and exec).
JOIN_SCRIPT = (
    'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; exec "$@"'
)


def join_argv(group: SessionCgroup | None, argv: list[str]) -> list[str]:
    """`argv` run inside `group` (unchanged when there is no group)."""
    if group is None:
        return argv
    files = group.procs_files()
    return ["/bin/sh", "-c", JOIN_SCRIPT, "sh", str(len(files)), *files, *argv]


def stale_groups(is_stale: Callable[[str], bool]) -> list[SessionCgroup]:
    """Session cgroups whose name (without the prefix) `is_stale` says belongs to a dead owner."""
    found: dict[str, list[Path]] = {}
    bases: list[Path] = []
    v2 = _v2_root()
    own = _own_path("")
    if v2 is not None and own is not None:
        bases.append(v2 / own.lstrip("/"))
    for controller in ("memory", "pids"):
        own = _own_path(controller)
        if own is not None:
            bases.append(CGROUP_ROOT / controller / own.lstrip("/"))
    for base in bases:
        with contextlib.suppress(OSError):
            for folder in base.iterdir():
                name = folder.name.removeprefix(PREFIX)
                if folder.name.startswith(PREFIX) and folder.is_dir() and is_stale(name):
                    found.setdefault(name, []).append(folder)
    return [
        SessionCgroup(folders, 2 if v2 is not None and folders[0].is_relative_to(v2) else 1)
        for folders in found.values()
    ]
