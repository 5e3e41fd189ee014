"""`shotgun` and `shotgun-after-reference`: every write tool on everything the agent can list.

Alone it breaks a task that a blind sweep of writes satisfies; after the reference it breaks a
task that does not notice collateral damage.
"""

from __future__ import annotations

from envpipeline.redteam.base import ComposeAttack, RedTeamPolicy
from envpipeline.redteam.probe import argument_sets, service_ids, write_tools
from envpipeline.redteam.registry import register_policy
from envpipeline.redteam.world_acts import sweep as world_sweep
from envpipeline.redteam.world_attack import WorldAttack


def sweep(attack: ComposeAttack) -> None:
    """Call every write tool of every service on every id its listings show."""
    for service in sorted(attack.env.services):
        ids = service_ids(attack.env, service)
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
        attack.replay_reference()
        sweep(attack)
        return attack.reference.output

    def attack_world(self, attack: WorldAttack) -> None:
        attack.run_solution()
        world_sweep(attack)


register_policy(Shotgun())
register_policy(ShotgunAfterReference())
