"""Copying host files into a session container through the engine's archive API (no CLI process).

`upload` packs a folder's contents (or one file) into an in-memory tar, every entry owned by root,
and puts it with ``PUT /containers/{id}/archive`` (what ``docker cp`` does). That API writes into
the container's root file system, under a tmpfs mount rather than into it: files uploaded to the
``/logs`` tmpfs (`envpipeline.sandbox.docker_volume`) would vanish. Those are put into a staging
folder of the root file system first, then moved into place by one exec.
"""

from __future__ import annotations

import io
import posixpath
import tarfile
import uuid
from collections.abc import Sequence
from pathlib import Path

from envpipeline.errors import MissingExtraError, SandboxError

try:
    import docker.errors
except ImportError as missing:
    raise MissingExtraError("sandbox", missing, needed_by=__name__) from missing
from envpipeline.sandbox import docker_engine

#: Moves a staging folder's contents ($1) into $2 (made first: a command may have removed it).
UNSTAGE_SCRIPT = 'mkdir -p -- "$2" && cp -a -- "$1/." "$2/" ; s=$?; rm -rf -- "$1"; exit $s'
#: Where staged uploads wait in the container's root file system.
STAGING_ROOT = "/tmp"


def _as_root(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info


def pack(source: Path) -> bytes:
    """A tar of `source`'s contents (a folder) or of `source` itself (a file), owned by root."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        if source.is_dir():
            for child in sorted(source.iterdir()):
                archive.add(child, arcname=child.name, filter=_as_root)
        else:
            archive.add(source, arcname=source.name, filter=_as_root)
    return buffer.getvalue()


def exec_checked(container: str, argv: Sequence[str], what: str, timeout: float = 120.0) -> bytes:
    """Run an internal command in the container; SandboxError (with its stderr) if it fails."""
    ran = docker_engine.run(container, argv, wait_sec=timeout, limit=1 << 20)
    if ran.exit_code != 0:
        why = ran.stderr.decode(errors="replace").strip() or f"exit {ran.exit_code}"
        raise SandboxError(f"{what} failed: {why}")
    return ran.stdout


def put(container: str, archive: bytes, target: str) -> None:
    """Unpack `archive` into the folder `target` (made first if a command removed it)."""
    control = docker_engine.engine()
    try:
        control.put_archive(container, target, archive)
    except docker.errors.NotFound:  # a command removed the folder: recreate it once
        exec_checked(container, ["mkdir", "-p", "--", target], f"mkdir {target}")
        docker_engine.call(lambda: control.put_archive(container, target, archive), f"upload to {target}")
    except docker_engine.ENGINE_ERRORS as e:
        raise SandboxError(f"upload to {target} failed: {e}") from e


def put_staged(container: str, archive: bytes, target: str) -> None:
    """Unpack `archive` into `target` through a staging folder (for targets under a tmpfs)."""
    staging = posixpath.join(STAGING_ROOT, f".envpipeline-upload-{uuid.uuid4().hex[:12]}")
    exec_checked(container, ["mkdir", "-p", "--", staging], f"mkdir {staging}")
    put(container, archive, staging)
    exec_checked(container, ["sh", "-c", UNSTAGE_SCRIPT, "unstage", staging, target], f"upload to {target}")


def copy_image_folders(image: str, container: str, folders: Sequence[str]) -> None:
    """Give a session what its image ships under `folders` (tmpfs mounts hide it): the trial's
    checks must see, e.g., a reward file an image pre-seeds. Best effort: a folder the image lacks
    copies nothing."""
    control = docker_engine.engine()
    reader = docker_engine.call(
        lambda: control.create_container(image, command=["true"], network_disabled=True), "docker create"
    )["Id"]
    try:
        for folder in folders:
            try:
                chunks, _ = control.get_archive(reader, folder)
            except docker.errors.NotFound:
                continue
            archive = b"".join(chunks)
            # the archive holds the folder itself (``logs/...``): stage it, then move its contents
            staging = posixpath.join(STAGING_ROOT, f".envpipeline-seed-{uuid.uuid4().hex[:12]}")
            exec_checked(container, ["mkdir", "-p", "--", staging], f"mkdir {staging}")
            put(container, archive, staging)
            inner = posixpath.join(staging, posixpath.basename(folder.rstrip("/")))
            exec_checked(
                container, ["sh", "-c", UNSTAGE_SCRIPT, "unstage", inner, folder], f"copy of image {folder}"
            )
            exec_checked(container, ["rm", "-rf", "--", staging], f"rm {staging}")
    finally:
        docker_engine.call(lambda: control.remove_container(reader, v=True, force=True), "docker rm")
