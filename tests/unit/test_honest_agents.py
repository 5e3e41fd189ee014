"""What the checks must not cost an honest agent that works otherwise than the reference.

The red team's policies are built to fail; these agents are built to pass: they do the task, and
only how they go about it differs. (The agent that words more than asked on what it creates is in
`test_created_records.py`.)
"""

from __future__ import annotations

from envpipeline.models.task import TaskRecord
from envpipeline.redteam.base import ComposeAttack, RedTeamPolicy
from envpipeline.redteam.compose import red_team
from envpipeline.redteam.policies.careless_constants import changed
from envpipeline.redteam.probe import listings


class _Curious(RedTeamPolicy):
    """Looks around first: every listing a service offers without arguments, and each of the
    reference's reads asked about other values before the right one (a search that misses), then
    the reference's calls."""

    name = "curious"
    description = "every listing, and each read asked about other values first, then the reference"
    families = frozenset({"compose"})

    def attack_compose(self, attack: ComposeAttack) -> str:
        for service in sorted(attack.env.services):
            listings(attack.env, service)
        for step in attack.reference.steps:
            service, _, local = step.tool.partition(".")
            tool = attack.env.services[service].tools.get(local)
            if tool is not None and not tool.writes:
                attack.call(step.tool, {name: changed(value) for name, value in step.arguments.items()})
            attack.call(step.tool, dict(step.arguments))
        return attack.reference.output


def test_an_agent_that_looks_around_first_passes_and_leaves_no_trace(
    accepted: list[TaskRecord], whole_library: list[TaskRecord]
):
    """Reads leave the state as it was, simulated ones included (a read the simulated store
    recorded would be a change the collateral check fails), so exploring costs nothing."""
    for task in accepted + whole_library:
        (outcome,) = red_team(task, policies=[_Curious()])
        assert outcome.binary == 1.0, (task.task_id, outcome.failed)
        assert outcome.moot, f"{task.task_id}: looking around changed the state"
        assert outcome.calls > len(task.reference_solution)
