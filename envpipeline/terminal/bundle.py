"""A Harbor bundle on disk: typed paths, reading, writing and schema validation.

<bundle>/
  task.toml                 metadata and limits (never shown to the agent)
  instruction.md            the exact prompt
  environment/Dockerfile    the agent's image (context: environment/)
  environment/app/...       fixtures copied to /app (our convention)
  solution/solve.sh         what the oracle runs (uploaded only for the oracle)
  tests/test.sh             verifier entry point; writes /logs/verifier/reward.txt|json
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

import tomli_w
from pydantic import ValidationError

from envpipeline.errors import ConfigError
from envpipeline.models.bundle import TaskConfig


class BundleFormatError(ConfigError):
    """A bundle whose files cannot be read as a Harbor task."""


@dataclass(frozen=True)
class BundlePaths:
    """Where each part of a bundle lives."""

    root: Path

    @property
    def task_toml(self) -> Path:
        return self.root / "task.toml"

    @property
    def instruction(self) -> Path:
        return self.root / "instruction.md"

    @property
    def environment(self) -> Path:
        return self.root / "environment"

    @property
    def dockerfile(self) -> Path:
        return self.environment / "Dockerfile"

    @property
    def solution(self) -> Path:
        return self.root / "solution"

    @property
    def solve_sh(self) -> Path:
        return self.solution / "solve.sh"

    @property
    def tests(self) -> Path:
        return self.root / "tests"

    @property
    def test_sh(self) -> Path:
        return self.tests / "test.sh"


@dataclass(frozen=True)
class Bundle:
    """A bundle read from disk."""

    paths: BundlePaths
    config: TaskConfig
    instruction: str

    @property
    def name(self) -> str:
        """The task name: `[task].name` (1.1) or the folder name."""
        return self.config.task.name if self.config.task else self.paths.root.name


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
    root: Path, files: dict[str, str | bytes], executable: set[str] | frozenset[str] = frozenset()
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
