"""The canonical task record shared by every family, and its parts."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from envpipeline.models.base import Strict
from envpipeline.models.gates import GateResult

ConditionOp = Literal["eq", "ne", "contains", "icontains"]


class Condition(Strict):
    """One field condition of a criterion."""

    op: Annotated[ConditionOp, Field(description="comparison: eq, ne, contains, icontains")]
    value: Annotated[Any, Field(description="the expected value")]


class Criterion(Strict):
    """An executable check on the final joint state or the recorded outputs."""

    id: Annotated[str, Field(description="stable id within the task, e.g. c1")]
    description: Annotated[str, Field(description="what a grader checks, in words")]
    kind: Annotated[
        Literal["record_exists", "record_absent", "output_contains"],
        Field(
            description="record_exists/record_absent: a record matching all conditions "
            "does/does not exist; output_contains: the final answer contains the value"
        ),
    ]
    service: Annotated[str | None, Field(description="service namespace; None for outputs")] = None
    collection: Annotated[str | None, Field(description="state collection, e.g. events")] = None
    match: Annotated[
        dict[str, Condition], Field(description="field name -> condition; other fields ignored")
    ] = {}
    achieved_by: Annotated[
        str | None, Field(description="namespaced tool that makes this criterion pass")
    ] = None


class Binding(Strict):
    """Where a reference-solution argument comes from: an earlier observation."""

    step: Annotated[int, Field(description="index of the earlier step in the solution")]
    path: Annotated[list[str | int], Field(description="path inside that step's `data`")]
    template: Annotated[str, Field(description="format string applied to the value")] = "{value}"


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
    seed: Annotated[int, Field(description="rng seed of the candidate")]
    parent: Annotated[str | None, Field(description="parent task id, if derived")] = None


class TaskRecord(Strict):
    """One candidate task of any family, accepted or rejected."""

    task_id: Annotated[str, Field(description="stable content hash")]
    family: Annotated[Literal["compose", "world", "terminal"], Field(description="method")]
    seed_key: Annotated[str, Field(description="the seed (batch/persona/bundle) it came from")]
    instruction: Annotated[str, Field(description="the prompt given to the agent")]
    environment: Annotated[dict[str, Any], Field(description="environment reference")]
    criteria: Annotated[list[Criterion], Field(description="executable checks")]
    reference_solution: Annotated[list[ToolCallStep], Field(description="gold tool calls")]
    reference_output: Annotated[str, Field(description="the gold final answer")] = ""
    metadata: Annotated[dict[str, Any], Field(description="difficulty, skills, interfaces")] = {}
    provenance: Annotated[Provenance, Field(description="generator, version, seed, parent")]
    gates: Annotated[list[GateResult], Field(description="verification gates")] = []
    status: Annotated[
        Literal["candidate", "accepted", "rejected"],
        Field(description="candidate (not yet verified), accepted or rejected"),
    ] = "candidate"
    reasons: Annotated[list[str], Field(description="why it was rejected")] = []
