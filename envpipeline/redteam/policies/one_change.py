"""`one-change`: the changes of the policies that widen the reference, made one at a time.

`careless-constants`, `other-fields`, `other-items`, `create-extras`, `create-options` and
`cc-outsider` each make every change they have in one attempt: a stated detail miscopied, an
optional field set on an edited record, an outsider added to a list. A change the criteria let
through then hides behind another change of the same attempt that they catch (`create-options`
broke 14 of 110 accepted curated tasks alone and none beside `create-extras`' lists and flags).
An agent trained on the reward is not so obliging: it meets the changes one at a time, and the
one that pays is the one it learns.

This policy lists every change those policies make, each alone (one argument of one write), tries
each on a scratch copy of the task's environment and scores it with the task's criteria, as a
trainer's reward would, then acts out the first one rewarded in full that leaves another state
than the reference (with none, the one that passes the most criteria). Before it, an imported
update tool wrote its defaults for the arguments it was not given (Box's
`requires_all_assignees_to_complete`, Confluence's `include_content`); the reference thereby
"changed" those fields, the collateral check let them be anything, and one of them set alone
earned the reward on 6 of 297 accepted whole-library tasks of seeds 0-299.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from envpipeline.agents.environment import ComposedEnvironment
from envpipeline.models.task import TaskRecord
from envpipeline.redteam.base import ComposeAttack, RedTeamPolicy, ReferenceRun
from envpipeline.redteam.compose import judged
from envpipeline.redteam.policies.careless_constants import careless_arguments, changed
from envpipeline.redteam.policies.cc_outsider import with_outsider
from envpipeline.redteam.policies.create_extras import creating_steps, unasked_arguments
from envpipeline.redteam.policies.other_fields import edits, extra_arguments
from envpipeline.redteam.probe import writes
from envpipeline.redteam.registry import register_policy
from envpipeline.services.base import is_id_field

#: how a change is made at its step: `instead` of the reference's call (the reference's call where
#: the tool refuses it), `after` the reference's call, or `between` the reference's call and the
#: same call again (so the values the reference set stand)
Timing = Literal["instead", "after", "between"]


@dataclass(frozen=True)
class Change:
    """One argument of one reference write, set otherwise: the step, when the changed call is
    made, the argument and its value, and the policy whose change it is."""

    step: int
    timing: Timing
    argument: str
    value: Any
    policy: str


@dataclass
class Replay:
    """The reference's steps that create a record (as `create-extras` finds them), and those that
    edit one that existed before, with their observations (as `other-fields` finds them)."""

    creating: set[int]
    edited: dict[int, dict[str, Any]]


def replayed(attack: ComposeAttack) -> Replay:
    """`attack`'s reference replayed on copies of its environment (call before the attack acts)."""
    scratch = ComposeAttack(
        attack.task, ComposedEnvironment.from_initial_state(attack.env.snapshot()), attack.reference
    )
    index = {id(step): n for n, step in enumerate(attack.reference.steps)}
    edited = {index[id(step)]: observation for step, _, observation in edits(scratch)}
    return Replay(creating_steps(attack), edited)


def single_changes(attack: ComposeAttack, replay: Replay) -> list[Change]:
    """Every change of the widening policies, each alone."""
    creating, edited = replay.creating, replay.edited
    found: list[Change] = []
    for index, step in enumerate(attack.reference.steps):
        service, _, local = step.tool.partition(".")
        live = attack.env.services.get(service)
        tool_def = live.tools.get(local) if live is not None else None
        if tool_def is None or not tool_def.writes:
            continue
        found += [
            Change(index, "instead", name, changed(step.arguments[name]), "careless-constants")
            for name in careless_arguments(attack.task, step)
        ]
        if index in creating:
            for options, policy in ((False, "create-extras"), (True, "create-options")):
                extra = unasked_arguments(tool_def, step.arguments, options)
                found += [Change(index, "instead", n, v, policy) for n, v in extra.items()]
        elif index in edited:
            extra = extra_arguments(tool_def, step.arguments, edited[index])
            found += [Change(index, "after", n, v, "other-fields") for n, v in extra.items()]
            found += [
                Change(index, "between", n, changed(v), "other-items")
                for n, v in step.arguments.items()
                if not is_id_field(n)
            ]
        widened = with_outsider(tool_def, step.arguments)
        found += [
            Change(index, "instead", n, widened[n], "cc-outsider")
            for n in step.arguments
            if widened[n] != step.arguments[n]
        ]
    unique: dict[tuple[int, str, str, str], Change] = {}
    for change in found:  # the same change of two policies is tried once
        unique.setdefault((change.step, change.timing, change.argument, repr(change.value)), change)
    return list(unique.values())


Caller = Callable[[str, dict[str, Any]], dict[str, Any]]


def act(
    env: ComposedEnvironment, reference: ReferenceRun, change: Change, call: Caller | None = None
) -> None:
    """Make the reference's calls on `env` with `change` at its step (through `call`, a counting
    caller such as `ComposeAttack.call`, where given)."""
    call = call or env.call
    for index, step in enumerate(reference.steps):
        arguments = dict(step.arguments)
        if index != change.step:
            call(step.tool, arguments)
            continue
        changed_call = {**arguments, change.argument: change.value}
        if change.timing == "instead":
            if not call(step.tool, changed_call).get("success"):
                call(step.tool, arguments)
            continue
        call(step.tool, arguments)
        if call(step.tool, changed_call).get("success") and change.timing == "between":
            call(step.tool, dict(arguments))


def score(
    task: TaskRecord, stored: dict[str, dict[str, Any]], reference: ReferenceRun, change: Change
) -> tuple[int, bool]:
    """(criteria passed, whether full reward was earned in another state than the reference's) of
    one change tried on a fresh copy of the stored environment, with the reference's reply."""
    env = ComposedEnvironment.from_initial_state(stored)
    act(env, reference, change)
    passes, differs = judged(task, env, reference.output, reference)
    return sum(passes), all(passes) and differs


class OneChange(RedTeamPolicy):
    name = "one-change"
    description = (
        "each change of the widening policies alone (one argument of one write), the one the reward pays for"
    )
    families = frozenset({"compose"})

    def applies_to(self, task: TaskRecord) -> bool:
        return any(writes(step.tool, unknown=False) for step in task.reference_solution)

    def attack_compose(self, attack: ComposeAttack) -> str:
        stored = attack.env.snapshot()
        replay = replayed(attack)
        changes = single_changes(attack, replay)
        if not changes:
            attack.replay_reference()
            return attack.reference.output
        best, most = changes[0], -1
        for change in changes:
            passed, rewarded = score(attack.task, stored, attack.reference, change)
            if rewarded:
                best = change
                break
            if passed > most:
                best, most = change, passed
        act(attack.env, attack.reference, best, attack.call)
        return attack.reference.output


register_policy(OneChange())
