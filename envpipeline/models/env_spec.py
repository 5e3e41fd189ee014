"""The versioned environment reference a trainer row carries (``env_spec``): enough to rebuild a task.

A rollout worker rebuilds the live environment of one task from its row alone, with no lake:

- ``compose``: the services' stored initial states and state seeds are inline (``environment``);
- ``world``: the persona/day reference plus the task's setup operations (``world_setup``), and,
  where the exporter had the world day at hand, the task's W0 inline as a base64 ``.tar.gz`` of its
  ``apps/`` and ``home/`` (``world_snapshot``); without it the worker needs the world folder
  (``worlds_root`` / ``$ENVPIPELINE_WORLDS``);
- ``terminal``: the bundle reference (folder path and content fingerprint).

``criteria`` are the task's own executable criteria (not the rubric projection), so the reward is
computed exactly as the verification gates compute it. Rows store the spec as a JSON string
(`EnvSpec.model_dump_json`), the same type on every row of every family.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from envpipeline.models.base import Strict
from envpipeline.models.task import Family, TaskRecord

ENV_SPEC_VERSION = 1


class EnvSpec(Strict):
    """Everything a worker needs to rebuild one task's environment (version 1)."""

    version: Annotated[Literal[1], Field(description="format version; bumped on incompatible changes")] = 1
    family: Annotated[Family, Field(description="compose, world or terminal")]
    task_id: Annotated[str, Field(description="the task's stable id")]
    instruction: Annotated[str, Field(description="the prompt given to the agent")]
    environment: Annotated[dict[str, Any], Field(description="the family's environment reference (JSON)")]
    criteria: Annotated[list[dict[str, Any]], Field(description="the task's executable criteria (JSON)")]
    world_setup: Annotated[
        list[dict[str, Any]], Field(description="world: operations turning the day into the task's W0")
    ] = []
    world_snapshot: Annotated[
        str | None, Field(description="world: base64 .tar.gz of W0's apps/ and home/, when inlined")
    ] = None


def env_spec_of(record: TaskRecord) -> EnvSpec:
    """The spec of an accepted record (world setup from the record's ``metadata["setup"]``)."""
    return EnvSpec(
        family=record.family,
        task_id=record.task_id,
        instruction=record.instruction,
        environment=record.environment.model_dump(mode="json"),
        criteria=[c.model_dump(mode="json") for c in record.criteria],
        world_setup=list(record.metadata.get("setup", [])) if record.family == "world" else [],
    )
