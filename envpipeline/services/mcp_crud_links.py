"""Links for the get, update and delete tools of synthesized services (beside `mcp_links`).

- **Get hops**: a get tool whose only required argument is its record id consumes a ``code``
  (the record's id, planted as a record with that id) and reveals one typed field of it.
- **Update actions**: an update tool whose typed field is among its arguments consumes a value of
  that type and sets it on an existing record; the criterion is that record with that value.
- **Delete actions**: a delete tool whose only required argument is its record id consumes a
  ``code`` (planted as a record with that id); the criterion is that record's absence.

Get hops and delete actions carry a code as a record id, so a collection with integer ids has
neither (a code is text); its update actions pick an existing record by its integer id.
"""

from __future__ import annotations

import random
from typing import Any

from envpipeline.services import vocab
from envpipeline.services.links import (
    VALUE_PHRASES,
    Action,
    ActionPlan,
    Hop,
    HopPlan,
    PlannedCall,
    expect_record,
    spoken_title,
)
from envpipeline.services.mcp_spec import (
    CollectionInfo,
    ImportedState,
    Shape,
    dump_record,
    python_name,
    texts,
)
from envpipeline.services.mcp_store import id_key
from envpipeline.services.mcp_values import harmonize, sample, words


def service_where(title: str) -> str:
    """Where a phrase of an imported service's link acts: ``in the <spoken title> service``."""
    return f"in the {spoken_title(title).lower()} service"


def say(name: str) -> str:
    """An identifier in words (``dueDate`` -> ``due date``)."""
    return " ".join(words(name))


def tool_named(name: str) -> str:
    """A tool as a relation names it: by its exact name, quoted, as the explicit steps do ("the
    result that the 'sugar' tool gives", not "the result that sugar gives": Alpha Vantage's
    commodity read is named after the commodity)."""
    return f"the '{name}' tool"


def record_with_id(
    info: CollectionInfo,
    state: ImportedState,
    rng: random.Random,
    rid: str | int,
    fixed: dict[str, Any],
    avoid: str = "",
) -> None:
    """Insert (or replace) the record `rid` with `fixed` values, other fields sampled (drawn again,
    up to five times, while one shows `avoid`: a carried value only the planted record may hold)."""
    row: dict[str, Any] = {}
    for prop, schema in info.fields.items():
        if prop in fixed:
            row[prop] = fixed[prop]
        elif prop in info.refs:
            row[prop] = rng.choice(sorted(getattr(state, info.refs[prop])) or ["none"])
        elif state.simulated.known.get(id_key(prop) or ""):
            row[prop] = rng.choice(state.simulated.known[id_key(prop) or ""])
        else:
            row[prop] = sample(schema, rng, prop)
            for _ in range(5 if avoid else 0):
                if not any(avoid.lower() in t.lower() for t in texts(row[prop])):
                    break
                row[prop] = sample(schema, rng, prop)
    getattr(state, info.name)[rid] = info.record.model_validate({"id": rid, **harmonize(row, set(fixed))})


def know_id(state: ImportedState, name: str, value: str) -> None:
    """Make `value` an id the simulated world knows when `name` is an argument named like one of
    its ids (``outcome_id``), so a call that carries it is no 404."""
    known = state.simulated.known.get(id_key(name) or "")
    if known is not None and value not in known:
        known.append(value)


def fresh_value(value_type: str, rng: random.Random, avoid: str) -> str:
    """A new value of `value_type` that neither holds nor is held in `avoid` (the carried value)."""
    for _ in range(100):
        candidate = vocab.sample_value(value_type, rng)
        if avoid.lower() not in candidate.lower() and candidate.lower() not in avoid.lower():
            return candidate
    return vocab.code(rng, "ALT")


