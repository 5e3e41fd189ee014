"""Verification gates of a composed task; each returns a GateResult with its evidence."""

from __future__ import annotations

from typing import Any

from envpipeline.agents.environment import ComposedEnvironment
from envpipeline.models.task import Criterion, GateResult, ToolCallStep
from envpipeline.rubric import pass_vector
from envpipeline.services.links import read_path


def run_reference(
    env: ComposedEnvironment, steps: list[ToolCallStep], criteria: list[Criterion], output: str
) -> tuple[list[dict[str, Any]], list[int | None]]:
    """Execute the reference solution, resolving bindings from the observations it gets.

    Fills each step's bound arguments with the concrete values seen, and returns the observations
    and, per criterion, the first step index after which it passed (None if never).
    """
    observations: list[dict[str, Any]] = []
    first_pass: list[int | None] = [None] * len(criteria)
    state_criteria = [k for k, c in enumerate(criteria) if c.kind != "output_contains"]
    for index, step in enumerate(steps):
        for arg, binding in step.bindings.items():
            try:
                value = read_path(observations[binding.step].get("data"), binding.path)
            except (KeyError, IndexError):
                value = None
            step.arguments[arg] = (
                binding.template.format(value=value) if binding.template != "{value}" else value
            )
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
        if criterion.kind == "output_contains" and pass_vector([criterion], {}, output)[0]:
            first_pass[k] = len(steps)
    return observations, first_pass


def reference_passes(
    criteria: list[Criterion], env: ComposedEnvironment, output: str, observations: list[dict[str, Any]]
) -> GateResult:
    """Gate: the reference solution passes every criterion."""
    vector = pass_vector(criteria, env.states, output)
    failed_calls = [i for i, o in enumerate(observations) if not o.get("success")]
    return GateResult(
        name="reference_pass",
        passed=all(vector) and not failed_calls,
        evidence={"pass_vector": vector, "failed_calls": failed_calls, "calls": len(observations)},
    )


def initial_unsatisfied(criteria: list[Criterion], initial_state: dict[str, Any]) -> GateResult:
    """Gate: the untouched initial state (and an empty reply) fails at least one criterion."""
    vector = pass_vector(criteria, initial_state, "")
    return GateResult(name="initial_unsatisfied", passed=not all(vector), evidence={"pass_vector": vector})


def criteria_reachable(
    criteria: list[Criterion], steps: list[ToolCallStep], first_pass: list[int | None], exposed: set[str]
) -> GateResult:
    """Gate: every criterion becomes true after some prefix of calls to exposed tools."""
    foreign = sorted({s.tool for s in steps} - exposed)
    unreached = [c.id for c, at in zip(criteria, first_pass) if at is None]
    wrong_tool = [
        c.id
        for c, at in zip(criteria, first_pass)
        if at is not None and c.achieved_by and at < len(steps) and c.achieved_by not in exposed
    ]
    return GateResult(
        name="criteria_reachable",
        passed=not foreign and not unreached and not wrong_tool,
        evidence={
            "first_passing_step": {c.id: at for c, at in zip(criteria, first_pass)},
            "tools_not_exposed": foreign,
            "unreached": unreached,
        },
    )


def replay_deterministic(task_hash: str, replay_hash: str) -> GateResult:
    """Gate: composing the same seed again yields the same task hash."""
    return GateResult(
        name="replay_deterministic",
        passed=task_hash == replay_hash,
        evidence={"hash": task_hash[:16], "replay_hash": replay_hash[:16]},
    )


def chain_hidden(instruction: str, hidden_values: list[str]) -> GateResult:
    """Gate: values the agent must discover do not leak into the instruction."""
    leaked = [v for v in hidden_values if v and v.lower() in instruction.lower()]
    return GateResult(name="chain_hidden", passed=not leaked, evidence={"leaked": leaked})
