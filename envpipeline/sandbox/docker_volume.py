"""A disk quota for a Docker session: ``/app`` on an ext4 file system of ``storage_mb``.

The engine here keeps containers on fuse-overlayfs, which takes no ``--storage-opt size``: a
container's writable layer is as large as the host's disk. Where this process may (root,
``losetup``, ``mkfs.ext4``), `create_app_volume` makes a sparse ext4 image of exactly
``storage_mb`` (``<temp>/envpipeline-vol-<pid>-<session>.img``), attaches it to a loop device and
registers it as a named volume of Docker's ``local`` driver; the session mounts it at ``/app``
(Docker copies the image's ``/app`` into the empty volume on first mount), so writing past the
quota there fails with "No space left on device" inside the container. ``/logs`` is a
size-limited tmpfs (`tmpfs_mounts`), charged to the container's memory limit; what an image ships
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
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from envpipeline.errors import SandboxError
from envpipeline.processes import process_alive
from envpipeline.sandbox import ownership
from envpipeline.sandbox.disk_quota import MIN_SIZE_MB

#: Label of a session volume: the path of its disk image (so a later run can delete it).
IMAGE_LABEL = "envpipeline.image"
#: Label that marks a session volume (value: the session id).
VOLUME_LABEL = "envpipeline.volume"
#: A session volume's disk image in the temp folder (`create_app_volume`).
VOLUME_IMAGE = re.compile(r"^envpipeline-vol-(?P<pid>[0-9]+)-(?P<session>[0-9a-f]+)\.img$")
#: Folders mounted as tmpfs of the session's storage_mb (made by the session, so nothing is hidden).
TMPFS_FOLDERS = ("/logs",)


def _run(argv: list[str], timeout: float = 60) -> str:
    done = subprocess.run(argv, capture_output=True, timeout=timeout)
    if done.returncode != 0:
        raise OSError(f"{argv[0]}: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout.decode().strip()


def volume_name(session_id: str) -> str:
    """The Docker volume of a session's ``/app``."""
    return f"envpipeline-{session_id}-app"


def tmpfs_mounts(storage_mb: int) -> dict[str, str]:
    """The engine's ``Tmpfs`` host setting mounting `TMPFS_FOLDERS` as tmpfs of `storage_mb`."""
    size = max(storage_mb, MIN_SIZE_MB)
    return {folder: f"rw,exec,size={size}m,mode=1777" for folder in TMPFS_FOLDERS}


@functools.cache
def image_has_files_under_tmpfs(image: str) -> bool:
    """Whether `image` ships files under a `TMPFS_FOLDERS` folder (checked once per image)."""
    from envpipeline.sandbox import docker_engine  # the SDK only where Docker is used

    script = " ".join(
        f"find {folder} -mindepth 1 ! -type d 2>/dev/null | head -1;" for folder in TMPFS_FOLDERS
    )
    control = docker_engine.engine()
    probe = docker_engine.call(
        lambda: control.create_container(image, entrypoint=["sh", "-c", script], network_disabled=True),
        "docker create",
    )["Id"]
    try:
        docker_engine.call(lambda: control.start(probe), "docker start")
        docker_engine.call(lambda: control.wait(probe, timeout=60), "docker wait")
        listed = docker_engine.call(lambda: control.logs(probe, stdout=True, stderr=False), "docker logs")
    finally:
        with contextlib.suppress(SandboxError, *docker_engine.ENGINE_ERRORS):
            control.remove_container(probe, v=True, force=True)
    return bool(listed.strip())


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
    from envpipeline.sandbox import docker_engine  # the SDK only where Docker is used

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
        options = {"type": "ext4", "device": device}
        docker_engine.call(
            lambda: docker_engine.engine().create_volume(name, "local", options, labels),
            f"docker volume create {name}",
        )
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
    from envpipeline.sandbox import docker_engine  # the SDK only where Docker is used

    if image is None:
        with contextlib.suppress(SandboxError):
            found = docker_engine.call(lambda: docker_engine.engine().inspect_volume(name))
            image = (found.get("Labels") or {}).get(IMAGE_LABEL) or None
    path = Path(image) if image else None
    device = _loop_device_of(path) if path else ""
    with contextlib.suppress(SandboxError):
        docker_engine.call(lambda: docker_engine.engine().remove_volume(name, force=True))
    if device:
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            subprocess.run(["losetup", "-d", device], capture_output=True, timeout=60)
    if path is not None:
        path.unlink(missing_ok=True)


def stale_volumes() -> list[tuple[str, str]]:
    """(volume, image) of session volumes whose owner is gone or whose expiry passed."""
    from envpipeline.sandbox import docker_engine  # the SDK only where Docker is used

    try:
        found = docker_engine.call(lambda: docker_engine.engine().volumes(filters={"label": VOLUME_LABEL}))
    except SandboxError:
        return []
    rows = []
    for volume in found.get("Volumes") or []:
        labels = volume.get("Labels") or {}
        fields = [
            volume["Name"],
            *(labels.get(k, "") for k in (ownership.OWNER_LABEL, ownership.EXPIRES_LABEL)),
        ]
        rows.append("\t".join([*fields, labels.get(IMAGE_LABEL, "")]))
    listing = "\n".join(rows)
    return [(fields[0], fields[3] if len(fields) > 3 else "") for fields in ownership.stale_listed(listing)]


def orphan_images(temp: Path | None = None) -> list[tuple[str, Path]]:
    """(volume, image) of the disk images in the temp folder whose owner process is gone.

    A process killed while it made a volume (a warm spare is made in the background at any time)
    leaves an image, maybe attached to a loop device, that no labelled volume names yet.
    """
    folder = temp or Path(tempfile.gettempdir())
    orphans = []
    with contextlib.suppress(OSError):
        for path in folder.iterdir():
            match = VOLUME_IMAGE.match(path.name)
            if match and not path.is_symlink() and not process_alive(int(match["pid"])):
                orphans.append((volume_name(match["session"]), path))
    return sorted(orphans)
