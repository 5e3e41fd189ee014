"""The one gate outcome of every family (`GateResult`) and the one way to summarize many of them."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any

from pydantic import Field

from envpipeline.models.base import Strict


class GateResult(Strict):
    """The outcome of one gate or check, with its evidence.

    Used for CompoWorld gates, WildAWM task gates and world-day checks, and terminal static checks.
    """

    name: Annotated[str, Field(description="gate or check name")]
    passed: Annotated[bool, Field(description="whether it passed")]
    reason: Annotated[str, Field(description="why, in words (names the file or value on failure)")] = ""
    evidence: Annotated[dict[str, Any], Field(description="what the gate observed")] = {}


def gate_statistics(gate_lists: Iterable[Iterable[GateResult]]) -> dict[str, dict[str, Any]]:
    """Per gate name: passed / total / rate, over the records that ran it (names sorted)."""
    stats: dict[str, dict[str, Any]] = {}
    for gates in gate_lists:
        for gate in gates:
            entry = stats.setdefault(gate.name, {"passed": 0, "total": 0})
            entry["total"] += 1
            entry["passed"] += int(gate.passed)
    for entry in stats.values():
        entry["rate"] = round(entry["passed"] / entry["total"], 4) if entry["total"] else 0.0
    return dict(sorted(stats.items()))


def gate_pass_rates(gate_lists: Iterable[Iterable[GateResult]]) -> dict[str, float]:
    """Per gate name: the share of records that passed it, over the records that ran it."""
    return {name: entry["rate"] for name, entry in gate_statistics(gate_lists).items()}
