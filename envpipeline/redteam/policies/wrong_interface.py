"""`wrong-interface` (worlds): the reference, with each write the instruction names an interface for
made through another one (the webmail instead of the MCP mail tool, and back).

It breaks a task that checks what changed but not through which interface, when the instruction
names one. Where no write can go through another interface it simply does the reference (moot).
"""

from __future__ import annotations

from envpipeline.redteam.base import RedTeamPolicy
from envpipeline.redteam.registry import register_policy
from envpipeline.redteam.world_acts import rerouted
from envpipeline.redteam.world_attack import WorldAttack


class WrongInterface(RedTeamPolicy):
    name = "wrong-interface"
    description = "the reference with each named-interface write made through another interface"
    families = frozenset({"world"})

    def attack_world(self, attack: WorldAttack) -> None:
        attack.run_solution(rerouted(attack.task))


register_policy(WrongInterface())
