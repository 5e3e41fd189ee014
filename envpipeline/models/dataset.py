"""The dataset schema every export reads: one `AcceptedTask` row per accepted task, with its `Rubric`.

An `AcceptedTask` is the flat projection of an accepted `TaskRecord` (nested payloads travel as
JSON strings so it is one homogeneous Parquet row); `criteria` holds a `Rubric`: the criteria a
reward adapter scores, each marked with what it needs to be checked (``text``: the final reply
alone; ``state``: the final environment state; ``verifier``: the bundle's own tests).
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import Field

from envpipeline.models.base import Strict
from envpipeline.models.task import Family

CheckKind = Literal["text", "state", "verifier"]


class RubricCriterion(Strict):
    """One scored criterion, family-neutral."""

    id: Annotated[str, Field(description="stable id within the task")]
    description: Annotated[str, Field(description="what a grader checks, in words")]
    kind: Annotated[str, Field(description="the family's criterion kind, e.g. record_exists")]
    check: Annotated[CheckKind, Field(description="text: final reply; state: final state; verifier: tests")]
    weight: Annotated[float, Field(gt=0, description="prior importance (checklist weight share)")] = 1.0
    expected_text: Annotated[str | None, Field(description="text criteria: the reply must contain it")] = None
    spec: Annotated[str, Field(description="the family-native criterion as JSON")] = "{}"
    held_at_start: Annotated[
        bool,
        Field(
            description="the task's initial state already meets it (state_preserved, a kept record): "
            "no partial credit of its own, and breaking it voids the partial credit"
        ),
    ] = False


class RubricChecklistItem(Strict):
    """A weighted partial-credit item over criteria (world tasks)."""

    id: str
    description: str
    weight: Annotated[float, Field(gt=0)]
    criteria: list[str]


class Rubric(Strict):
    """What a reward adapter needs to score one completion of a task."""

    task_id: Annotated[str, Field(description="the task this rubric belongs to")]
    family: Annotated[Family, Field(description="compose, world or terminal")]
    criteria: Annotated[list[RubricCriterion], Field(min_length=1, description="scored criteria")]
    checklist: Annotated[list[RubricChecklistItem], Field(description="weighted items (world)")] = []
    hints: Annotated[list[str], Field(description="one per sub-task (world)")] = []
    reference_output: Annotated[str, Field(description="the gold final reply, if any")] = ""

    def weights(self) -> list[float]:
        """Prior weight of each criterion, in order."""
        return [c.weight for c in self.criteria]

    def held_at_start(self) -> list[bool]:
        """Whether the initial state already meets each criterion, in order."""
        return [c.held_at_start for c in self.criteria]


class AcceptedTask(Strict):
    """One accepted task of any family, as stored in the `accepted_tasks` asset."""

    task_id: Annotated[str, Field(description="stable id")]
    family: Annotated[Family, Field(description="compose, world or terminal")]
    seed_key: Annotated[str, Field(description="the seed it came from; splits never share one")]
    instruction: Annotated[str, Field(description="the prompt given to the agent")]
    system_prompt: Annotated[str, Field(description="the system message of the family's agents")]
    difficulty: Annotated[str, Field(description="easy, medium, hard or unknown")]
    skills: Annotated[list[str], Field(description="skills exercised")]
    interfaces: Annotated[list[str], Field(description="services (compose), web/cli/mcp (world), terminal")]
    criteria: Annotated[str, Field(description="the Rubric as JSON")]
    tools: Annotated[str, Field(description="JSON list of flat OpenAI tool schemas")]
    reference_messages: Annotated[str | None, Field(description="JSON SFT trajectory, or None")] = None
    gate_stats: Annotated[str, Field(description="JSON: gate name -> passed, plus counts")]
    provenance: Annotated[str, Field(description="JSON: generator, version, seed, parent, origin")]
    source: Annotated[str, Field(description="where the record was read from")] = ""
    env_spec: Annotated[
        str, Field(description="JSON EnvSpec: what a trainer needs to rebuild the live environment")
    ] = ""

    def rubric(self) -> Rubric:
        """The parsed rubric."""
        return Rubric.model_validate_json(self.criteria)

    def tool_schemas(self) -> list[dict[str, Any]]:
        """The parsed tool schemas."""
        return json.loads(self.tools)

    def messages(self) -> list[dict[str, Any]] | None:
        """The parsed SFT trajectory (tool-call arguments as JSON strings), or None."""
        return None if self.reference_messages is None else json.loads(self.reference_messages)
