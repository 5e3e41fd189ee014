"""Harbor task bundles: typed paths, the `task.toml` schema (Harbor 1.0 to 1.4) and a bundle read from disk."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

#: A generated task's difficulty preset.
Difficulty = Literal["easy", "medium", "hard"]
#: The difficulty a task.toml records (`unknown` for imported tasks that do not say).
MetadataDifficulty = Literal["easy", "medium", "hard", "unknown"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


#: Schema versions whose keys this model knows (Harbor's `schema_version`; 1.0 files say `version`).
KNOWN_SCHEMAS = ("1.0", "1.1", "1.2", "1.3", "1.4")
#: Harbor's network policies, plus the Docker names older envpipeline bundles wrote.
NetworkMode = Literal["no-network", "public", "allowlist", "bridge", "host"]
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([GMK])B?\s*$", re.IGNORECASE)


def size_to_mb(size: str) -> int:
    """Harbor's `memory = "4G"` / `storage = "512M"` as megabytes (ValueError when malformed)."""
    match = _SIZE.match(size)
    if not match:
        raise ValueError(f"invalid size {size!r}: expected a number with G, M or K, like '4G' or '512M'")
    value, unit = float(match.group(1)), match.group(2).upper()
    return int(value * 1024) if unit == "G" else int(value) if unit == "M" else int(value / 1024)


class Author(_Section):
    name: Annotated[str, Field(description="author name")]
    email: Annotated[str | None, Field(description="author email")] = ""


