"""Whether the process that left something behind is still running (pure, no dependencies)."""

from __future__ import annotations

import os


def process_alive(pid: int) -> bool:
    """Whether a process with this pid exists here (a pid reused since counts as alive: the safe
    side, since whatever it left is then kept, never removed under a live writer)."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return False
    except PermissionError:
        return True
    return True


def process_running(pid: int) -> bool:
    """Whether a process with this pid exists and has not exited: an exited child that its parent
    has not reaped yet (a zombie) keeps its pid, but runs nothing."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return process_alive(pid)  # gone, or no /proc here
