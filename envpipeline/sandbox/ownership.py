"""Who owns a sandbox session: the labels and names that let a later run tell whose it is.

Docker containers carry ``envpipeline.owner`` (``<host>:<pid>``) and ``envpipeline.expires``
(epoch seconds); local temp roots, and the session cgroups named after them, start with
``envpipeline-root-<pid>-``. `envpipeline.sandbox.reaper` removes the sessions of owners that are
gone; the backends only stamp them (so this module depends on nothing of theirs).
"""

from __future__ import annotations

import os
import re
import socket
import time

from envpipeline.processes import process_alive

#: Docker labels of a session container (the session label itself lives in `sandbox.docker`).
OWNER_LABEL = "envpipeline.owner"
EXPIRES_LABEL = "envpipeline.expires"
#: A session is stale after this long even when its owner still runs (no trial runs for 6 hours).
SESSION_MAX_AGE_SEC = 6 * 3600
#: Local temp roots: ``envpipeline-root-<owner pid>-<random>``.
LOCAL_ROOT_PREFIX = "envpipeline-root-"
LOCAL_ROOT = re.compile(r"^envpipeline-root-(?P<pid>[0-9]+)-")


def owner() -> str:
    """This process as a session owner: ``<host>:<pid>``."""
    return f"{socket.gethostname()}:{os.getpid()}"


def local_root_prefix() -> str:
    """The temp-folder prefix of this process's local session roots."""
    return f"{LOCAL_ROOT_PREFIX}{os.getpid()}-"


def expiry() -> str:
    """The expiry label value of a session opened now."""
    return str(int(time.time()) + SESSION_MAX_AGE_SEC)


def owner_gone(value: str, expires: str, now: float) -> bool:
    """Whether a container with these label values is stale (owner dead on this host, or expired)."""
    host, _, pid = value.rpartition(":")
    if expires.isdigit() and int(expires) < now:
        return True
    return host == socket.gethostname() and pid.isdigit() and not process_alive(int(pid))


def stale_listed(listing: str, now: float | None = None) -> list[list[str]]:
    """The stale entries of a ``docker ... --format`` listing whose lines are ``name<TAB>owner<TAB>
    expires[<TAB>more...]``: each as its fields (name first)."""
    moment = time.time() if now is None else now
    stale = []
    for line in listing.splitlines():
        fields = line.split("\t")
        fields += [""] * (3 - len(fields))
        if fields[0] and owner_gone(fields[1], fields[2], moment):
            stale.append(fields)
    return stale
