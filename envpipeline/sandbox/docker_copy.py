"""Copying into a session container through tar streams, where ``docker cp`` cannot.

``docker cp`` writes into the container's root file system, under a tmpfs mount rather than into
it: files uploaded to the ``/logs`` tmpfs (`envpipeline.sandbox.docker_volume`) would vanish. These
helpers pipe a tar archive into ``tar -x`` running inside the container instead.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

from envpipeline.errors import SandboxError
from envpipeline.sandbox.docker_cli import cli_env

#: Unpack a tar stream from stdin into $1 (made first: a command may have removed it).
UNTAR_SCRIPT = 'mkdir -p -- "$1" && exec tar -x --no-same-owner -C "$1" -f -'


def _pipe(producer: list[str], container: str, target: str) -> tuple[int, str]:
    """Run `producer` (which writes a tar archive) into `UNTAR_SCRIPT` in `container`; (status, why)."""
    packer = subprocess.Popen(producer, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=cli_env())
    try:
        unpacked = subprocess.run(
            ["docker", "exec", "-i", container, "sh", "-c", UNTAR_SCRIPT, "untar", target],
            stdin=packer.stdout,
            capture_output=True,
            timeout=300,
            env=cli_env(),
        )
    finally:
        if packer.stdout is not None:
            packer.stdout.close()
        packer.wait(timeout=60)
    status = unpacked.returncode or packer.returncode
    return status, unpacked.stderr.decode(errors="replace").strip() or f"tar exited {packer.returncode}"


def upload_through_tar(container: str, source: Path, target: str) -> None:
    """Stream `source` (a folder's contents, or one file) into `target` inside the container."""
    folder, names = (source, ["."]) if source.is_dir() else (source.parent, [source.name])
    status, why = _pipe(["tar", "-C", str(folder), "-cf", "-", *names], container, target)
    if status != 0:
        raise SandboxError(f"upload of {source} to {target} failed: {why}")


def copy_image_folders(image: str, container: str, folders: Sequence[str]) -> None:
    """Give a session what its image ships under `folders` (tmpfs mounts hide it): the trial's
    checks must see, e.g., a reward file an image pre-seeds. Best effort: a folder the image lacks
    copies nothing."""
    for folder in folders:
        reader = ["docker", "run", "--rm", "--network", "none", "--entrypoint", "tar", image]
        _pipe([*reader, "-C", folder, "-cf", "-", "."], container, folder)
