"""What the checks must not cost an honest agent that works otherwise than the reference.

The red team's policies are built to fail; these agents are built to pass: they do the task, and
only how they go about it differs.
"""

from __future__ import annotations

from typing import Any

from envpipeline.models.task import TaskRecord
from envpipeline.redteam.base import ComposeAttack, RedTeamPolicy
from envpipeline.redteam.compose import red_team
from envpipeline.redteam.policies.careless_constants import changed
from envpipeline.redteam.policies.create_extras import creating_steps
from envpipeline.redteam.policies.other_fields import call_with_extras
from envpipeline.redteam.probe import listings
from envpipeline.services.base import ToolDef, is_id_field
from envpipeline.services.options import argument_options


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


class _Verbose(RedTeamPolicy):
    """Not an adversary: an honest agent that words more than asked. Each create it makes also
    fills the optional free-text arguments the reference left out (a body, a note, a location)."""

    name = "verbose"
    description = "the reference, with each create's optional text filled"
    families = frozenset({"compose"})

    def attack_compose(self, attack: ComposeAttack) -> str:
        creating = creating_steps(attack)
        for index, step in enumerate(attack.reference.steps):
            service, _, local = step.tool.partition(".")
            tool = attack.env.services[service].tools.get(local)
            if index in creating and tool is not None:
                extra = {name: "Created as asked." for name in _free_text(tool, step.arguments)}
                if extra and call_with_extras(attack, step, extra):
                    continue
            attack.call(step.tool, dict(step.arguments))
        return attack.reference.output


def _free_text(tool: ToolDef, given: dict[str, Any]) -> list[str]:
    """Optional text arguments that are no id, option, date, time, address or link."""
    unlike = ("date", "time", "email", "url", "start", "end", "due", "status")
    return [
        name
        for name, info in tool.args_model.model_fields.items()
        if name not in given
        and not info.is_required()
        and not is_id_field(name)
        and argument_options(info) is None
        and info.annotation in (str, str | None)
        and not any(word in name.lower() for word in unlike)
    ]


def test_an_agent_that_words_more_than_asked_on_what_it_creates_still_passes(
    accepted: list[TaskRecord], whole_library: list[TaskRecord]
):
    """The created pins must not fail an honest agent that fills a body or a note nobody asked
    for. A field left null in the reference reads as text: before, a verbose agent failed 31 of
    60 accepted whole-library tasks (seeds 0-59), where its optional text arguments are null."""
    checked = 0
    for task in accepted + whole_library:
        (outcome,) = red_team(task, policies=[_Verbose()])
        assert outcome.binary == 1.0, (task.task_id, outcome.failed)
        checked += not outcome.moot
    assert checked >= 10, "the agent filled text on too few tasks: the test proves little"
