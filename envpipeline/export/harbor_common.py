"""What the Harbor exporters of every family share: folder names, fresh task folders, difficulty labels."""

from __future__ import annotations

import re
import shutil
from collections.abc import Mapping
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
