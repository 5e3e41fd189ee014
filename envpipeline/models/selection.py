"""Envs-FORGE selection data: actions, candidates, decisions, solver traces, synthesis outputs."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Projection = Literal["increase_complexity", "reduce_complexity", "diversify_frontier"]
Direction = Literal["in_depth", "in_breadth"]
Backend = Literal["scip", "enumerate", "greedy"]
PROJECTIONS: tuple[Projection, ...] = ("increase_complexity", "reduce_complexity", "diversify_frontier")
DIRECTIONS: tuple[Direction, ...] = ("in_depth", "in_breadth")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SeedPassRate(_Strict):
    """A seed's estimated pass rate under the current policy, with its skills."""

    seed_id: Annotated[str, Field(description="seed key")]
    pass_rate: Annotated[float, Field(ge=0.0, le=1.0, description="mean verifier reward of K rollouts")]
    required_skills: Annotated[list[str], Field(description="skill nodes the seed must keep")] = []
    optional_skills: Annotated[list[str], Field(description="skill nodes it may add or remove")] = []
    rollouts: Annotated[int, Field(ge=0, description="rollouts behind the estimate")] = 0
    family: Annotated[
        str | None, Field(description="task family (per-family calibrated transfer); None: unknown")
    ] = None
    split: Annotated[str, Field(description="dataset split; only 'train' seeds are eligible")] = "train"
    overlap: Annotated[bool, Field(description="known overlap with held-out evaluation tasks")] = False
    instruction: Annotated[
        str | None, Field(description="seed instruction, for the prompt-length eligibility check")
    ] = None


class Candidate(_Strict):
    """One (seed, projection, direction) action candidate with its constant scores."""

    seed_id: str
    projection: Projection
    direction: Direction
    pass_rate: float
    projected_pass_rate: float
    frontier_score: float
    required_skills: list[str] = []
    optional_skills: list[str] = []
    removable_skills: Annotated[
        list[str], Field(description="the part of optional_skills the seed exercises and may drop")
    ] = []
    eligible: bool = True
    ineligible_reasons: list[str] = []
    prompt_tokens: int = 0
    split: str = "train"

    @property
    def action_variant(self) -> str:
        """The combined action name, e.g. ``increase_complexity/in_depth``."""
        return f"{self.projection}/{self.direction}"


class Decision(_Strict):
    """The action chosen for one seed."""

    seed_id: str
    projection: Projection
    direction: Direction
    action_variant: str
    pass_rate: float
    reward_band: str
    projected_pass_rate: float
    frontier_score: float
    backend: Backend
    required_skills: list[str] = []
    selected_optional_skills: Annotated[
        list[str], Field(description="optional nodes the solver activated: counted toward coverage")
    ] = []
    optional_skills: Annotated[
        list[str], Field(description="the candidate's optional nodes O (addable unless removable)")
    ] = []
    removable_skills: Annotated[
        list[str], Field(description="nodes of O the seed exercises and the rewrite may drop")
    ] = []
    recipe: Annotated[
        str, Field(description="the synthesis recipe (envpipeline.forge.recipes): milp or a fixed baseline")
    ] = "milp"


class SolverReport(_Strict):
    """How the SCIP solve of a selection ended: the limit it ran under, and why it fell back."""

    status: Annotated[str, Field(description="SCIP's status, or killed / crashed / unavailable")]
    seconds: Annotated[float, Field(description="wall-clock seconds of the solve (child process)")]
    time_limit: Annotated[float, Field(description="the hard wall-clock limit it ran under, s")]
    time_limit_source: Annotated[
        Literal["explicit", "scaled"],
        Field(description="explicit (--time-limit / SelectorConfig.time_limit) or scaled to the instance"),
    ]
    time_limit_hit: Annotated[bool, Field(description="stopped (or was killed) at the time limit")]
    gap: Annotated[float | None, Field(description="relative primal-dual gap when it stopped")] = None
    objective: Annotated[float | None, Field(description="its best selection's objective")] = None
    dual_bound: Annotated[float | None, Field(description="its proven upper bound on the optimum")] = None
    proof: Annotated[
        str | None, Field(description="scip, or 'lagrangian bound' (the warm start met the LP bound)")
    ] = None
    candidates: Annotated[int, Field(description="candidates of the problem")] = 0
    core_candidates: Annotated[
        int | None, Field(description="candidates left by the exact reduction (None: not reduced)")
    ] = None


class SelectionTrace(_Strict):
    """The audit trail of one selection solve (paper, appendix B)."""

    backend: Backend
    formulation: Literal["local", "portfolio"]
    status: str
    objective: float | None
    n_candidates: int
    n_seeds: int
    target_count: int
    n_coverage_targets: int = 0
    requested_coverage: dict[str, float] = {}
    realized_slack: dict[str, float] = {}
    selected_actions: list[str] = []
    selected_skill_nodes: list[str] = []
    seconds: float = 0.0
    fallback_reason: str | None = None
    solver: Annotated[SolverReport | None, Field(description="the SCIP solve, when one was tried")] = None
    ineligible: dict[str, list[str]] = {}
    dominated: int = 0


class SynthesisOutput(_Strict):
    """The synthesis output contract (paper, appendix C): one complete task directory."""

    task_name: Annotated[str, Field(description="task directory name", pattern=r"^[A-Za-z0-9_.-]{1,100}$")]
    instruction_md: Annotated[str, Field(description="the agent-facing instruction")]
    files: Annotated[
        dict[str, str], Field(description="relative path -> content: environment/, solution/, tests/ files")
    ]
    metadata: Annotated[dict[str, Any], Field(description="solver payload, target difficulty, summary")] = {}
