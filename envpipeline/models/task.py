"""The one task record of every family (`TaskRecord`) and its parts.

A record says what the agent is asked (`instruction`), where it acts (`environment`: a tagged
union with one reference type per family), how the result is checked (`criteria`: a tagged union
over the criterion kinds), how it was made (`provenance`) and how it fared (`gates`, `status`,
`reasons`). CompoWorld builds records directly; WildAWM (`worlds.records`) and the terminal
families (`terminal.records`) build them from their gated tasks and verified bundles, and every
export (`export.unified.accepted_task`) reads records only.

Vocabulary: a record's ``seed_key`` is the *partition* it came from (a composition batch such as
``batch-0003``, a persona id, a terminal seed key); ``provenance.seed`` is the integer *rng seed*
it was drawn from.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import Field

from envpipeline.models.base import Strict
from envpipeline.models.criteria import Condition, ConditionOp, Criterion, VerifierCriterion
from envpipeline.models.gates import GateResult
from envpipeline.models.world_task import WorldCriterion

Family = Literal["compose", "world", "terminal"]

__all__ = [
    "Binding",
    "ComposeEnvironmentRef",
    "ComposedTaskRecord",
    "Condition",
    "ConditionOp",
    "Criterion",
    "EnvironmentRef",
    "Family",
    "GateResult",
    "Provenance",
    "TaskCriterion",
    "TaskRecord",
    "TerminalEnvironmentRef",
    "TerminalTaskRecord",
    "ToolCallStep",
    "VerifierCriterion",
    "WorldEnvironmentRef",
    "WorldTaskRecord",
]


#: a template that builds a JSON value around the value: this prefix, then JSON text in which the
#: string "{value}" stands for the value (`fill_template`)
JSON_TEMPLATE = "json:"
#: the value as the one item of a list (Spotify's ``track_ids: ["TR-1"]``)
LIST_TEMPLATE = JSON_TEMPLATE + '["{value}"]'


def fill_template(template: str, value: Any) -> Any:
    """The argument a template makes of a value: the value itself (``{value}``), a JSON value built
    around it (`JSON_TEMPLATE`: a one-item list, Neon's ``params`` object), or the template
    formatted with it."""
    if template == "{value}":
        return value
    if template.startswith(JSON_TEMPLATE):
        return _placed(json.loads(template[len(JSON_TEMPLATE) :]), value)
    return template.format(value=value)


def _placed(shape: Any, value: Any) -> Any:
    if shape == "{value}":
        return value
    if isinstance(shape, list):
        return [_placed(item, value) for item in shape]
    if isinstance(shape, dict):
        return {key: _placed(item, value) for key, item in shape.items()}
    return shape


class Binding(Strict):
    """Where a reference-solution argument comes from: an earlier observation."""

    step: Annotated[int, Field(description="index of the earlier step in the solution")]
    path: Annotated[
        list[str | int | dict[str, Any]],
        Field(
            description="path inside that step's `data`: keys, list indexes, and selectors "
            "(field -> value: the list's first item whose fields hold those values)"
        ),
    ]
    template: Annotated[
        str,
        Field(
            description="format string applied to the value; 'json:' then JSON text: that JSON "
            "value with the value where the string '{value}' stands"
        ),
    ] = "{value}"

    def fill(self, value: Any) -> Any:
        """The argument this binding gives for the `value` it read (`fill_template`)."""
        return fill_template(self.template, value)


class ToolCallStep(Strict):
    """One call of a reference solution."""

    tool: Annotated[str, Field(description="namespaced tool name, e.g. calendar.update_event")]
    arguments: Annotated[dict[str, Any], Field(description="concrete arguments")]
    bindings: Annotated[
        dict[str, Binding], Field(description="arguments whose value is read from an observation")
    ] = {}


class Provenance(Strict):
    """Where a task came from."""

    generator: Annotated[str, Field(description="generator name")]
    generator_version: Annotated[str, Field(description="generator code version")]
    seed: Annotated[int | None, Field(description="rng seed of the candidate (None: not generated here)")]
    parent: Annotated[str | None, Field(description="parent task id, if derived")] = None


class ComposeEnvironmentRef(Strict):
    """A composed task's environment: the services it needs, the distractors, their initial state."""

    kind: Literal["compose"] = "compose"
    services: Annotated[list[str], Field(description="services the task composes")]
    distractors: Annotated[list[str], Field(description="extra services exposed but not needed")] = []
    initial_state: Annotated[
        dict[str, Any], Field(description="service -> planted initial state of the composed services")
    ]
    state_seeds: Annotated[
        dict[str, str], Field(description="distractor service -> seed its state is generated from")
    ] = {}


class WorldEnvironmentRef(Strict):
    """A WildAWM task's environment: one persona world day (plus the setup that makes its W0)."""

    kind: Literal["world"] = "world"
    persona_id: Annotated[str, Field(description="the persona whose world it is")]
    day: Annotated[int, Field(ge=0, description="the world day the task starts from")]
    template: Annotated[str, Field(description="the task template that made it")]
    interface_flow: Annotated[list[str], Field(description="interfaces in sub-task order (web, cli, mcp)")]
    hints: Annotated[list[str], Field(description="one hint per sub-task")] = []
    checklist: Annotated[list[dict[str, Any]], Field(description="weighted partial-credit items")] = []


class TerminalEnvironmentRef(Strict):
    """A terminal task's environment: a Harbor bundle folder and the hash of its files."""

    kind: Literal["terminal"] = "terminal"
    bundle_path: Annotated[str, Field(description="the bundle folder")]
    fingerprint: Annotated[str, Field(description="content hash of the bundle's files")]
    category: Annotated[str, Field(description="task category from task.toml")] = ""
    tags: Annotated[list[str], Field(description="task.toml tags")] = []
    verifier_timeout_sec: Annotated[float, Field(gt=0, description="the verifier's wall timeout")] = 120.0


EnvironmentRef = ComposeEnvironmentRef | WorldEnvironmentRef | TerminalEnvironmentRef
TaskCriterion = Criterion | WorldCriterion | VerifierCriterion
EnvT = TypeVar("EnvT", bound=EnvironmentRef)
CriterionT = TypeVar("CriterionT", bound=TaskCriterion)


class TaskRecord(Strict, Generic[EnvT, CriterionT]):
    """One candidate task of any family, accepted or rejected.

    Unparameterized, it holds any family's record (the environment and criteria types follow
    their ``kind``); `ComposedTaskRecord`, `WorldTaskRecord` and `TerminalTaskRecord` are the
    per-family parameterizations.
    """

    task_id: Annotated[str, Field(description="stable content hash")]
    family: Annotated[Family, Field(description="method: compose, world or terminal")]
    seed_key: Annotated[str, Field(description="the partition it came from (batch, persona, seed bundle)")]
    instruction: Annotated[str, Field(description="the prompt given to the agent")]
    environment: Annotated[EnvT, Field(description="where the agent acts (one reference type per family)")]
    criteria: Annotated[list[CriterionT], Field(description="executable checks")]
    reference_solution: Annotated[list[ToolCallStep], Field(description="gold tool calls (compose)")] = []
    reference_output: Annotated[str, Field(description="the gold final answer")] = ""
    metadata: Annotated[dict[str, Any], Field(description="difficulty, skills, interfaces")] = {}
    provenance: Annotated[Provenance, Field(description="generator, version, seed, parent")]
    gates: Annotated[list[GateResult], Field(description="verification gates")] = []
    status: Annotated[
        Literal["candidate", "accepted", "rejected"],
        Field(description="candidate (not yet verified), accepted or rejected"),
    ] = "candidate"
    reasons: Annotated[list[str], Field(description="why it was rejected")] = []


ComposedTaskRecord = TaskRecord[ComposeEnvironmentRef, Criterion]
WorldTaskRecord = TaskRecord[WorldEnvironmentRef, WorldCriterion]
TerminalTaskRecord = TaskRecord[TerminalEnvironmentRef, VerifierCriterion]
