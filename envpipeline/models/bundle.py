"""Harbor task bundles: typed paths, the `task.toml` schema (1.0 and 1.1) and a bundle read from disk."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

#: A generated task's difficulty preset.
Difficulty = Literal["easy", "medium", "hard"]
#: The difficulty a task.toml records (`unknown` for imported tasks that do not say).
MetadataDifficulty = Literal["easy", "medium", "hard", "unknown"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Author(_Section):
    name: Annotated[str, Field(description="author name")]
    email: Annotated[str, Field(description="author email")] = ""


class TaskSection(_Section):
    """Schema 1.1 `[task]`."""

    name: Annotated[str, Field(description="<org>/<name>", pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")]
    description: Annotated[str, Field(description="one-line summary")] = ""
    authors: Annotated[list[Author], Field(description="authors")] = []
    keywords: Annotated[list[str], Field(description="search keywords")] = []


class MetadataSection(_Section):
    author_name: str = ""
    author_email: str = ""
    difficulty: MetadataDifficulty = "unknown"
    category: str = ""
    tags: list[str] = []
    #: envpipeline provenance (family, seed, knobs, variant); ignored by other harnesses
    envpipeline: dict[str, object] = {}


class VerifierSection(_Section):
    timeout_sec: Annotated[float, Field(gt=0, description="verifier wall timeout")] = 120.0
    env: Annotated[dict[str, str], Field(description="environment for tests (1.1)")] = {}


class AgentSection(_Section):
    timeout_sec: Annotated[float, Field(gt=0, description="agent wall timeout")] = 600.0


class EnvironmentSection(_Section):
    build_timeout_sec: Annotated[float, Field(gt=0)] = 600.0
    cpus: Annotated[float, Field(gt=0)] = 1.0
    memory_mb: Annotated[int, Field(gt=0)] = 1024
    storage_mb: Annotated[int, Field(gt=0)] = 2048
    network_mode: Literal["no-network", "bridge", "host"] | None = None


class TaskConfig(_Section):
    """The whole `task.toml`; `schema_version = "1.1"` enables `[task]` and verifier env."""

    version: Literal["1.0", "1.1"] = "1.0"
    schema_version: Literal["1.0", "1.1"] | None = None
    task: TaskSection | None = None
    metadata: MetadataSection = MetadataSection()
    verifier: VerifierSection = VerifierSection()
    agent: AgentSection = AgentSection()
    environment: EnvironmentSection = EnvironmentSection()

    @property
    def effective_schema(self) -> str:
        """The schema this file declares (1.1 via `schema_version`, else `version`)."""
        return self.schema_version or self.version


@dataclass(frozen=True)
class BundlePaths:
    """Where each part of a bundle lives.

    <bundle>/
      task.toml                 metadata and limits (never shown to the agent)
      instruction.md            the exact prompt
      environment/Dockerfile    the agent's image (context: environment/)
      environment/app/...       fixtures copied to /app (our convention)
      solution/solve.sh         what the oracle runs (uploaded only for the oracle)
      tests/test.sh             verifier entry point; writes /logs/verifier/reward.txt|json
    """

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
    """A bundle read from disk (see `envpipeline.terminal.bundle.read_bundle`)."""

    paths: BundlePaths
    config: TaskConfig
    instruction: str

    @property
    def name(self) -> str:
        """The task name: `[task].name` (1.1) or the folder name."""
        return self.config.task.name if self.config.task else self.paths.root.name
