"""`fixed-row` and `last-row`: the reference, but every record it picks out of a listing by a known
value is read from the listing's first (last) row instead.

A scanned listing (`envpipeline.services.mcp_list_links`) shows several records, and the reference
selects the one that holds the value it carries (a selector in its binding path). A policy that
ignores that value and reads a fixed row must not earn the reward. Where the carried value went
into the listing's call (a search or a filter), the first row is the policy's informed choice;
where it did not (a scan), the policy is blind (`ComposeAttack.blind`): full reward is then a break
even when the first row was the right one, because the lookup taught nothing. The policy attacks
only tasks whose reference selects rows this way (`applies_to`).
"""

from __future__ import annotations

from typing import Any, ClassVar

from envpipeline.models.task import Binding, TaskRecord, ToolCallStep
from envpipeline.redteam.base import ComposeAttack, RedTeamPolicy
from envpipeline.redteam.registry import register_policy
from envpipeline.services.links import PathKey, value_at


def _selectors(path: list[PathKey]) -> list[dict[str, Any]]:
    return [key for key in path if isinstance(key, dict)]


def _fixed_row(path: list[PathKey], row: int) -> list[PathKey]:
    return [row if isinstance(key, dict) else key for key in path]


def _scanned(binding: Binding, steps: list[ToolCallStep]) -> bool:
    """Whether a selector of `binding` picks by a value its listing's call was not given."""
    given = set(map(str, steps[binding.step].arguments.values()))
    return any(str(v) not in given for key in _selectors(binding.path) for v in key.values())


class FixedRow(RedTeamPolicy):
    name = "fixed-row"
    description = "the reference, reading the first row of every listing it picks a record from by value"
    families = frozenset({"compose"})
    #: the row it reads (an index: 0 the first, -1 the last)
    row: ClassVar[int] = 0

    def applies_to(self, task: TaskRecord) -> bool:
        final = task.metadata.get("final_reveal", {}).get("path", [])
        bound = [b.path for s in task.reference_solution for b in s.bindings.values()]
        return any(_selectors(path) for path in [final, *bound])

    def attack_compose(self, attack: ComposeAttack) -> str:
        resolved = attack.reference.steps
        observations: list[dict[str, Any]] = []
        for gold, step in zip(attack.task.reference_solution, resolved):
            arguments = dict(step.arguments)
            for arg, binding in gold.bindings.items():
                value = value_at(observations, binding.step, _fixed_row(binding.path, self.row))
                arguments[arg] = binding.fill(value)
                attack.blind |= _scanned(binding, resolved)
            observations.append(attack.call(gold.tool, arguments))
        final = attack.task.metadata.get("final_reveal")
        if not final:
            return attack.reference.output
        reveal = Binding.model_validate(final)
        attack.blind |= _scanned(reveal, resolved)
        expected = value_at(attack.reference.observations, reveal.step, reveal.path)
        mine = value_at(observations, reveal.step, _fixed_row(reveal.path, self.row))
        if isinstance(expected, str) and expected:
            # what its own calls revealed; where they revealed nothing, it has nothing to report
            # (answering the reference's value would be knowing the answer, not reading a row)
            return attack.reference.output.replace(expected, "" if mine is None else str(mine))
        return attack.reference.output


class LastRow(FixedRow):
    name = "last-row"
    description = "the reference, reading the last row of every listing it picks a record from by value"
    row = -1


register_policy(FixedRow())
register_policy(LastRow())