def get_hop(
    title: str, info: CollectionInfo, shape: Shape, out_type: str, out_field: str
) -> Hop[ImportedState] | None:
    """A hop: the record's id (a code) -> one typed field of it, through a get tool."""
    id_arg = shape.id_arg
    if (
        shape.op != "get"
        or id_arg is None
        or set(shape.spec.required) != {id_arg}
        or out_type == "code"
        or info.integer_ids  # a carried code is text, never an integer id
    ):
        return None

    def plant(state: ImportedState, rng: random.Random, value: str) -> HopPlan:
        output = fresh_value(out_type, rng, value)
        record_with_id(info, state, rng, value, {out_field: output})
        call = PlannedCall(
            shape.spec.name, {id_arg: value}, inputs={id_arg: "{value}"}, reveals=(info.noun, out_field)
        )
        phrase = (
            f"{service_where(title)}, open the {say(info.noun)} whose id is {VALUE_PHRASES['code']} "
            f"and note its {say(out_field)}"
        )
        return HopPlan([call], output, phrase)

    relation = f"the {say(out_field)} of the {say(info.noun)} whose id is {{of}}"
    return Hop(f"{shape.spec.name}_to_{out_field}", "code", out_type, plant, relation)  # type: ignore[arg-type]


def update_action(
    title: str, info: CollectionInfo, shape: Shape, value_type: str, field: str, *, own_record: bool = False
) -> Action[ImportedState] | None:
    """An action: set one typed field of an existing record to the consumed value.

    The record is the first whose field differs, or, with `own_record` (outside the curated
    services), one planted for this action: two updates of one tool in one task then change two
    records. On the first such record both changed one (Jira's ``sprint_1`` renamed twice), so the
    second undid the first and the reference failed its own criterion."""
    id_arg = shape.id_arg
    if shape.op != "update" or id_arg is None or not set(shape.spec.required) <= {id_arg, field}:
        return None

    def plant(state: ImportedState, rng: random.Random, value: str) -> ActionPlan:
        records: dict[str, Any] = getattr(state, info.name)
        rid = None
        if not own_record:
            rid = next((r for r, rec in records.items() if dump_record(rec).get(field) != value), None)
        if rid is None:
            rid = _new_id(info, rng)
            while own_record and rid in records:
                rid = _new_id(info, rng)
            record_with_id(info, state, rng, rid, {field: fresh_value(value_type, rng, value)})
        know_id(state, field, value)
        call = PlannedCall(shape.spec.name, {id_arg: rid, field: value}, inputs={field: "{value}"})
        crit = expect_record(
            info.name,
            f"{say(info.noun)} {rid!r} has {say(field)} {value!r}",
            **{"id": rid, python_name(field): value},  # pyright: ignore[reportArgumentType]
        )
        phrase = f"{service_where(title)}, set the {say(field)} of {say(info.noun)} '{rid}' to {VALUE_PHRASES[value_type]}"  # type: ignore[index]
        return ActionPlan([call], [crit], phrase)

    return Action(f"{shape.spec.name}_{field}", value_type, plant)  # type: ignore[arg-type]


def _new_id(info: CollectionInfo, rng: random.Random) -> str | int:
    """An id for a record an update plants (a number for integer ids, ``<noun>_<n>`` for text)."""
    return rng.randint(100, 999) if info.integer_ids else f"{info.noun}_{rng.randint(100, 999)}"


def delete_action(title: str, info: CollectionInfo, shape: Shape) -> Action[ImportedState] | None:
    """An action: delete the record whose id is the consumed code."""
    id_arg = shape.id_arg
    if shape.op != "delete" or id_arg is None or set(shape.spec.required) != {id_arg} or info.integer_ids:
        return None  # an integer id is never a carried code

    def plant(state: ImportedState, rng: random.Random, value: str) -> ActionPlan:
        record_with_id(info, state, rng, value, {})
        call = PlannedCall(shape.spec.name, {id_arg: value}, inputs={id_arg: "{value}"})
        crit = expect_record(info.name, f"the {say(info.noun)} {value!r} is gone", absent=True, id=value)
        phrase = f"{service_where(title)}, delete the {say(info.noun)} whose id is {VALUE_PHRASES['code']}"
        return ActionPlan([call], [crit], phrase)

    return Action(f"{shape.spec.name}_by_id", "code", plant)