class TaskSection(_Section):
    """Schema 1.1+ `[task]`: the package name in Harbor's registry."""

    name: Annotated[str, Field(description="<org>/<name>", pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")]
    version: Annotated[str | None, Field(min_length=1, description="task package version")] = None
    description: Annotated[str, Field(description="one-line summary")] = ""
    authors: Annotated[list[Author], Field(description="authors")] = []
    keywords: Annotated[list[str], Field(description="search keywords")] = []


class MetadataSection(_Section):
    """`[metadata]`: free-form in Harbor (any key is kept); the typed keys are the ones we read."""

    model_config = ConfigDict(extra="allow")

    author_name: str = ""
    author_email: str = ""
    difficulty: MetadataDifficulty = "unknown"
    category: str = ""
    tags: list[str] = []
    #: envpipeline provenance (family, seed, knobs, variant); ignored by other harnesses
    envpipeline: dict[str, object] = {}


class _PhaseNetwork(_Section):
    network_mode: Annotated[NetworkMode | None, Field(description="network policy override")] = None
    allowed_hosts: Annotated[list[str] | None, Field(description="hosts reachable under allowlist")] = None


class HealthcheckSection(_Section):
    """Harbor's readiness probe (Docker HEALTHCHECK semantics)."""

    command: Annotated[str, Field(description="shell command; exit 0 means healthy")]
    interval_sec: float = 5.0
    timeout_sec: float = 30.0
    start_period_sec: float = 0.0
    start_interval_sec: float = 5.0
    retries: int = 3


class TpuSection(_Section):
    type: Annotated[str, Field(min_length=1, description="TPU type, e.g. v6e")]
    topology: Annotated[str, Field(pattern=r"^[1-9]\d*(x[1-9]\d*)+$", description="NxM[xK]")]


class MCPServerSection(_Section):
    """One `[[environment.mcp_servers]]` entry."""

    name: str
    transport: Literal["stdio", "sse", "streamable-http", "http"] = "sse"
    url: str | None = None
    command: str | None = None
    args: list[str] = []

    @model_validator(mode="after")
    def _transport_fields(self) -> MCPServerSection:
        if self.transport != "stdio" and not self.url:
            raise ValueError(f"'url' is required for transport '{self.transport}'")
        if self.transport == "stdio" and not self.command:
            raise ValueError("'command' is required for transport 'stdio'")
        return self


class EnvironmentSection(_PhaseNetwork):
    """`[environment]`: the agent's sandbox."""

    build_timeout_sec: Annotated[float, Field(gt=0)] = 600.0
    docker_image: Annotated[str | None, Field(description="pre-built image instead of the Dockerfile")] = None
    os: Literal["linux", "windows"] | None = None
    cpus: Annotated[int | float, Field(gt=0)] = 1.0
    memory_mb: Annotated[int, Field(gt=0)] = 1024
    storage_mb: Annotated[int, Field(gt=0)] = 2048
    #: deprecated Harbor spellings (`memory = "4G"`); kept as written, read into memory_mb/storage_mb
    memory: Annotated[str | None, Field(description="deprecated size string, e.g. '4G'")] = None
    storage: Annotated[str | None, Field(description="deprecated size string, e.g. '10G'")] = None
    gpus: Annotated[int | None, Field(ge=0)] = None
    gpu_types: list[str] | None = None
    tpu: TpuSection | None = None
    #: deprecated (Harbor <= 1.2); `network_mode` wins when both are set
    allow_internet: bool | None = None
    mcp_servers: list[MCPServerSection] | None = None
    env: Annotated[dict[str, str] | None, Field(description="host variables the task needs")] = None
    skills_dir: str | None = None
    healthcheck: HealthcheckSection | None = None
    workdir: str | None = None

    @model_validator(mode="after")
    def _sizes(self) -> EnvironmentSection:
        # written through __dict__ so the derived value is not "set": dumping writes back what was read
        for text, field in ((self.memory, "memory_mb"), (self.storage, "storage_mb")):
            if text is None:
                continue
            mb = size_to_mb(text)
            if field in self.model_fields_set and getattr(self, field) != mb:
                raise ValueError(f"{field.removesuffix('_mb')}={text!r} conflicts with {field}")
            vars(self)[field] = mb
        return self


class CollectSection(_Section):
    """One `[[verifier.collect]]` hook."""

    command: str
    service: str = "main"
    timeout_sec: float = 60.0
    user: str | int | None = None


class VerifierSection(_PhaseNetwork):
    timeout_sec: Annotated[float, Field(gt=0, description="verifier wall timeout")] = 120.0
    env: Annotated[dict[str, str], Field(description="environment for tests (1.1)")] = {}
    user: str | int | None = None
    environment_mode: Literal["shared", "separate"] | None = None
    environment: EnvironmentSection | None = None
    collect: list[CollectSection] | None = None


class AgentSection(_PhaseNetwork):
    timeout_sec: Annotated[float, Field(gt=0, description="agent wall timeout")] = 600.0
    user: str | int | None = None


class SolutionSection(_Section):
    env: Annotated[dict[str, str], Field(description="environment for solve.sh")] = {}


class ArtifactSection(_Section):
    """One `artifacts` entry given as a table (a plain string is a source path)."""

    source: Annotated[str, Field(description="path in the sandbox")]
    destination: str | None = None
    exclude: list[str] = []
    service: str | None = None


class StepSection(_Section):
    """One `[[steps]]` entry of a multi-step task (schema 1.4)."""

    name: str
    agent: AgentSection = AgentSection()
    verifier: VerifierSection = VerifierSection()
    min_reward: float | dict[str, float] | None = None
    healthcheck: HealthcheckSection | None = None
    artifacts: list[str | ArtifactSection] = []


class TaskConfig(_Section):
    """The whole `task.toml`, as Harbor's `TaskConfig` defines it up to schema 1.4.

    Source: Harbor's `src/harbor/models/task/config.py` (canonical repository
    laude-institute/harbor, now harbor-framework/harbor; read from the forks AlienKevin/sprint at
    49e3cd773739875a1ff87e4533d652d5659ffc14 (schema 1.4) and LegoX/harbor at
    73fd120e731217b38f31667932ea26a28cdd4fff (1.1-1.3: `allow_internet`, `memory = "4G"`)).
    The same model ships in harbor 0.26.0 on PyPI, which `tests/unit/test_harbor_task_toml.py`
    runs (scripts/harbor-validate.sh) on the real-format fixtures this schema accepts.
    Field names are Harbor's; `[metadata]` is free-form. Keys no schema defines are set aside by
    `terminal.bundle.load_task_config` (kept in `unknown_keys`, written back, reported).
    """

    version: Annotated[str, Field(description="schema 1.0 spelling")] = "1.0"
    schema_version: Annotated[str | None, Field(description="the schema (1.1 and later)")] = None
    task: TaskSection | None = None
    metadata: MetadataSection = MetadataSection()
    verifier: VerifierSection = VerifierSection()
    agent: AgentSection = AgentSection()
    environment: EnvironmentSection = EnvironmentSection()
    solution: SolutionSection | None = None
    source: str | None = None
    multi_step_reward_strategy: Literal["mean", "final"] | None = None
    steps: list[StepSection] | None = None
    artifacts: list[str | ArtifactSection] | None = None

    @field_validator("version", "schema_version")
    @classmethod
    def _major_one(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"1\.\d+", value):
            raise ValueError(
                f"unsupported schema version {value!r}: this reader knows Harbor 1.x (1.0 to 1.4)"
            )
        return value

    _unknown: dict[str, object] = PrivateAttr(default_factory=dict)
    _as_read: bool = PrivateAttr(default=False)

    @property
    def effective_schema(self) -> str:
        """The schema this file declares (`schema_version`, else `version`)."""
        return self.schema_version or self.version

    @property
    def unknown_keys(self) -> dict[str, object]:
        """Keys no known schema defines (dotted path -> value), kept for writing back."""
        return self._unknown

    @property
    def as_read(self) -> bool:
        """Whether this config came from a file (then it is written back key for key)."""
        return self._as_read

    def remember_source(self, unknown: dict[str, object]) -> None:
        """Mark the config as read from a file that also held `unknown` keys."""
        self._unknown = dict(unknown)
        self._as_read = True

    def schema_at_least(self, version: str) -> bool:
        """Whether the declared schema is `version` or later (1.10 > 1.9)."""
        return _version_key(self.effective_schema) >= _version_key(version)

    def __eq__(self, other: object) -> bool:
        # values and unknown keys, not where the config came from
        if not isinstance(other, TaskConfig):
            return NotImplemented
        return self.model_dump() == other.model_dump() and self._unknown == other._unknown

    __hash__ = None  # pyright: ignore[reportAssignmentType]


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split(".") if p.isdigit())


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
    #: the Dockerfile to build instead of ``environment/Dockerfile`` as written: its base images
    #: resolved (`envpipeline.terminal.images`); None builds the file as it is
    dockerfile_text: str | None = None

    @property
    def name(self) -> str:
        """The task name: `[task].name` (1.1) or the folder name."""
        return self.config.task.name if self.config.task else self.paths.root.name
