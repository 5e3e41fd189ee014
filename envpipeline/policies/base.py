"""The one policy interface: something that attempts a task and is scored by the task's verifier.

A `Policy` takes a `RolloutTarget` (a terminal bundle in a sandbox, a composed task, or a world
task on one day of its world) and an episode index, and returns a `RolloutRecord`: the reward the
task's own verifier gave, with per-criterion results where the family has criteria. Four kinds
share it (see `registry`):

- ``scripted``: the fast offline defaults (each family's scripted agent of configurable skill);
- ``solver``: content-sensitive offline solvers for terminal families, whose success depends on
  which edge cases an instance really contains (`envpipeline.policies.solver`);
- ``llm``: an agent loop through litellm, one per family (`envpipeline.policies.llm_agent`);
- ``recorded``: rewards recorded by any harness, looked up by task id
  (`envpipeline.policies.recorded`).

Pass-rate estimation (Envs-FORGE), the solvability and difficulty gates (WildAWM) and rollout
groups (CompoWorld) all take a `Policy`. The index is the episode number within a group: policies
derive their randomness from (policy seed, family, index), never from the bundle, so that two
versions of one task (a seed and its rewrite) are attempted with the same draws (common random
numbers: a measured difference in pass rate is the task's, not the dice's).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from envpipeline.models.task import TaskRecord
    from envpipeline.sandbox.base import Limits, Sandbox
    from envpipeline.worlds.tasks import WorldTask

PolicyKind = Literal["scripted", "solver", "llm", "recorded"]
POLICY_KINDS: tuple[PolicyKind, ...] = ("scripted", "solver", "llm", "recorded")
TargetFamily = Literal["terminal", "composed", "world"]


@dataclass(frozen=True)
class TerminalTarget:
    """A Harbor bundle attempted in a sandbox session and scored by its tests."""

    bundle_dir: Path
    sandbox: Sandbox
    task_id: str = ""
    limits: Limits | None = None
    family: TargetFamily = "terminal"

    @property
    def key(self) -> str:
        """The task id (the bundle folder's name when none is given)."""
        return self.task_id or self.bundle_dir.name


@dataclass(frozen=True)
class ComposedTarget:
    """A CompoWorld task attempted through the meta-tools and scored by its criteria."""

    task: TaskRecord
    family: TargetFamily = "composed"

    @property
    def key(self) -> str:
        """The task id."""
        return self.task.task_id


@dataclass(frozen=True)
class WorldTarget:
    """A WildAWM task attempted on one day of its world and scored by its checklist."""

    task: WorldTask
    #: the task's W0; never changed (the attempt acts on a copy of it)
    day_dir: Path
    sandbox: Sandbox | None = None
    #: a fresh (absent) folder the attempt's copy is made in and left in, for judges and probes;
    #: None: a temporary folder, removed after scoring
    work_dir: Path | None = None
    #: whether the agent is shown the task's hints (the gates' hinted rollouts)
    hinted: bool = False
    family: TargetFamily = "world"

    @property
    def key(self) -> str:
        """The task id."""
        return self.task.task_id


RolloutTarget = TerminalTarget | ComposedTarget | WorldTarget


class RolloutRecord(BaseModel):
    """One episode of one policy on one task, as the task's verifier scored it."""

    model_config = ConfigDict(extra="forbid")

    task_id: Annotated[str, Field(description="procedural, synthesized or imported task id")]
    family: Annotated[TargetFamily, Field(description="terminal, composed or world")]
    policy: Annotated[str, Field(description="policy name")]
    kind: Annotated[PolicyKind, Field(description="policy kind")]
    index: Annotated[int, Field(ge=0, description="episode number within the group")]
    reward: Annotated[float, Field(ge=0.0, le=1.0, description="the verifier's reward")]
    criteria: Annotated[
        dict[str, bool] | None, Field(description="per-criterion results, where the task has criteria")
    ] = None
    submission: Annotated[str, Field(description="what the policy submitted (solver/variant/answer)")] = ""
    verdict: Annotated[str, Field(description="the verifier's verdict (ok, tampered, timeout, ...)")] = "ok"
    seconds: Annotated[float, Field(ge=0.0, description="wall-clock seconds of the episode")] = 0.0
    steps: Annotated[int, Field(ge=0, description="agent steps (tool calls or commands)")] = 0
    prompt_tokens: Annotated[int, Field(ge=0)] = 0
    completion_tokens: Annotated[int, Field(ge=0)] = 0
    detail: Annotated[dict[str, Any], Field(description="kind-specific facts (skill, difficulty, ...)")] = {}


@runtime_checkable
class Policy(Protocol):
    """Attempts tasks; every kind implements this (see the module docstring)."""

    name: str
    kind: PolicyKind
    #: the target families this policy can attempt
    families: frozenset[TargetFamily]

    def rollout(self, target: RolloutTarget, index: int) -> RolloutRecord:
        """One episode on `target`, scored by the task's own verifier (ConfigError: unsupported family)."""
        ...
