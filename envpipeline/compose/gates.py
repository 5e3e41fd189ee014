"""Verification gates of a composed task; each returns a GateResult with its evidence."""

from __future__ import annotations

import json
from typing import Any

from envpipeline.agents.environment import ComposedEnvironment
from envpipeline.models.task import Criterion, GateResult, ToolCallStep
from envpipeline.rubric import pass_vector
from envpipeline.services.links import PathKey, selected
from envpipeline.value_mentions import stated_values


def canonical_json(value: Any) -> str:
    """A value as sorted JSON (to compare candidates of any type)."""
    return json.dumps(value, sort_keys=True, default=str)


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
    """Gate: values the agent must discover do not leak into the instruction, verbatim or in
    another spelling (`value_mentions.states_value`: 'REF 6295', 'June 15', a person's address)."""
    leaked = stated_values(instruction, hidden_values)
    return GateResult(name="chain_hidden", passed=not leaked, evidence={"leaked": leaked})


def _values_at(data: Any, path: list[PathKey]) -> set[str]:
    """Every value the path could pick when each list index on it is free (the other matches) and
    each selector takes any item it matches (two records holding the key are two answers)."""
    if not path:
        return {canonical_json(data)}
    key, rest = path[0], path[1:]
    if isinstance(key, dict):  # a selector: every item it picks
        return set().union(*(_values_at(item, rest) for item in selected(data, key)))
    if isinstance(key, int):
        items = data if isinstance(data, list) else []
        return set().union(*(_values_at(item, rest) for item in items)) if items else set()
    if not isinstance(data, dict) or key not in data:
        return set()
    return _values_at(data[key], rest)


def unique_hops(steps: list[ToolCallStep], observations: list[dict[str, Any]]) -> GateResult:
    """Gate: every value the reference reads from an observation is the only one it could read.

    A binding that takes item 0 of a search result is ambiguous when another returned item holds
    a different value at the same place: two records match the key, and the task has two answers.
    """
    ambiguous = []
    for index, step in enumerate(steps):
        for arg, binding in step.bindings.items():
            if binding.step >= len(observations) or all(isinstance(k, str) for k in binding.path):
                continue
            values = _values_at(observations[binding.step].get("data"), list(binding.path))
            if len(values) > 1:
                ambiguous.append({"step": index, "argument": arg, "candidates": len(values)})
    return GateResult(
        name="unique_hops",
        passed=not ambiguous,
        reason="" if not ambiguous else f"{len(ambiguous)} bound arguments could take another record's value",
        evidence={"ambiguous": ambiguous},
    )


def ids_discoverable(undiscoverable: int) -> GateResult:
    """Gate: every id the reference uses was shown by an earlier observation (after discovery calls)."""
    return GateResult(
        name="ids_discoverable",
        passed=undiscoverable == 0,
        reason=f"{undiscoverable} ids the reference uses appear in no earlier observation"
        if undiscoverable
        else "",
        evidence={"undiscoverable": undiscoverable},
    )
