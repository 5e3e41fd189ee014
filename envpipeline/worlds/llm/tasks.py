"""LLM task synthesis on a world day: the paper's tau, V, R, h and sub-task document from one answer.

The model answers with a `TaskDraft` (instruction, optional setup inserts, ordered sub-tasks each
with its interface, hint, reference-solution steps, criteria and expectations, and its facts). The draft is turned into a `WorldTask` by the same `TaskBuilder` the procedural
templates use (so the guard criteria, checklist, sub-task document and content-hash id are the
same), then checked (`task_checks`): executable as written, no leaked answer, V(W0, W0) = 0 and the
reference agent passes. A failed check goes back to the model with its reasons (bounded repair).
A task that survives still goes through `gate_task`'s full cascade like every procedural task.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from envpipeline.errors import ConfigError
from envpipeline.llm.protocol import LLM
from envpipeline.models.criteria import Condition
from envpipeline.models.world import Operation, Persona
from envpipeline.models.world_task import Interface, Step, WorldTask
from envpipeline.worlds.agent_actions import ACTIONS
from envpipeline.worlds.llm.prompts import schema_text, task_messages
from envpipeline.worlds.llm.structured import ask_structured
from envpipeline.worlds.llm.task_checks import ACTION_DOCS, draft_problems, reference_problems
from envpipeline.worlds.schema import SCHEMA
from envpipeline.worlds.state import WorldReader
from envpipeline.worlds.task_builder import TaskBuilder

TEMPLATE_PREFIX = "llm:"


class _Draft(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StepDraft(_Draft):
    """One reference-solution step: an action of the sub-task's interface and its arguments."""

    action: Annotated[str, Field(description="interface.verb, e.g. mcp.read_dm")]
    args: dict[str, Any] = {}


class CriterionDraft(_Draft):
    """One binary criterion comparing the final state with the initial one."""

    kind: Annotated[str, Field(pattern=r"^(row_added|row_count_delta|row_changed|file_contains|file_added)$")]
    description: Annotated[str, Field(min_length=5)]
    weight: Annotated[float, Field(gt=0)] = 1.0
    app: str | None = None
    table: str | None = None
    where: dict[str, Condition] = {}
    field: str | None = None
    to: Any = None
    path: str | None = None
    text: str | None = None
    delta: int = 1


class ExpectDraft(_Draft):
    """Tokens the state-diff judge should find in an added/changed row or file."""

    app: str
    table: str | None = None
    path: str | None = None
    tokens: Annotated[list[str], Field(min_length=1)]


class SubTaskDraft(_Draft):
    """One ordered sub-task."""

    interface: Interface
    description: Annotated[str, Field(min_length=5)]
    hint: Annotated[str, Field(min_length=5)]
    steps: Annotated[list[StepDraft], Field(min_length=1)]
    criteria: list[CriterionDraft] = []
    expect: list[ExpectDraft] = []


class SetupDraft(_Draft):
    """An insert that seeds the task's trigger into W0 (an incoming mail, DM or chat message)."""

    app: str
    table: str
    values: dict[str, Any]


class TaskDraft(_Draft):
    """The model's task."""

    name: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{2,40}$", description="a short slug")]
    instruction: Annotated[str, Field(min_length=20)]
    setup: list[SetupDraft] = []
    subtasks: Annotated[list[SubTaskDraft], Field(min_length=2, max_length=8)]
    facts: Annotated[
        dict[str, Any],
        Field(
            description="what the task is about (recorded with it; values the agent reads must not be in the instruction)"
        ),
    ] = {}


def build_task(draft: TaskDraft, persona: Persona, day: int, index: int) -> WorldTask:
    """The `WorldTask` a draft describes, built by the procedural `TaskBuilder` (guards, id, document).

    Raises:
        ConfigError: a criterion the task models refuse (named by sub-task).
    """
    b = TaskBuilder(f"{TEMPLATE_PREFIX}{draft.name}", facts=dict(draft.facts))
    b.instruction = draft.instruction
    b.setup = [Operation(app=s.app, table=s.table, op="insert", values=s.values) for s in draft.setup]
    for n, sub in enumerate(draft.subtasks):
        b.sub(sub.interface, sub.description, sub.hint)
        b.steps += [Step(subtask=n, interface=sub.interface, action=s.action, args=s.args) for s in sub.steps]
        for c in sub.criteria:
            spec = c.model_dump(exclude={"kind", "description", "weight"}, exclude_defaults=True)
            spec["where"] = c.where
            try:
                b.crit(c.kind, c.description, c.weight, **spec)  # type: ignore[arg-type]
            except ValidationError as exc:
                raise ConfigError(
                    f"subtasks.{n} criterion {c.description!r}: {exc.errors()[0]['msg']}"
                ) from exc
        for e in sub.expect:
            b.expect(e.app, *e.tokens, table=e.table, path=e.path)
    if not b.criteria:
        raise ConfigError("the task has no criteria: every task needs at least one")
    return b.build(persona.persona_id, day, index)


def world_brief(day_dir: Path, rows_per_table: int = 4) -> dict[str, Any]:
    """What the prompt shows of a day: the latest rows of every table and the home files."""
    reader = WorldReader(day_dir)
    tables = {
        f"{app}/{table}": reader.query(
            app, f'SELECT * FROM "{table}" ORDER BY id DESC LIMIT ?', [rows_per_table]
        )
        for app in SCHEMA
        for table in SCHEMA[app]
    }
    files = {p: reader.read_file(p)[:400] for p in reader.list_files()[:20]}
    return {"tables": tables, "files": files}


def persona_brief(persona: Persona) -> dict[str, Any]:
    """What the prompt shows of the persona."""
    return {
        "name": persona.name,
        "email": persona.email,
        "occupation": persona.occupation,
        "contacts": [c.model_dump() for c in persona.contacts],
        "arcs": [a.description for a in persona.arcs],
    }


def synthesize_task(
    llm: LLM, day_dir: Path | str, persona: Persona, index: int, *, max_repairs: int = 2
) -> tuple[WorldTask | None, dict[str, Any]]:
    """One task on `day_dir` that passed the pre-gate checks, or None; plus the request record.

    Raises:
        LLMError: the endpoint failed after the client's retries.
    """
    day_dir = Path(day_dir)
    day = WorldReader(day_dir).day
    built: dict[str, WorldTask] = {}

    def check(draft: TaskDraft) -> list[str]:
        try:
            task = build_task(draft, persona, day, index)
        except (ConfigError, ValidationError, ValueError, KeyError) as exc:
            return [f"the task cannot be built: {exc}"]
        problems = draft_problems(task)
        if not problems:
            try:
                problems = reference_problems(task, day_dir)
            except Exception as exc:  # a draft whose setup or steps crash is refused, never the run
                problems = [f"the reference run crashed: {type(exc).__name__}: {exc}"]
        if not problems:
            built["task"] = task
        return problems

    docs = {name: ACTION_DOCS.get(name, "see the action's arguments") for name in ACTIONS}
    messages = task_messages(
        schema_text(TaskDraft), persona_brief(persona), world_brief(day_dir), docs, day, index
    )
    result = ask_structured(llm, messages, TaskDraft, stage="task", check=check, max_repairs=max_repairs)
    record = {**result.summary(), "day": day, "index": index, "persona_id": persona.persona_id}
    task = built.get("task") if result.ok else None
    if task is not None:
        record["task_id"] = task.task_id
    return task, json.loads(json.dumps(record, default=str))
