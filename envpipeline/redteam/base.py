"""What a red-team policy is: a named adversary that tries to earn reward without doing the task.

A policy module in `envpipeline.redteam.policies` defines one `RedTeamPolicy` subclass and
registers an instance (`envpipeline.redteam.registry.register_policy`). A policy declares the
families it attacks and implements their hooks; the red-team gate of each family runs every
policy that attacks it, and an accepted task must give each of them binary reward 0.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

from pydantic import Field

from envpipeline.agents.environment import ComposedEnvironment
from envpipeline.models.base import Strict
from envpipeline.models.bundle import Bundle
from envpipeline.models.task import Family, TaskRecord, ToolCallStep
from envpipeline.sandbox.base import ExecResult, SandboxSession

#: Seconds one red-team command may run in a terminal session.
ATTACK_TIMEOUT_SEC = 60.0

if TYPE_CHECKING:
    from envpipeline.redteam.world_attack import WorldAttack


@dataclass
class ReferenceRun:
    """A clean run of a composed task's reference: the calls with their arguments resolved."""

    steps: list[ToolCallStep]
    observations: list[dict[str, Any]]
    output: str
    #: the joint state the reference leaves behind (service -> its state)
    final_states: Mapping[str, Any]
    #: whether that state passes the task's collateral checks (`state_preserved`), as an accepted
    #: task's reference does: an attempt's service left in the same state then passes them too
    collateral_holds: bool


@dataclass
class ComposeAttack:
    """What a policy gets to attack a composed task: the task, a fresh environment, the reference.

    The policy acts on `env` (as an agent would, through its tools) and returns its final reply.
    """

    task: TaskRecord
    env: ComposedEnvironment
    reference: ReferenceRun
    calls: list[str] = field(default_factory=list)
    #: set by a policy that skipped what the task asks it to use (a value that picks a record out
    #: of a listing): its attempt is then never moot, even when it ends where the reference ends
    blind: bool = False

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Call one namespaced tool of the environment, counting it."""
        self.calls.append(tool)
        return self.env.call(tool, arguments)

    def replay_reference(self, upto: int | None = None) -> None:
        """Make the reference's calls (the first `upto` of them), with their resolved arguments."""
        for step in self.reference.steps[:upto]:
            self.call(step.tool, dict(step.arguments))


@dataclass
class TerminalAttack:
    """What a policy gets to attack a terminal bundle: the bundle and the live session of the agent phase.

    The policy acts as an agent would, with shell commands (`run`), before the verifier phase
    (which kills its processes, empties ``/tests`` and ``/logs/verifier`` and uploads the tests
    afresh). It never sees ``tests/`` or ``solution/`` unless it reads them from the bundle on
    purpose (`run_solution` runs the oracle, for policies that start from the reference).
    """

    bundle: Bundle
    session: SandboxSession
    commands: list[str] = field(default_factory=list)
    last: ExecResult | None = None

    def run(self, script: str, timeout_sec: float = ATTACK_TIMEOUT_SEC) -> ExecResult:
        """Run one bash script in the session (cwd ``/app``), counting it."""
        self.commands.append(script)
        self.last = self.session.exec(script, timeout_sec=timeout_sec)
        return self.last

    def run_solution(self) -> ExecResult:
        """Upload ``solution/`` and run ``solve.sh`` as the oracle does."""
        self.session.upload(self.bundle.paths.solution, "/solution")
        return self.run(
            "bash /solution/solve.sh", timeout_sec=min(self.bundle.config.agent.timeout_sec, 600.0)
        )


class RedTeamPolicy(ABC):
    """One adversary. Override the hook of each family listed in `families`."""

    name: ClassVar[str]
    description: ClassVar[str]
    families: ClassVar[frozenset[Family]]

    def applies_to(self, task: TaskRecord) -> bool:
        """Whether the policy has anything to attack in `task` (one that has not is left out of the
        task's group: its attempt would only repeat the reference)."""
        return True

    def attack_compose(self, attack: ComposeAttack) -> str:
        """Act on a composed task's environment; return the final reply."""
        raise NotImplementedError(f"red-team policy {self.name} does not attack composed tasks")

    def attack_terminal(self, attack: TerminalAttack) -> None:
        """Act in a terminal bundle's session during the agent phase."""
        raise NotImplementedError(f"red-team policy {self.name} does not attack terminal bundles")

    def attack_world(self, attack: WorldAttack) -> None:
        """Act on a world task's fresh W0 copy (`attack.world`), recording calls on `attack`."""
        raise NotImplementedError(f"red-team policy {self.name} does not attack world tasks")


class PolicyOutcome(Strict):
    """How one red-team policy fared against one task."""

    policy: Annotated[str, Field(description="the policy's registered name")]
    binary: Annotated[float, Field(description="1.0 when every criterion passed (the task is broken)")]
    checklist: Annotated[float, Field(description="share of criteria passed")]
    cfrr: Annotated[
        float, Field(description="CFRR reward within the group of the reference and every policy")
    ]
    moot: Annotated[
        bool, Field(description="the policy left the reference's exact state and reply: it did the task")
    ] = False
    calls: Annotated[int, Field(description="tool calls the policy made")] = 0
    failed: Annotated[list[str], Field(description="ids of the criteria it failed")] = []

    @property
    def broke(self) -> bool:
        """Whether it earned full reward without being the reference."""
        return self.binary == 1.0 and not self.moot


class TerminalPolicyOutcome(PolicyOutcome):
    """How one red-team policy fared against one terminal bundle (binary = checklist = reward, 0 if none)."""

    reward: Annotated[float | None, Field(description="the reward the fresh verifier phase wrote, if any")]
    verdict: Annotated[
        str, Field(description="the trial's verdict (ok, missing_reward, malformed_reward...)")
    ]
    reason: Annotated[str, Field(description="why the trial gave no reward, if it did not")] = ""
    seconds: Annotated[float, Field(description="wall seconds of the policy's trial")] = 0.0
