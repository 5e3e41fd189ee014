"""A disk quota for a local session: its folders live on a file system of ``storage_mb``.

Rlimits cap one file (``file_size_mb``), not a session: 1.5 GB of small files fit in a bundle whose
``storage_mb`` is 512, on the host's own disk. Where this process may (root, a loop device,
``mkfs.ext4``), `mount_volume` puts a session's temp root on an ext4 file system of exactly
``storage_mb``, made in a sparse image file beside it (``<root>.img``) and loop-mounted over the
root: ``/app``, ``/logs``, ``/tests``, ``/solution`` and ``/tmp`` of the sandbox all live there, so
writing past the quota fails with "No space left on device" inside the sandbox and the host's disk
is untouched. `release` unmounts (lazily: the sandbox's own bind mounts may still hold it until its
namespace is gone) and removes the image; the loop device is freed with it (``mount -o loop``
sets autoclear). Where a volume cannot be made, the session runs on the host's temp folder with
the per-file limit alone (`mount_volume` returns False; the caller records that).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from pathlib import Path

#: Suffix of a session's disk image, beside its temp root.
IMAGE_SUFFIX = ".img"
#: Smallest volume made (ext4 needs a few MiB for itself).
MIN_SIZE_MB = 16


def image_path(root: Path) -> Path:
    """Where the disk image of the session rooted at `root` lives."""
    return root.with_name(root.name + IMAGE_SUFFIX)


def mount_volume(root: Path, size_mb: int) -> bool:
    """Mount an ext4 file system of `size_mb` over the empty folder `root`; False where not possible."""
    mkfs = shutil.which("mkfs.ext4") or shutil.which("mke2fs")
    if os.geteuid() != 0 or mkfs is None or shutil.which("mount") is None:
        return False
    image = image_path(root)
    try:
        with open(image, "xb") as handle:
            handle.truncate(max(size_mb, MIN_SIZE_MB) * 2**20)
        made = subprocess.run(
            [mkfs, "-q", "-F", "-t", "ext4", "-m", "0", "-O", "^has_journal", str(image)],
            capture_output=True,
            timeout=60,
        )
        if made.returncode != 0:
            raise OSError(made.stderr.decode(errors="replace"))
        mounted = subprocess.run(
            ["mount", "-o", "loop,nosuid,nodev", str(image), str(root)], capture_output=True, timeout=60
        )
        if mounted.returncode != 0:
            raise OSError(mounted.stderr.decode(errors="replace"))
    except (OSError, subprocess.TimeoutExpired):
        image.unlink(missing_ok=True)
        return False
    with contextlib.suppress(OSError):
        (root / "lost+found").rmdir()
    return True


def release(root: Path) -> None:
    """Unmount a session's volume (if `root` is one) and remove its image."""
    if os.path.ismount(root):
        subprocess.run(["umount", "-l", str(root)], capture_output=True, timeout=60)
    image_path(root).unlink(missing_ok=True)


def used_mb(root: Path) -> float | None:
    """Space used on a session's volume (MiB), None when it has none."""
    if not os.path.ismount(root):
        return None
    stats = os.statvfs(root)
    return (stats.f_blocks - stats.f_bfree) * stats.f_frsize / 2**20
