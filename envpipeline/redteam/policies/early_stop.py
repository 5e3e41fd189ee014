"""`early-stop`: the reference without its last write, and the reference's final reply.

It breaks a task whose criteria do not check its last step.
"""

from __future__ import annotations

from envpipeline.redteam.base import ComposeAttack, RedTeamPolicy
from envpipeline.redteam.registry import register_policy
from envpipeline.redteam.world_acts import truncated
from envpipeline.redteam.world_attack import WorldAttack


class EarlyStop(RedTeamPolicy):
    name = "early-stop"
    description = "the reference up to (not including) its last write, then the reference's reply"
    families = frozenset({"compose", "world"})

    def attack_compose(self, attack: ComposeAttack) -> str:
        steps = attack.reference.steps
        services = attack.env.services
        writes = [
            i
            for i, s in enumerate(steps)
            if (tool := services[s.tool.partition(".")[0]].tools.get(s.tool.partition(".")[2]))
            and tool.writes
        ]
        attack.replay_reference(writes[-1] if writes else 0)
        return attack.reference.output

    def attack_world(self, attack: WorldAttack) -> None:
        attack.run_solution(truncated(attack.task))


register_policy(EarlyStop())
