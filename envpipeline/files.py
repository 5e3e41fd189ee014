"""Files that are either whole or absent: written beside the target and renamed over it."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO


def replace_atomically(path: Path, write: Callable[[BinaryIO], object], prefix: str | None = None) -> Path:
    """Call `write` on a temp file in `path`'s folder, flush it to disk and rename it over `path`,
    so a kill leaves the old file (or none), never half of the new one; the temp file is removed
    on any failure. `prefix` names the temp file (default ``.<name>.``)."""
    fd, tmp = tempfile.mkstemp(prefix=prefix or f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_atomically(path: Path, text: str) -> Path:
    """`replace_atomically` for UTF-8 text."""
    return replace_atomically(path, lambda handle: handle.write(text.encode("utf-8")))


class SpooledFile:
    """A file written in chunks to a hidden temp file beside `path` and renamed over it by `commit`,
    so a reader (or a kill) never sees part of it. The temp file is ``<prefix><random>.tmp``."""

    def __init__(self, path: Path, prefix: str) -> None:
        self.path = path
        fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=path.parent)
        self.temp = Path(tmp)
        self._handle: BinaryIO | None = os.fdopen(fd, "wb")

    def write(self, data: bytes) -> None:
        """Append one chunk."""
        if self._handle is None:
            raise ValueError(f"{self.path}: the spool is closed")
        self._handle.write(data)

    def commit(self) -> Path:
        """Flush the temp file to disk and rename it over `path`."""
        if self._handle is None:
            raise ValueError(f"{self.path}: the spool is closed")
        handle, self._handle = self._handle, None
        with handle:
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(self.temp, self.path)
        return self.path

    def discard(self) -> None:
        """Drop the temp file (`path` is left as it was)."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None
        self.temp.unlink(missing_ok=True)
