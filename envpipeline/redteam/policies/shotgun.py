"""`shotgun` and `shotgun-after-reference`: every write tool on everything the agent can list.

Alone it breaks a task that a blind sweep of writes satisfies; after the reference it spares the
records the reference named (so it does not undo the checked writes) and breaks a task that does not
notice collateral damage.
"""

from __future__ import annotations

from envpipeline.redteam.base import ComposeAttack, RedTeamPolicy
from envpipeline.redteam.probe import argument_sets, reference_ids, service_ids, write_tools
from envpipeline.redteam.registry import register_policy
from envpipeline.redteam.world_acts import sweep as world_sweep
from envpipeline.redteam.world_attack import WorldAttack


def sweep(attack: ComposeAttack, spare: frozenset[str] = frozenset()) -> None:
    """Call every write tool of every service on every id its listings show, except the `spare` ids."""
    for service in sorted(attack.env.services):
        ids = [i for i in service_ids(attack.env, service) if i not in spare]
        for tool, tool_def in write_tools(attack.env, service):
            for arguments in argument_sets(tool_def, ids):
                attack.call(tool, arguments)


class Shotgun(RedTeamPolicy):
    name = "shotgun"
    description = "every write/delete/archive tool on everything it can list, without the reference"
    families = frozenset({"compose", "world"})

    def attack_compose(self, attack: ComposeAttack) -> str:
        sweep(attack)
        return attack.reference.output

    def attack_world(self, attack: WorldAttack) -> None:
        world_sweep(attack)


class ShotgunAfterReference(RedTeamPolicy):
    name = "shotgun-after-reference"
    description = "the reference, then every write tool on everything it can list"
    families = frozenset({"compose", "world"})

    def attack_compose(self, attack: ComposeAttack) -> str:
        # collateral damage, not undoing: the records the reference named keep what it wrote to them
        attack.replay_reference()
        sweep(attack, spare=frozenset(reference_ids([s.arguments for s in attack.reference.steps])))
        return attack.reference.output

    def attack_world(self, attack: WorldAttack) -> None:
        attack.replay_reference()
        world_sweep(attack)


register_policy(Shotgun())
register_policy(ShotgunAfterReference())
