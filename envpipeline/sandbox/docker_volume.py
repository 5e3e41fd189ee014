"""A disk quota for a Docker session: ``/app`` on an ext4 file system of ``storage_mb``.

The engine here keeps containers on fuse-overlayfs, which takes no ``--storage-opt size``: a
container's writable layer is as large as the host's disk. Where this process may (root,
``losetup``, ``mkfs.ext4``), `create_app_volume` makes a sparse ext4 image of exactly
``storage_mb`` (``<temp>/envpipeline-vol-<pid>-<session>.img``), attaches it to a loop device and
registers it as a named volume of Docker's ``local`` driver; the session mounts it at ``/app``
(Docker copies the image's ``/app`` into the empty volume on first mount), so writing past the
quota there fails with "No space left on device" inside the container. ``/logs`` is a
size-limited tmpfs (`tmpfs_args`), charged to the container's memory limit; what an image ships
there is copied in at open (`image_has_files_under_tmpfs`), so checks still see it. Writes elsewhere in
the container's root (``/root``, ``/tmp``, ``/usr``: an image may ship files there, which a tmpfs
would hide) still land in the writable layer, bounded by the host's disk and removed with the
container.

`remove_app_volume` removes the volume, detaches the loop device and deletes the image; volumes
carry the session's owner and expiry labels and the image path, so `envpipeline.sandbox.reaper`
removes those of a killed run. Where a volume cannot be made the session runs without one (the
caller records that ``storage_mb`` is not enforced).
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from envpipeline.errors import SandboxError
from envpipeline.sandbox import ownership
from envpipeline.sandbox.disk_quota import MIN_SIZE_MB
from envpipeline.sandbox.docker_cli import docker

#: Label of a session volume: the path of its disk image (so a later run can delete it).
IMAGE_LABEL = "envpipeline.image"
#: Label that marks a session volume (value: the session id).
VOLUME_LABEL = "envpipeline.volume"
#: Folders mounted as tmpfs of the session's storage_mb (made by the session, so nothing is hidden).
TMPFS_FOLDERS = ("/logs",)


def _run(argv: list[str], timeout: float = 60) -> str:
    done = subprocess.run(argv, capture_output=True, timeout=timeout)
    if done.returncode != 0:
        raise OSError(f"{argv[0]}: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout.decode().strip()


def _docker(args: list[str]) -> subprocess.CompletedProcess[bytes]:
    return docker(args, timeout=60, check=False)


def volume_name(session_id: str) -> str:
    """The Docker volume of a session's ``/app``."""
    return f"envpipeline-{session_id}-app"


def tmpfs_args(storage_mb: int) -> list[str]:
    """``docker run`` arguments mounting `TMPFS_FOLDERS` as tmpfs of `storage_mb`."""
    size = max(storage_mb, MIN_SIZE_MB)
    args: list[str] = []
    for folder in TMPFS_FOLDERS:
        args += ["--tmpfs", f"{folder}:rw,exec,size={size}m,mode=1777"]
    return args


@functools.cache
def image_has_files_under_tmpfs(image: str) -> bool:
    """Whether `image` ships files under a `TMPFS_FOLDERS` folder (checked once per image)."""
    script = " ".join(
        f"find {folder} -mindepth 1 ! -type d 2>/dev/null | head -1;" for folder in TMPFS_FOLDERS
    )
    done = _docker(["run", "--rm", "--network", "none", "--entrypoint", "sh", image, "-c", script])
    return bool(done.stdout.strip())


def _format(image: Path, size_mb: int) -> None:
    """An empty ext4 file system in `image` (no lost+found: Docker copies into empty volumes only)."""
    mkfs = shutil.which("mkfs.ext4") or shutil.which("mke2fs")
    if mkfs is None:
        raise OSError("mkfs.ext4 is not installed")
    with open(image, "xb") as handle:
        handle.truncate(max(size_mb, MIN_SIZE_MB) * 2**20)
    _run([mkfs, "-q", "-F", "-t", "ext4", "-m", "0", "-O", "^has_journal", str(image)])
    with tempfile.TemporaryDirectory(prefix="envpipeline-vol-mnt-") as mount_point:
        _run(["mount", "-o", "loop,nosuid,nodev", str(image), mount_point])
        try:
            (Path(mount_point) / "lost+found").rmdir()
        finally:
            _run(["umount", mount_point])


def create_app_volume(session_id: str, size_mb: int) -> str | None:
    """A named volume of `size_mb` for the session's ``/app``; None where one cannot be made."""
    if os.geteuid() != 0 or shutil.which("losetup") is None or shutil.which("mount") is None:
        return None
    image = Path(tempfile.gettempdir()) / f"envpipeline-vol-{os.getpid()}-{session_id}.img"
    name = volume_name(session_id)
    try:
        _format(image, size_mb)
        device = _run(["losetup", "--find", "--show", str(image)])
        labels = {
            VOLUME_LABEL: session_id,
            IMAGE_LABEL: str(image),
            ownership.OWNER_LABEL: ownership.owner(),
            ownership.EXPIRES_LABEL: ownership.expiry(),
        }
        args = ["volume", "create", "--driver", "local", "--opt", "type=ext4", "--opt", f"device={device}"]
        args += [arg for key, value in labels.items() for arg in ("--label", f"{key}={value}")]
        if _docker([*args, name]).returncode != 0:
            raise OSError(f"docker volume create {name} failed")
    except (OSError, subprocess.TimeoutExpired, SandboxError):
        remove_app_volume(name, image)  # whatever of it was made: volume, loop device, image
        return None
    return name


def _loop_device_of(image: Path) -> str:
    """The loop device an image is attached to ('' when none)."""
    try:
        listed = _run(["losetup", "-j", str(image)])
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return listed.partition(":")[0]


def remove_app_volume(name: str, image: str | Path | None = None) -> None:
    """Remove a session volume, detach its loop device and delete its image (idempotent)."""
    if image is None:
        with contextlib.suppress(OSError, subprocess.TimeoutExpired, SandboxError):
            done = _docker(["volume", "inspect", "--format", f'{{{{index .Labels "{IMAGE_LABEL}"}}}}', name])
            image = done.stdout.decode().strip() if done.returncode == 0 else None
    path = Path(image) if image else None
    device = _loop_device_of(path) if path else ""
    with contextlib.suppress(OSError, subprocess.TimeoutExpired, SandboxError):
        _docker(["volume", "rm", "-f", name])
    if device:
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            subprocess.run(["losetup", "-d", device], capture_output=True, timeout=60)
    if path is not None:
        path.unlink(missing_ok=True)


def stale_volumes() -> list[tuple[str, str]]:
    """(volume, image) of session volumes whose owner is gone or whose expiry passed."""
    template = (
        f'{{{{.Name}}}}\t{{{{.Label "{ownership.OWNER_LABEL}"}}}}\t{{{{.Label "{ownership.EXPIRES_LABEL}"}}}}'
        f'\t{{{{.Label "{IMAGE_LABEL}"}}}}'
    )
    try:
        listed = _docker(["volume", "ls", "--filter", f"label={VOLUME_LABEL}", "--format", template])
    except (OSError, SandboxError):
        return []
    if listed.returncode != 0:
        return []
    listing = listed.stdout.decode(errors="replace")
    return [(fields[0], fields[3] if len(fields) > 3 else "") for fields in ownership.stale_listed(listing)]
