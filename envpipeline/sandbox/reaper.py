"""Reaping what killed processes left behind: session containers and local temp roots.

Every session is tagged with its owner: Docker containers (and their ``/app`` volumes) carry the labels ``envpipeline.session``,
``envpipeline.owner`` (``<host>:<pid>``) and ``envpipeline.expires`` (epoch seconds), and local
temp roots (and the sessions' cgroups, named after them) are ``envpipeline-root-<pid>-...``. A session whose owner
process is gone (on this host), or that outlived its expiry, is stale: `reap_stale_sessions` removes
it. Entry points call `reap_once` before their first sandbox opens, so a run killed with SIGKILL is
cleaned up by the next run; `exit_on_sigterm` turns SIGTERM into a normal exit so the sessions'
finalizers remove their own containers and roots on the way out.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import sys
import tempfile
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from envpipeline.processes import process_alive
from envpipeline.sandbox import cgroups, disk_quota, docker_volume
from envpipeline.sandbox.ownership import EXPIRES_LABEL, LOCAL_ROOT, OWNER_LABEL, stale_listed


@dataclass
class Reaped:
    """What one reap removed."""

    containers: list[str] = field(default_factory=list)
    volumes: list[str] = field(default_factory=list)
    roots: list[Path] = field(default_factory=list)
    cgroups: list[Path] = field(default_factory=list)


def stale_local_roots(temp: Path | None = None) -> list[Path]:
    """Local session roots in the temp folder whose owner process is gone (a disk image whose root
    is already gone is removed on the way)."""
    folder = temp or Path(tempfile.gettempdir())
    stale = []
    with contextlib.suppress(OSError):
        for path in folder.iterdir():
            match = LOCAL_ROOT.match(path.name)
            if match is None or path.is_symlink() or process_alive(int(match["pid"])):
                continue
            if path.is_dir():
                stale.append(path)
            elif path.name.endswith(disk_quota.IMAGE_SUFFIX) and not path.with_suffix("").exists():
                path.unlink(missing_ok=True)  # the disk image of a root already gone
    return sorted(stale)


def stale_containers() -> list[str]:
    """Names of session containers whose owner is gone or whose expiry passed ([] without Docker)."""
    from envpipeline.errors import SandboxError
    from envpipeline.sandbox.docker import SESSION_LABEL, docker

    template = f'{{{{.Names}}}}\t{{{{.Label "{OWNER_LABEL}"}}}}\t{{{{.Label "{EXPIRES_LABEL}"}}}}'
    try:
        listed = docker(
            ["ps", "-a", "--filter", f"label={SESSION_LABEL}", "--format", template], timeout=30, check=False
        )
    except SandboxError:
        return []
    if listed.returncode != 0:
        return []
    return [fields[0] for fields in stale_listed(listed.stdout.decode(errors="replace"))]


def reap_stale_sessions(*, docker: bool = True, temp: Path | None = None) -> Reaped:
    """Remove stale session containers (when `docker`) and stale local temp roots."""
    reaped = Reaped()
    if docker and shutil.which("docker") and _docker_backend_importable():
        from envpipeline.errors import SandboxError
        from envpipeline.sandbox.docker import docker as docker_cli

        reaped.containers = stale_containers()
        if reaped.containers:
            with contextlib.suppress(SandboxError):
                docker_cli(["rm", "-f", "-v", *reaped.containers], timeout=120, check=False)
        for volume, image in docker_volume.stale_volumes():  # after their containers are gone
            docker_volume.remove_app_volume(volume, image or None)
            reaped.volumes.append(volume)
        for volume, image_path in docker_volume.orphan_images():  # killed while making a volume
            docker_volume.remove_app_volume(volume, image_path)
            reaped.volumes.append(volume)
    for root in stale_local_roots(temp):
        disk_quota.release(root)
        shutil.rmtree(root, ignore_errors=True)
        if not root.exists():
            reaped.roots.append(root)
    for group in cgroups.stale_groups(_owner_dead):
        group.remove()
        reaped.cgroups += [folder for folder in group.folders if not folder.exists()]
    return reaped


def _docker_backend_importable() -> bool:
    """Without the docker SDK (the 'sandbox' extra) the Docker backend cannot run here: nothing of
    ours to reap."""
    try:
        import envpipeline.sandbox.docker  # noqa: F401
    except ImportError:
        return False
    return True


def _owner_dead(session_name: str) -> bool:
    """Whether a local session named like its temp root belongs to a process that is gone."""
    match = LOCAL_ROOT.match(session_name)
    return match is not None and not process_alive(int(match["pid"]))


@cache
def reap_once() -> Reaped:
    """`reap_stale_sessions`, once per process (entry points call it before opening sandboxes)."""
    return reap_stale_sessions()


def exit_on_sigterm() -> None:
    """Make SIGTERM a normal exit (status 143) so finalizers remove this process's sessions."""
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
