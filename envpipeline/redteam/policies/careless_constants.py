"""`careless-constants`: the reference, with every argument its writes state changed.

A request states more about a write than the value the chain carries into it: "create a trip to
that city (traveler name 'Jade Quispe', start date '2026-08-15')", "create an issue with that
title (project key 'PK-7521')", "reply 'Thanks, confirmed.'". A policy that writes the chain's
value but anything at all for the rest must not earn the reward: where it does, the criteria check
the record's key and not what the request asked it to hold, and the reward teaches an agent that
the stated details do not matter (35 of 54 accepted curated tasks, before `compose.stated`).

The policy changes the arguments of each write that the instruction states (`stated_arguments`)
other than the chain's values and record ids (another id names another record, a call that fails
and hides the rest), and takes a change back where the tool refuses it; a changed argument the
tool does not keep leaves the state as the reference left it, a moot attempt.
"""

from __future__ import annotations

from typing import Any

from envpipeline.compose.stated import stated_arguments
from envpipeline.models.task import TaskRecord, ToolCallStep
from envpipeline.redteam.base import ComposeAttack, RedTeamPolicy
from envpipeline.redteam.probe import writes
from envpipeline.redteam.registry import register_policy
from envpipeline.services.base import is_id_field


def careless_arguments(task: TaskRecord, step: ToolCallStep) -> list[str]:
    """The arguments of one reference step the policy changes: a write's stated ones, not the
    chain's values, not record ids."""
    if not writes(step.tool, unknown=False):
        return []
    chain = {str(v) for v in task.metadata.get("planted_values", [])}
    return [
        name
        for name, value in stated_arguments(step, task.instruction).items()
        if str(value) not in chain and not is_id_field(name)
    ]


def changed(value: Any) -> Any:
    """Another value of the same kind: the opposite flag, the next number, a list with its last
    item changed, or the text with its last letter or digit moved on by one (a date stays a date,
    an email an email, and a check that the stored text contains the stated one fails: 'support'
    -> 'supporu', '08-15' -> '08-16')."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, list) and value:  # a stated list: its last item changed
        return [*value[:-1], changed(value[-1])]
    if isinstance(value, int | float):
        return value + 1
    text = str(value)
    for i in range(len(text) - 1, -1, -1):
        char = text[i]
        if char.isdigit():
            return f"{text[:i]}{(int(char) + 1) % 10}{text[i + 1 :]}"
        if char.isascii() and char.isalpha():
            base = ord("a") if char.islower() else ord("A")
            return f"{text[:i]}{chr(base + (ord(char) - base + 1) % 26)}{text[i + 1 :]}"
    return f"{text}x"


class CarelessConstants(RedTeamPolicy):
    name = "careless-constants"
    description = "the reference, with every argument its writes state (beyond the chain's values) changed"
    families = frozenset({"compose"})

    def applies_to(self, task: TaskRecord) -> bool:
        return any(careless_arguments(task, step) for step in task.reference_solution)

    def attack_compose(self, attack: ComposeAttack) -> str:
        for gold, step in zip(attack.task.reference_solution, attack.reference.steps):
            names = careless_arguments(attack.task, gold)
            # a change the tool refuses (a value outside an enum) is taken back, the last first,
            # until the call goes through: a refused call changes nothing and would hide the rest
            while names:
                arguments = {**step.arguments, **{n: changed(step.arguments[n]) for n in names}}
                if attack.call(step.tool, arguments).get("success"):
                    break
                names = names[:-1]
            else:
                attack.call(step.tool, dict(step.arguments))
        return attack.reference.output


register_policy(CarelessConstants())
