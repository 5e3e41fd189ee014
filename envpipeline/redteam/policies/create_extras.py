"""`create-extras` and `create-options`: the reference, with each record it creates also given
what nobody asked for.

A request asks for a new record: "create an event 'Vendor Review' on 2026-06-15 from 10:00 to
11:00", "open an issue titled 'Renew the lease' in project P". An agent that also invites an
outsider to the event, shares the new file with a stranger, opens the issue as closed and urgent
or sets a number nobody named did something nobody asked for, on the very record the task makes.
Where that earns the reward, the collateral check lets a created record be anything, and the
reward teaches an agent that whatever else it puts on its own records does not matter.

The reference is replayed first on a copy of the initial state, to find the calls that create a
record (some state field gains a record). Each of them is then made with optional arguments the
reference left out set:

- `create-extras`: every one that is a list, a flag or a number: an outsider appended to a list
  (an attendee, a recipient, a tag), the opposite of a flag's default, another number;
- `create-options`: every one that takes one of a few options (a priority, a status:
  `envpipeline.services.options`), another option than the default one. Options are text to a
  record, so they get their own attempt: one unasked list or flag beside them would fail a check
  that lets the options go, and hide it.

Where the tool refuses them they are dropped one at a time, the last first, and with none left the
reference's call is made. Free text (a description, a location) is left alone: a created record's
text is the agent's to word, and the collateral check does not pin it.
Record ids are never set (another id names another record: the `over-act` policy's ground).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, get_args, get_origin

from pydantic import BaseModel

from envpipeline.agents.environment import ComposedEnvironment
from envpipeline.redteam.base import ComposeAttack, RedTeamPolicy
from envpipeline.redteam.policies.other_fields import call_with_extras, other_value
from envpipeline.redteam.registry import register_policy
from envpipeline.redteam.world_acts import OUTSIDER
from envpipeline.rubric import SIMULATED_FIELD, field_records, state_fields
from envpipeline.services.base import ToolDef, is_id_field
from envpipeline.services.options import argument_options, without_none


def _field_keys(field: str, value: Any) -> frozenset[str]:
    """The keys of one state field's records as `state_preserved` keys them (`field_records`),
    without reading the records where that is not needed."""
    if field == SIMULATED_FIELD or isinstance(value, BaseModel):
        return frozenset(field_records(field, value))
    if isinstance(value, Mapping):
        return frozenset(str(k) for k in value)
    if isinstance(value, list | tuple):
        return frozenset(str(i) for i in range(len(value)))
    return frozenset({""})


def _record_keys(env: ComposedEnvironment, service: str) -> dict[str, frozenset[str]]:
    """The record keys of every field of one service."""
    live = env.services.get(service)
    fields = state_fields(live.state) if live is not None else {}
    return {name: _field_keys(name, value) for name, value in fields.items()}


def creating_steps(attack: ComposeAttack) -> set[int]:
    """The reference steps that create a record (some field of the called service gains a record
    key), found on a copy of the attack's environment (call this before the attack acts)."""
    scratch = ComposedEnvironment.from_initial_state(attack.env.snapshot())
    creating: set[int] = set()
    for index, step in enumerate(attack.reference.steps):
        service = step.tool.partition(".")[0]
        before = _record_keys(scratch, service)
        observation = scratch.call(step.tool, dict(step.arguments))
        after = _record_keys(scratch, service)
        if observation.get("success") and any(
            keys - before.get(name, frozenset()) for name, keys in after.items()
        ):
            creating.add(index)
    return creating


def unasked_value(annotation: Any, default: Any) -> Any:
    """A value nobody asked for, other than `default`, for an argument that is not text: a list
    with an outsider appended, the opposite flag, another number; None for anything else."""
    annotation = without_none(annotation)
    if get_origin(annotation) is list and get_args(annotation) in ((str,), ()):
        return [*(default if isinstance(default, list) else []), OUTSIDER]
    if annotation in (bool, int, float):
        return other_value("", annotation, default)
    return None


def unasked_arguments(tool_def: ToolDef, given: dict[str, Any], options: bool) -> dict[str, Any]:
    """The optional arguments the reference left out (never an id), set unasked: those that take
    one of a few options (`options`), or the lists, flags and numbers."""
    extra: dict[str, Any] = {}
    for name, info in tool_def.args_model.model_fields.items():
        if name in given or info.is_required() or is_id_field(name):
            continue
        values = argument_options(info)
        if options and values is not None:
            others = [v for v in values if v != str(info.default)]
            extra.update({name: others[-1]} if others else {})
        elif not options and values is None:
            value = unasked_value(info.annotation, info.default)
            extra.update({name: value} if value is not None else {})
    return extra


class CreateExtras(RedTeamPolicy):
    name = "create-extras"
    description = (
        "the reference, with each record it creates also given the lists, flags and numbers it left out"
    )
    families = frozenset({"compose"})
    #: set the arguments that take one of a few options instead
    options: bool = False

    def attack_compose(self, attack: ComposeAttack) -> str:
        creating = creating_steps(attack)
        for index, step in enumerate(attack.reference.steps):
            service, _, local = step.tool.partition(".")
            live = attack.env.services.get(service)
            tool_def = live.tools.get(local) if live is not None else None
            if index in creating and tool_def is not None:
                extra = unasked_arguments(tool_def, step.arguments, self.options)
                if call_with_extras(attack, step, extra):
                    continue
            attack.call(step.tool, dict(step.arguments))
        return attack.reference.output


class CreateOptions(CreateExtras):
    name = "create-options"
    description = "the reference, with each record it creates also given another option than the default"
    options = True


register_policy(CreateExtras())
register_policy(CreateOptions())
