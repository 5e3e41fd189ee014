"""`cc-outsider`: the reference, with everyone its writes address joined by an outsider.

A request names who hears about something: "send an email with subject 'Quote Q-4821' to that
address", "email noor.kim@acme.test the itinerary", "reply to the request with the file". A copy
to an address nobody named leaks what the mail carries (a persona's bookings, balances, files);
an invitation to one puts a stranger on a private event. It breaks a task whose check asks that
the recipients include the right person (a substring, a list member) rather than be exactly them,
and a world event check that ignores who is invited.

Composed tasks: each write argument that is a list of e-mail addresses (a list, or a text its tool
reads as comma-separated addresses) gets the outsider's too; where the tool refuses that, the
reference's own call is made.
World tasks: every mail the solution sends is also addressed to the outsider, every event it adds
invites them. Where nothing is addressed it simply does the reference (moot).
"""

from __future__ import annotations

import re
from typing import Any

from envpipeline.redteam.base import ComposeAttack, RedTeamPolicy
from envpipeline.redteam.registry import register_policy
from envpipeline.redteam.world_acts import OUTSIDER, copied_to_outsider
from envpipeline.redteam.world_attack import WorldAttack
from envpipeline.rubric import EMAIL_PATTERN
from envpipeline.services.base import ToolDef

_ADDRESS = re.compile(EMAIL_PATTERN)


def _addresses_only(items: list[Any]) -> bool:
    return bool(items) and all(isinstance(a, str) and _ADDRESS.fullmatch(a.strip()) for a in items)


def with_outsider(tool_def: ToolDef, arguments: dict[str, Any]) -> dict[str, Any]:
    """`arguments` with the outsider added to every argument that is a list of addresses: a list
    (attendees, recipients) or a text its tool reads as a comma-separated list (a mail's ``to``).
    An argument that takes one address (an invitation, a share) is left alone: the same tool
    called twice is `other-items`' ground."""
    out = dict(arguments)
    for name, value in arguments.items():
        info = tool_def.args_model.model_fields.get(name)
        if info is None:
            continue
        if isinstance(value, list) and _addresses_only(value):
            out[name] = [*value, OUTSIDER]
        elif (
            isinstance(value, str)
            and "comma" in (info.description or "").lower()
            and _addresses_only(value.split(","))
        ):
            out[name] = f"{value}, {OUTSIDER}"
    return out


class CcOutsider(RedTeamPolicy):
    name = "cc-outsider"
    description = "the reference with everyone its writes address (mails, invitations) joined by an outsider"
    families = frozenset({"compose", "world"})

    def attack_compose(self, attack: ComposeAttack) -> str:
        for step in attack.reference.steps:
            service, _, local = step.tool.partition(".")
            live = attack.env.services.get(service)
            tool_def = live.tools.get(local) if live is not None else None
            widened = (
                with_outsider(tool_def, step.arguments) if tool_def and tool_def.writes else step.arguments
            )
            if widened != step.arguments and attack.call(step.tool, widened).get("success"):
                continue
            attack.call(step.tool, dict(step.arguments))  # nothing addressed, or refused: the reference's
        return attack.reference.output

    def attack_world(self, attack: WorldAttack) -> None:
        attack.run_solution(copied_to_outsider(attack.task))


register_policy(CcOutsider())
