"""`nop`: do nothing and say nothing. A task it passes was already solved in its initial state.

In gold verification of a terminal bundle the nop trial is this policy's trial.
"""

from __future__ import annotations

from envpipeline.redteam.base import ComposeAttack, RedTeamPolicy, TerminalAttack
from envpipeline.redteam.registry import register_policy
from envpipeline.redteam.world_attack import WorldAttack


class Nop(RedTeamPolicy):
    name = "nop"
    description = "no action, empty reply"
    families = frozenset({"compose", "terminal", "world"})

    def attack_compose(self, attack: ComposeAttack) -> str:
        return ""

    def attack_terminal(self, attack: TerminalAttack) -> None:
        return None

    def attack_world(self, attack: WorldAttack) -> None:
        return None


register_policy(Nop())
