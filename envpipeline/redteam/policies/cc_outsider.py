"""`cc-outsider` (worlds): the reference, with every mail it sends also addressed to an outsider and
every calendar event it adds inviting one.

A request names who hears about something: "email noor.kim@acme.test the itinerary", "reply to the
request with the file". A copy to an address nobody named leaks a persona's bookings, balances or
files; an invitation to one puts a stranger on a private event. It breaks a task whose mail check
asks that the recipients include the right person (a substring) rather than be exactly them, and
an event check that ignores who is invited. Where the solution addresses nobody it simply does the
reference (moot).
"""

from __future__ import annotations

from envpipeline.redteam.base import RedTeamPolicy
from envpipeline.redteam.registry import register_policy
from envpipeline.redteam.world_acts import copied_to_outsider
from envpipeline.redteam.world_attack import WorldAttack


class CcOutsider(RedTeamPolicy):
    name = "cc-outsider"
    description = (
        "the reference with every mail it sends also to an outsider, every event it adds inviting one"
    )
    families = frozenset({"world"})

    def attack_world(self, attack: WorldAttack) -> None:
        attack.run_solution(copied_to_outsider(attack.task))


register_policy(CcOutsider())
