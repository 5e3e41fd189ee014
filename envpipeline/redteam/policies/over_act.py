"""`over-act`: the reference, with every write repeated and widened to the other records.

It breaks a task that checks that the right thing happened but not that only it happened: buy
every option, message every channel, update every event.
"""

from __future__ import annotations

from envpipeline.redteam.base import ComposeAttack, RedTeamPolicy
from envpipeline.redteam.probe import MAX_CALLS_PER_TOOL, service_ids
from envpipeline.redteam.registry import register_policy
from envpipeline.redteam.world_acts import buy, candidate_products
from envpipeline.redteam.world_attack import WorldAttack
from envpipeline.services.base import is_id_field


class OverAct(RedTeamPolicy):
    name = "over-act"
    description = "the reference, then each of its writes again, and on every other record of its kind"
    families = frozenset({"compose", "world"})

    def attack_compose(self, attack: ComposeAttack) -> str:
        attack.replay_reference()
        for step, observation in zip(attack.reference.steps, attack.reference.observations):
            service, _, local = step.tool.partition(".")
            tool_def = attack.env.services[service].tools.get(local)
            if tool_def is None or not tool_def.writes or not observation.get("success"):
                continue
            attack.call(step.tool, dict(step.arguments))  # the same write once more
            id_args = [a for a, v in step.arguments.items() if is_id_field(a) and isinstance(v, str)]
            if not id_args:
                continue
            others = [i for i in service_ids(attack.env, service) if i != step.arguments[id_args[0]]]
            for other in others[:MAX_CALLS_PER_TOOL]:
                attack.call(step.tool, {**step.arguments, id_args[0]: other})
        return attack.reference.output

    def attack_world(self, attack: WorldAttack) -> None:
        attack.replay_reference()
        attack.run_solution()  # every write once more
        buy(attack, candidate_products(attack.task))  # and every other option


register_policy(OverAct())
