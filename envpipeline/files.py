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
