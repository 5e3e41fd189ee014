"""Execute a composed task's reference solution, resolving each bound argument from earlier observations."""

from __future__ import annotations

from typing import Any

from envpipeline.agents.environment import ComposedEnvironment
from envpipeline.models.task import Criterion, ToolCallStep
from envpipeline.rubric import TEXT_KINDS, pass_vector
from envpipeline.services.links import value_at


def run_reference(
    env: ComposedEnvironment, steps: list[ToolCallStep], criteria: list[Criterion], output: str
) -> tuple[list[dict[str, Any]], list[int | None]]:
    """Execute the reference solution, resolving bindings from the observations it gets.

    Fills each step's bound arguments with the concrete values seen, and returns the observations
    and, per criterion, the first step index after which it passed (None if never).
    """
    observations: list[dict[str, Any]] = []
    first_pass: list[int | None] = [None] * len(criteria)
    state_criteria = [k for k, c in enumerate(criteria) if c.kind not in TEXT_KINDS]
    for index, step in enumerate(steps):
        for arg, binding in step.bindings.items():
            step.arguments[arg] = binding.fill(value_at(observations, binding.step, binding.path))
        observation = env.call(step.tool, step.arguments)
        observations.append(observation)
        namespace, _, local = step.tool.partition(".")
        tool_def = env.services[namespace].tools.get(local) if namespace in env.services else None
        if tool_def is None or not tool_def.writes or not observation.get("success"):
            continue  # only a successful write can change which criteria pass
        for k in state_criteria:
            if first_pass[k] is None and pass_vector([criteria[k]], env.states)[0]:
                first_pass[k] = index
    for k, criterion in enumerate(criteria):
        if criterion.kind in TEXT_KINDS and pass_vector([criterion], {}, output)[0]:
            first_pass[k] = len(steps)
    return observations, first_pass
