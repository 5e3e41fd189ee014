"""A Harbor bundle on disk: reading, writing and schema validation (the data: `models.bundle`)."""

from __future__ import annotations

import os
import tomllib
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tomli_w
from pydantic import BaseModel, ValidationError

from envpipeline.errors import ConfigError
from envpipeline.models.bundle import KNOWN_SCHEMAS, Bundle, BundlePaths, TaskConfig


class BundleFormatError(ConfigError):
    """A bundle whose files cannot be read as a Harbor task."""


def _models_in(annotation: object) -> list[type[BaseModel]]:
    """The pydantic models an annotation holds (through Optional, unions and lists)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]


def _split_unknown(
    model: type[BaseModel], data: dict[str, Any], path: str, unknown: dict[str, object]
) -> dict[str, Any]:
    """`data` without the keys `model` does not define (moved into `unknown` by dotted path)."""
    known: dict[str, Any] = {}
    free_form = model.model_config.get("extra") == "allow"
    for key, value in data.items():
        field = model.model_fields.get(key)
        if field is None:
            if free_form:
                known[key] = value
            else:
                unknown[f"{path}{key}"] = value
            continue
        known[key] = _descend(field.annotation, value, f"{path}{key}", unknown)
    return known


def _descend(annotation: object, value: object, path: str, unknown: dict[str, object]) -> object:
    models = _models_in(annotation)
    if not models:
        return value
    if isinstance(value, dict):
        return _split_unknown(models[0], typing.cast(dict[str, Any], value), f"{path}.", unknown)
    if isinstance(value, list):
        return [_descend(annotation, item, f"{path}.{i}", unknown) for i, item in enumerate(value)]
    return value


def _insert(data: dict[str, Any], path: str, value: object) -> None:
    """Put an unknown key back at its dotted path (numeric parts index lists)."""
    *parents, last = path.split(".")
    node: Any = data
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
    node[last] = value


def load_task_config(path: Path) -> TaskConfig:
    """Parse and validate a task.toml; errors name the file and the offending key.

    Keys no known Harbor schema defines are not an error: they are kept in
    `TaskConfig.unknown_keys`, written back by `dump_task_config` and listed by
    `task_config_warnings`.
    """
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as e:
        raise BundleFormatError(f"{path}: missing task.toml") from e
    except IsADirectoryError as e:
        raise BundleFormatError(f"{path}: task.toml is a folder; it must be a TOML file") from e
    except UnicodeDecodeError as e:
        raise BundleFormatError(f"{path}: task.toml is not UTF-8 text (byte {e.start}: {e.reason})") from e
    except tomllib.TOMLDecodeError as e:
        raise BundleFormatError(f"{path}: invalid TOML: {e}") from e
    except RecursionError as e:  # tomllib recurses once per nested array or inline table
        raise BundleFormatError(f"{path}: task.toml is nested too deeply to parse") from e
    unknown: dict[str, object] = {}
    try:
        config = TaskConfig.model_validate(_split_unknown(TaskConfig, data, "", unknown))
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "task.toml"
        raise BundleFormatError(f"{path}: {where}: {first['msg']}") from e
    if config.task is not None and not config.schema_at_least("1.1"):
        raise BundleFormatError(f'{path}: [task] needs schema_version = "1.1" or later')
    config.remember_source(unknown)
    return config


def task_config_warnings(config: TaskConfig) -> list[str]:
    """What a reader should know about a valid task.toml: unknown keys, a newer schema."""
    warnings = []
    if config.effective_schema not in KNOWN_SCHEMAS:
        warnings.append(
            f"schema {config.effective_schema} is newer than the known {KNOWN_SCHEMAS[-1]}; "
            "keys it adds are kept but not checked"
        )
    flags = config.metadata.envpipeline.get("flags")
    if isinstance(flags, list) and flags:
        warnings.append(f"imported with flags: {', '.join(map(str, flags))} (see the import report)")
    if config.unknown_keys:
        warnings.append("unknown keys kept as written (not used): " + ", ".join(sorted(config.unknown_keys)))
    return warnings


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
    """Serialize a TaskConfig as task.toml text.

    A config read from a file is written back key for key (what was set, plus its unknown keys);
    a built one is written in full (None fields and, before 1.1, the verifier env omitted).
    """
    if config.as_read:
        data = config.model_dump(mode="json", exclude_unset=True)
    else:
        data = config.model_dump(mode="json", exclude_none=True)
        if not config.schema_at_least("1.1"):
            data["verifier"].pop("env", None)
    for path, value in config.unknown_keys.items():
        _insert(data, path, value)
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
