"""What a request states about a write is checked, not only the chain's value it carries.

An action's criterion names the record it writes by the value the chain carries into it ("a trip
with destination city 'Auckland' exists"). The request also states the write's other arguments
("traveler name 'Jade Quispe', start date '2026-08-15'", "project key 'PK-7521'", "reply 'Thanks,
confirmed.'"); a criterion that ignores them rewards a trip for anyone on any dates, an issue in
another project (the red team's `careless-constants` policy: 35 of 54 accepted curated tasks).

`pin_stated` runs after the reference: for each action criterion whose record the reference wrote
(`record_exists`, the one record matching it), every argument of the action's writes (a channel
created with a topic, then given a member: both calls) the instruction states
(a literal the request quotes, not a value bound to an earlier observation) that the record holds
under the argument's name joins the criterion's conditions: equal (a list written out too:
Telegram's ``create_group`` for user ids ``[0]``), or for free text contained in the stored text.
Arguments a record does not keep (a note the tool only passes on) stay unchecked: the state
cannot tell them apart.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from envpipeline.models.criteria import Condition, Criterion
from envpipeline.models.task import ToolCallStep
from envpipeline.rubric import matching_records, normalize_text, record_field
from envpipeline.services.mcp_spec import python_name
from envpipeline.services.mcp_values import words

#: the shortest free text checked by containment (a shorter one is compared whole)
MIN_CONTAINED = 4


def _scalar(value: Any) -> bool:
    return isinstance(value, str | int | float | bool)


def _says(instruction: str, value: Any) -> bool:
    """Whether the instruction states `value`: a scalar's text as a whole word or more (issue 10,
    not the 10 in 'REF-1023'); a list of scalars written out as a request writes it (``[0]``,
    ``['ops', 'billing']``, ``["kenji@stark.test"]``)."""
    if _scalar(value):
        return (
            bool(str(value)) and re.search(rf"(?<!\w){re.escape(str(value))}(?!\w)", instruction) is not None
        )
    if isinstance(value, list) and value and all(_scalar(item) for item in value):
        return repr(value) in instruction or json.dumps(value) in instruction
    return False


def stated_arguments(step: ToolCallStep, instruction: str) -> dict[str, Any]:
    """The literal arguments of `step` the instruction states (`_says`), not bound to an earlier
    observation; a value the request never gives is the agent's choice."""
    return {
        name: value
        for name, value in step.arguments.items()
        if name not in step.bindings and _says(instruction, value)
    }


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _condition(stored: Any, stated: Any) -> Condition | None:
    """How a record's field is checked against a stated argument, or None where it does not hold it."""
    if stored == stated and (type(stored) is type(stated) or _number(stored) and _number(stated)):
        return Condition(op="eq", value=stated)  # a number as the record's type keeps it (9 == 9.0)
    if (
        isinstance(stored, str)
        and isinstance(stated, str)
        and len(stated) >= MIN_CONTAINED
        and normalize_text(stated) in normalize_text(stored)
    ):
        return Condition(op="icontains", value=stated)
    return None


def pin_stated(
    criterion: Criterion, steps: list[ToolCallStep], states: Mapping[str, Any], instruction: str
) -> Criterion:
    """`criterion` with the arguments of `steps` (its action's writes) the instruction states, as
    the one record it matches in `states` (after the reference) holds them; unchanged where it
    matches no single record or the record holds none of them. Only the write that achieves it
    (the last) was read before: the topic a channel was created with went unchecked when the
    criterion was achieved by adding a member."""
    if criterion.kind != "record_exists" or not criterion.collection:
        return criterion
    records = matching_records(criterion, states)
    if len(records) != 1:
        return criterion
    added: dict[str, Condition] = {}
    stated = [item for step in reversed(steps) for item in stated_arguments(step, instruction).items()]
    for name, value in stated:
        for field in dict.fromkeys((name, python_name(name))):
            stored = record_field(records[0], field)  # None where the record has no such field
            condition = (
                _condition(stored, value) if field not in criterion.match and field not in added else None
            )
            if condition is not None:
                added[field] = condition
                break
    if not added:
        return criterion
    said = ", ".join(f"{' '.join(words(field))} {c.value!r}" for field, c in added.items())
    return criterion.model_copy(
        update={"match": {**criterion.match, **added}, "description": f"{criterion.description} ({said})"}
    )
