"""A Harbor bundle on disk: reading, writing and schema validation (the data: `models.bundle`)."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path

import tomli_w
from pydantic import ValidationError

from envpipeline.errors import ConfigError
from envpipeline.models.bundle import Bundle, BundlePaths, TaskConfig


class BundleFormatError(ConfigError):
    """A bundle whose files cannot be read as a Harbor task."""


def load_task_config(path: Path) -> TaskConfig:
    """Parse and validate a task.toml; errors name the file and the offending key."""
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError as e:
        raise BundleFormatError(f"{path}: missing task.toml") from e
    except tomllib.TOMLDecodeError as e:
        raise BundleFormatError(f"{path}: invalid TOML: {e}") from e
    try:
        config = TaskConfig.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise BundleFormatError(f"{path}: {where}: {first['msg']}") from e
    if config.task is not None and config.effective_schema != "1.1":
        raise BundleFormatError(f'{path}: [task] needs schema_version = "1.1"')
    return config


def read_bundle(root: str | Path) -> Bundle:
    """Read a bundle directory (task.toml + instruction.md)."""
    paths = BundlePaths(Path(root))
    if not paths.root.is_dir():
        raise BundleFormatError(f"{paths.root}: not a directory")
    config = load_task_config(paths.task_toml)
    try:
        instruction = paths.instruction.read_text()
    except FileNotFoundError as e:
        raise BundleFormatError(f"{paths.root}: missing instruction.md") from e
    return Bundle(paths, config, instruction)


def dump_task_config(config: TaskConfig) -> str:
    """Serialize a TaskConfig as task.toml text (None fields and empty 1.1 extras omitted)."""
    data = config.model_dump(mode="json", exclude_none=True)
    if config.effective_schema != "1.1":
        data["verifier"].pop("env", None)
    return tomli_w.dumps(data)


def write_files(
    root: Path, files: Mapping[str, str | bytes], executable: set[str] | frozenset[str] = frozenset()
) -> None:
    """Write `files` (relative path -> content) under `root`; paths must stay inside it."""
    root = root.resolve()
    for relative, content in sorted(files.items()):
        target = (root / relative).resolve()
        if root not in target.parents:
            raise BundleFormatError(f"refusing to write outside the bundle: {relative}")
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content)
        os.chmod(target, 0o755 if relative in executable or relative.endswith(".sh") else 0o644)
