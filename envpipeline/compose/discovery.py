"""Discoverable ids: a reference call may only use an id that an earlier observation showed.

Some hops and actions name a record by an id the planted data flow never reveals (the Archive
folder, the list an item goes into). An agent cannot know such an id without looking, so a
reference that uses it teaches made-up ids. `with_discovery_calls` runs the reference and, before
each call whose id argument nothing so far has shown, inserts the listing call of that service
that shows it (a read with no arguments), renumbering the bindings of later steps.
"""

from __future__ import annotations

import json
from typing import Any

from envpipeline.agents.environment import ComposedEnvironment
from envpipeline.models.task import Binding, ToolCallStep
from envpipeline.services.base import is_id_field
from envpipeline.services.links import value_at


def _resolved(step: ToolCallStep, observations: list[dict[str, Any]]) -> dict[str, Any]:
    arguments = dict(step.arguments)
    for arg, binding in step.bindings.items():
        arguments[arg] = binding.fill(value_at(observations, binding.step, binding.path))
    return arguments


def undiscovered_ids(arguments: dict[str, Any], seen: str) -> list[str]:
    """The id arguments of one call whose values appear nowhere in what the agent has seen."""
    return [a for a, v in arguments.items() if is_id_field(a) and isinstance(v, str) and v and v not in seen]


def _listing_that_shows(
    env: ComposedEnvironment, service: str, value: str
) -> tuple[str, dict[str, Any]] | None:
    """The first no-argument read tool of `service` whose observation shows `value`."""
    for name, tool_def in sorted(env.services[service].tools.items()):
        required = [f for f, info in tool_def.args_model.model_fields.items() if info.is_required()]
        if tool_def.writes or required:
            continue
        observation = env.call(f"{service}.{name}", {})
        if observation.get("success") and value in json.dumps(observation["data"], ensure_ascii=False):
            return f"{service}.{name}", observation
    return None


def with_discovery_calls(
    steps: list[ToolCallStep], env: ComposedEnvironment, instruction: str
) -> tuple[list[ToolCallStep], dict[int, int], int]:
    """The reference with a listing call before each use of an id nothing showed yet.

    Runs the reference on `env` (which it changes). Returns the new steps, where each old step
    went, and how many ids stay undiscoverable (no listing shows them; a gate rejects the task).
    """
    out: list[ToolCallStep] = []
    observations: list[dict[str, Any]] = []
    index_of: dict[int, int] = {}  # old step index -> new step index
    seen = instruction
    missing = 0
    for old_index, step in enumerate(steps):
        renumbered = {
            arg: Binding(step=index_of[b.step], path=b.path, template=b.template)
            for arg, b in step.bindings.items()
        }
        step = step.model_copy(update={"bindings": renumbered})
        arguments = _resolved(step, observations)
        service = step.tool.partition(".")[0]
        for arg in undiscovered_ids(arguments, seen):
            found = _listing_that_shows(env, service, arguments[arg]) if service in env.services else None
            if found is None:
                missing += 1
                continue
            tool, observation = found
            out.append(ToolCallStep(tool=tool, arguments={}))
            observations.append(observation)
            seen += json.dumps(observation.get("data"), ensure_ascii=False)
        index_of[old_index] = len(out)
        out.append(step)
        observation = env.call(step.tool, arguments)
        observations.append(observation)
        seen += json.dumps(observation.get("data", observation.get("error")), ensure_ascii=False)
    return out, index_of, missing
