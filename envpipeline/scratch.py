"""Scratch folders for short-lived work, in memory where the machine has a tmpfs.

World gating copies a world day for every rollout, probe and red-team policy, and each SQLite
write transaction on a copy creates and deletes a journal file. On a disk file system those file
creations are costly: on ext4, allocating an inode next to many recently deleted ones scans the
inode bitmap (`recently_deleted` in the kernel), which was about a quarter of world gating's CPU
time (perf, 2026-12-05). The same work in a tmpfs folder costs a fraction of that.

`scratch_folder` is a `tempfile.TemporaryDirectory` under `scratch_root()`: ``/dev/shm`` when it
is a writable tmpfs with room to spare, else the system's temporary folder. Setting ``TMPDIR``
keeps the system's choice (the user has picked where temporary files go). Only work that is
removed when it ends belongs here. A process killed mid-work leaves its folder behind, and in a
tmpfs that holds memory until the machine restarts: every folder's name carries its process id
(``envpipeline-<prefix><pid>-<random>``), and making a folder in memory first removes the folders
of processes that no longer run.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

from envpipeline.processes import process_running

#: A memory-backed folder most Linux machines mount.
MEMORY_FOLDER = Path("/dev/shm")
#: Free space a memory folder must have to be used (a container's /dev/shm is often 64 MiB).
MIN_FREE_BYTES = 512 * 1024**2
#: Every scratch folder's name starts with this, then the caller's prefix and the process id.
MARK = "envpipeline-"
_OWNED = re.compile(rf"{re.escape(MARK)}.*?(\d+)-[^-]+")


def _is_tmpfs(folder: Path, mounts: Path = Path("/proc/self/mounts")) -> bool:
    """Whether `folder` is the mount point of a tmpfs (per the process's mount table)."""
    try:
        lines = mounts.read_text(encoding="utf-8").splitlines()
    except OSError:
        return False
    return any(
        len(fields) >= 3 and fields[1] == str(folder) and fields[2] == "tmpfs"
        for fields in (line.split() for line in lines)
    )


def scratch_root(folder: Path = MEMORY_FOLDER, min_free: int = MIN_FREE_BYTES) -> Path | None:
    """Where scratch folders go: `folder` when it is a writable tmpfs with `min_free` bytes free
    and ``TMPDIR`` is not set; None for the system's temporary folder."""
    if os.environ.get("TMPDIR"):
        return None
    if not (folder.is_dir() and os.access(folder, os.W_OK | os.X_OK) and _is_tmpfs(folder)):
        return None
    try:
        stat = os.statvfs(folder)
    except OSError:
        return None
    return folder if stat.f_bavail * stat.f_frsize >= min_free else None


def scratch_folder(prefix: str) -> tempfile.TemporaryDirectory[str]:
    """A temporary folder under `scratch_root()` (removed when the ``with`` block ends)."""
    root = _swept(scratch_root())
    return tempfile.TemporaryDirectory(prefix=_owned(prefix), dir=root)


def scratch_mkdtemp(prefix: str) -> Path:
    """A new folder under `scratch_root()` that the caller removes (`tempfile.mkdtemp`)."""
    root = _swept(scratch_root())
    return Path(tempfile.mkdtemp(prefix=_owned(prefix), dir=root))


def _owned(prefix: str) -> str:
    """The start of a scratch folder's name: the mark, `prefix` and this process's id."""
    return f"{MARK}{prefix.removeprefix(MARK)}{os.getpid()}-"


def _swept(root: Path | None) -> Path | None:
    """`root`, after removing the scratch folders in it whose process no longer runs (memory
    folders only: the system's temporary folder has its own clean-up)."""
    if root is None:
        return None
    for entry in os.scandir(root):
        match = _OWNED.fullmatch(entry.name)
        if match and entry.is_dir(follow_symlinks=False) and not process_running(int(match[1])):
            shutil.rmtree(entry.path, ignore_errors=True)
    return root
