"""WildAWM cross-interface tasks, their declarative criteria, rollouts and gate outcomes.

Pure pydantic, no I/O; every model forbids unknown fields. A `WorldTask` is generated from one
materialized world day (plus an optional `setup` of operations that seeds the task's trigger, e.g.
the go-ahead chat message); `GatedTask` is the task with its six rollouts and five-plus gates.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from envpipeline.models.criteria import Condition
from envpipeline.models.gates import GateResult
from envpipeline.models.world import Operation, WorldModel

Interface = Literal["mcp", "cli", "web"]
CriterionKind = Literal[
    "row_added",
    "row_count_delta",
    "row_changed",
    "file_contains",
    "file_added",
    "state_preserved",
    "calls_through",
]


class Mention(WorldModel):
    """A value the target must mention: `column` of a row added (final vs initial) in app/table."""

    app: str
    table: str
    column: str
    where: dict[str, Condition] = {}


class WorldCriterion(WorldModel):
    """One binary criterion comparing the FINAL state with the INITIAL state.

    - ``row_added``: a row whose id is new in FINAL matches `where` (and its `field` mentions `mention`);
    - ``row_count_delta``: rows matching `where` grew by at least `delta`;
    - ``row_changed``: a row present in both matches `where` (initially) and its `field` became `to`;
    - ``file_contains``: home/`path` contains `text` (and the `mention`) in FINAL but not in INITIAL
      (with `once`, exactly one time: a log line written twice means the work was done twice);
    - ``file_added``: home/`path` exists in FINAL but not in INITIAL;
    - ``state_preserved``: FINAL differs from INITIAL only where `allow` says (no collateral damage);
    - ``calls_through``: (trajectory) the agent wrote `app` through `interface`, not another one.
    """

    id: str
    kind: CriterionKind
    description: str
    interface: Annotated[Interface, Field(description="the interface whose sub-task satisfies it")]
    app: str | None = None
    table: str | None = None
    where: dict[str, Condition] = {}
    field: Annotated[str | None, Field(description="row_changed column / row_added mention column")] = None
    to: Any = None
    path: Annotated[str | None, Field(description="file kinds: path relative to home/")] = None
    text: str | None = None
    once: Annotated[bool, Field(description="file_contains: `text` appears exactly once in FINAL")] = False
    delta: int = 1
    mention: Mention | None = None
    allow: Annotated[
        dict[str, Any],
        Field(
            description="state_preserved: {'tables': {'app/table': {'added': n, 'changed': n, 'fields': [...]}},"
            " 'volatile': {'app/table': [fields] or '*'}, 'files': [paths under home/]}"
        ),
    ] = {}


class Expectation(WorldModel):
    """What the independent state-diff judge looks for: tokens in an added/changed row or a file.

    A token ``{new:app/table.column}`` stands for the value of `column` of any row added there;
    ``{column=value}`` requires that column of the row to equal the value exactly.
    """

    app: Annotated[str, Field(description="an app, or 'files' for home/")]
    table: str | None = None
    path: str | None = None
    tokens: list[str]


class ChecklistItem(WorldModel):
    """A weighted partial-credit item: passes when all its criteria pass."""

    id: str
    description: str
    weight: Annotated[float, Field(gt=0)]
    criteria: list[str]


class SubTask(WorldModel):
    """One ordered sub-task of the sub-task document."""

    index: int
    interface: Interface
    description: str
    hint: str


class Step(WorldModel):
    """One step of the scripted solution (data; the agents interpret it through the interfaces)."""

    subtask: int
    interface: Interface
    action: str
    args: dict[str, Any] = {}


class WorldTask(WorldModel):
    """A cross-interface task over one world day."""

    task_id: str
    persona_id: str
    day: int
    index: int
    template: str
    instruction: str
    interface_flow: list[Interface]
    setup: Annotated[list[Operation], Field(description="ops turning the day into the task's W0")] = []
    criteria: list[WorldCriterion]
    checklist: list[ChecklistItem]
    hints: Annotated[list[str], Field(description="one per sub-task")]
    subtasks: list[SubTask]
    document: Annotated[str, Field(description="the ordered sub-task document (markdown)")]
    expectations: list[Expectation]
    solution: list[Step]
    facts: dict[str, Any] = {}
    interfaces_needed: Annotated[
        list[Interface], Field(description="the interfaces the reference solution acts through")
    ] = []
    depends_on_days: Annotated[
        list[int], Field(description="the world days whose records the solution reads or the criteria change")
    ] = []


class Rollout(WorldModel):
    """One scripted-agent attempt and how the verifier and the judges scored it."""

    index: int
    hinted: bool
    skill: str
    verdict: int
    criteria: dict[str, bool]
    checklist: float
    judge: Annotated[bool, Field(description="the diff judge's vote")]
    llm_judge: bool | None = None
    votes: Annotated[
        dict[str, bool | None],
        Field(description="every judge's vote (None: abstained); judges never see criteria"),
    ] = {}
    panel: Annotated[bool | None, Field(description="strict majority of the votes; None on a tie")] = None
    format_ok: bool
    reward: float = 0.0
    advantage: float = 0.0
    mistakes: list[str] = []
    tool_calls: int = 0
    cli_backend: str = ""
    seconds: float = 0.0
    trajectory: list[dict[str, Any]] = []


class GatedTask(WorldModel):
    """A task after its rollouts and gates."""

    task: WorldTask
    status: Literal["accepted", "rejected"]
    reasons: list[str] = []
    difficulty: Literal["easy", "medium", "hard"] | None = None
    gates: list[GateResult]
    rollouts: list[Rollout]
