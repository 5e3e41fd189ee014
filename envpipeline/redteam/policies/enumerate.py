"""`enumerate`: do the reference's calls, then answer with every value it could observe.

It breaks a task whose answer check is "the reply contains the value": listing every candidate
contains the right one.
"""

from __future__ import annotations

from envpipeline.redteam.base import ComposeAttack, RedTeamPolicy
from envpipeline.redteam.probe import listings, strings_in
from envpipeline.redteam.registry import register_policy
from envpipeline.redteam.world_acts import enumerated
from envpipeline.redteam.world_attack import WorldAttack


class Enumerate(RedTeamPolicy):
    name = "enumerate"
    description = "the reference's calls, then a reply listing every value the agent could observe"
    families = frozenset({"compose", "world"})

    def attack_compose(self, attack: ComposeAttack) -> str:
        attack.replay_reference()
        seen = [s for o in attack.reference.observations for s in strings_in(o.get("data"))]
        for service in sorted(attack.env.services):
            seen += [s for data in listings(attack.env, service) for s in strings_in(data)]
        return "Candidates: " + ", ".join(dict.fromkeys(seen))

    def attack_world(self, attack: WorldAttack) -> None:
        attack.run_solution(enumerated(attack.task))


register_policy(Enumerate())
