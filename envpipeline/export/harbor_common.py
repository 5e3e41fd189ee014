"""What the Harbor exporters of every family share: folder names, fresh task folders, difficulty labels."""

from __future__ import annotations

import gzip
import io
import re
import shutil
import tarfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from envpipeline.errors import ConfigError

#: The difficulty labels a Harbor task.toml accepts.
HarborDifficulty = Literal["easy", "medium", "hard", "unknown"]
_KNOWN_DIFFICULTIES: dict[str, HarborDifficulty] = {"easy": "easy", "medium": "medium", "hard": "hard"}


def safe_name(name: str) -> str:
    """A folder name made of [A-Za-z0-9_.-] (anything else becomes '-')."""
    cleaned = re.sub(r"[^A-Za-z0-9_.-]", "-", name).strip(".-")
    if not cleaned:
        raise ConfigError(f"cannot make a folder name from {name!r}")
    return cleaned


def harbor_difficulty(metadata: Mapping[str, Any]) -> HarborDifficulty:
    """The task.toml difficulty of a record's metadata (``unknown`` unless easy, medium or hard)."""
    return _KNOWN_DIFFICULTIES.get(str(metadata.get("difficulty", "unknown")), "unknown")


def fresh_folder(out: Path) -> None:
    """Make `out` an empty folder (an existing folder is replaced; a file or link there is an error)."""
    if out.is_symlink() or out.is_file():
        raise ConfigError(f"{out} exists and is not a folder")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)


def reproducible_tar_gz(files: Iterable[tuple[str, Path]]) -> bytes:
    """A ``.tar.gz`` of (archive name, source file) pairs: same bytes for the same files (mtime 0, root-owned)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, source in files:
            data = source.read_bytes()
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as packed:
        packed.write(raw.getvalue())
    return out.getvalue()
