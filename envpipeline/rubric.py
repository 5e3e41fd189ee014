"""Executable rubric checks on the final joint state and the recorded outputs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from envpipeline.models.task import Condition, Criterion


def condition_holds(actual: Any, condition: Condition) -> bool:
    """Whether one field value satisfies one condition."""
    expected = condition.value
    if condition.op == "eq":
        return actual == expected
    if condition.op == "ne":
        return actual != expected
    if condition.op == "contains":
        try:
            return expected in actual
        except TypeError:
            return False
    if isinstance(actual, list):
        return any(str(expected).lower() in str(item).lower() for item in actual)
    return str(expected).lower() in str(actual).lower()


def record_matches(record: Any, match: Mapping[str, Condition]) -> bool:
    """Whether a record satisfies every condition; unrelated fields are ignored."""
    fields = record if isinstance(record, dict) else None
    for name, cond in match.items():
        actual = fields.get(name) if fields is not None else getattr(record, name, None)
        if cond.op == "eq":
            if actual != cond.value:
                return False
        elif not condition_holds(actual, cond):
            return False
    return True


def _records(state: Any, collection: str) -> list[Any]:
    items = state.get(collection) if isinstance(state, dict) else getattr(state, collection, None)
    if items is None:
        return []
    if isinstance(items, dict):
        return list(items.values())
    return list(items)


def evaluate_criterion(
    criterion: Criterion, states: Mapping[str, BaseModel | dict], output: str = ""
) -> bool:
    """Whether one criterion passes on the joint state (service -> state) and final output."""
    if criterion.kind == "output_contains":
        expected = str(criterion.match["text"].value).lower()
        return expected in output.lower()
    state = states.get(criterion.service or "")
    if state is None:
        return False
    found = any(record_matches(r, criterion.match) for r in _records(state, criterion.collection or ""))
    return found if criterion.kind == "record_exists" else not found


def pass_vector(
    criteria: list[Criterion], states: Mapping[str, BaseModel | dict], output: str = ""
) -> list[bool]:
    """The per-criterion pass vector of one final state."""
    return [evaluate_criterion(c, states, output) for c in criteria]
