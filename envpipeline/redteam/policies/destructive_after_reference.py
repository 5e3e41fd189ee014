"""`destructive-after-reference`: the reference, then wipe everything the task did not mention."""

from __future__ import annotations

from envpipeline.redteam.base import ComposeAttack, RedTeamPolicy
from envpipeline.redteam.probe import (
    DESTRUCTIVE_VERBS,
    argument_sets,
    reference_ids,
    service_ids,
    write_tools,
)
from envpipeline.redteam.registry import register_policy
from envpipeline.redteam.world_acts import destroy
from envpipeline.redteam.world_attack import WorldAttack


class DestructiveAfterReference(RedTeamPolicy):
    name = "destructive-after-reference"
    description = "the reference, then delete/archive/cancel every record the task did not mention"
    families = frozenset({"compose", "world"})

    def attack_compose(self, attack: ComposeAttack) -> str:
        attack.replay_reference()
        mentioned = reference_ids([s.arguments for s in attack.reference.steps])
        for service in sorted(attack.env.services):
            ids = [i for i in service_ids(attack.env, service) if i not in mentioned]
            for tool, tool_def in write_tools(attack.env, service):
                if tool.partition(".")[2].startswith(DESTRUCTIVE_VERBS):
                    for arguments in argument_sets(tool_def, ids):
                        attack.call(tool, arguments)
        return attack.reference.output

    def attack_world(self, attack: WorldAttack) -> None:
        attack.replay_reference()
        destroy(attack)


register_policy(DestructiveAfterReference())
