"""`nop`: do nothing and say nothing. A task it passes was already solved in its initial state."""

from __future__ import annotations

from envpipeline.redteam.base import ComposeAttack, RedTeamPolicy
from envpipeline.redteam.registry import register_policy
from envpipeline.redteam.world import WorldAttack


class Nop(RedTeamPolicy):
    name = "nop"
    description = "no action, empty reply"
    families = frozenset({"compose", "world"})

    def attack_compose(self, attack: ComposeAttack) -> str:
        return ""

    def attack_world(self, attack: WorldAttack) -> None:
        return None


register_policy(Nop())
