"""C allocator settings for a process held to its peak memory (`envpipeline compose`, issue #16)."""

from __future__ import annotations

import ctypes
import sys

#: glibc's `mallopt` parameter for the size from which allocations are served by their own mmap.
M_MMAP_THRESHOLD = -3
#: glibc's default threshold, kept fixed.
LARGE_BLOCK = 128 * 1024


def _glibc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:  # another C library (musl): its own rules apply
        return None
    return libc if hasattr(libc, "mallopt") else None


def release_large_blocks_on_free() -> bool:
    """Have glibc map every block of 128 KiB or more on its own, so freeing it returns it to the system.

    glibc raises that threshold each time such a block is freed (up to 32 MiB), after which the
    large buffers Arrow and the JSON columns use come from the heap, and the heap keeps what small
    objects allocated beside them pin: publishing a 5,000-task run left ~10 MB resident that way.
    Setting the threshold fixes it. Returns whether it was set (False where glibc is not the C
    library).
    """
    libc = _glibc()
    return bool(libc is not None and libc.mallopt(M_MMAP_THRESHOLD, LARGE_BLOCK))
