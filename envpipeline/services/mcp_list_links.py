"""Listing hops: every list and search tool of a synthesized service finds a record by a known value.

A listing hop consumes one value of a record and reveals another: a typed field (``name`` is a
title, ``ownerEmail`` an email) or, where the collection's ids are text, the record's id (a
``code``). The agent calls the listing and picks the record whose known value matches:

- a **search** tool gets the carried value as its query (one without a query argument filters on
  the fields it names, as a list does);
- a **list** tool that filters on the known field gets it as that filter;
- any other list tool is **scanned**: two to four other records are planted beside the one to
  find, with their own values and ids drawn so that the store's order (by id) puts the record
  among them, never first nor last: a policy that reads the first or the last row fails.

The hop's reveal path selects the row by the known value (``(collection, {field: value},
revealed field)``, `links.read_path`), not by its position: the reference reads what the agent
must read, whatever other plantings do to the collection's order, and the ``unique_hops`` gate
counts the rows that hold the known value.

Required arguments besides the carried value are constants the phrase (and a goal-level
relation) states: a referenced record's id, a filter field's value (every planted record has
it, so the listing shows them), a page size that shows the whole collection, or a sampled value
the tool does not filter on.

`mcp_links.derive_links` adds these hops for the listings its field hops leave unused.

A listing also finds the record a **delete by value** removes (`found_delete_actions`): where a
delete tool takes only the record's id and no action can carry that id (integer ids: a carried
value is text), the request names the record by a typed field ("delete the ticket whose subject
is that title"); the reference lists it, reads its id from the listing and deletes it by that id.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

from envpipeline.services.links import (
    VALUE_PHRASES,
    Action,
    ActionPlan,
    Hop,
    HopPlan,
    PlannedCall,
    ValueType,
    expect_record,
)
from envpipeline.services.mcp_crud_links import fresh_value, record_with_id, say, service_where
from envpipeline.services.mcp_spec import LIMIT_ARGS, CollectionInfo, ImportedState, Shape, dump_record, texts
from envpipeline.services.mcp_store import id_key
from envpipeline.services.mcp_values import scalar, schema_type, stated_sample

#: The most listing hops one tool offers (its first pairs of known and revealed values).
HOPS_PER_TOOL = 2
#: The limit a listing hop passes where a tool requires one and its schema sets no maximum.
LISTING_LIMIT = 100
#: The smallest required page size a listing hop uses: a planted collection (its generated
#: records, the planted ones and their neighbours) fits in it.
MIN_PAGE = 25
#: The record's id as a hop's known or revealed value.
ID = "id"


def _pairs(
    info: CollectionInfo, typed: dict[ValueType, str], by_search: bool
) -> list[tuple[str, str, str, str]]:
    """(known type, known field, revealed type, revealed field) pairs, best first: a typed field to
    the id, the id to a typed field (a search finds by text, not by id), then typed to typed."""
    text_ids = not info.integer_ids
    pairs = []
    for in_type, in_field in typed.items():
        if text_ids and in_type != "code":
            pairs.append((in_type, in_field, "code", ID))
    if text_ids and not by_search:
        pairs += [("code", ID, t, f) for t, f in typed.items() if t != "code"]
    pairs += [(ti, fi, to, fo) for ti, fi in typed.items() for to, fo in typed.items() if ti != to]
    return pairs


def stated_constant(shape: Shape, prop: str, state: ImportedState, rng: random.Random) -> Any:
    """A stated value for a required argument the carried value does not fill."""
    schema = shape.spec.properties[prop]
    target = shape.refs.get(prop)
    if target:
        return rng.choice(sorted(getattr(state, target), key=str) or ["none"])
    known = state.simulated.known.get(id_key(prop) or "")
    if known:
        return rng.choice(known)
    if prop.lower() in LIMIT_ARGS and schema_type(schema) == "integer":
        return min(schema.get("maximum", LISTING_LIMIT), LISTING_LIMIT)
    return stated_sample(schema, rng, prop)


def _carrier(info: CollectionInfo, shape: Shape, in_field: str) -> str | None:
    """The argument that takes the known value: a search's query, or a list's filter on the known
    field (a plain field of the record); None when the listing cannot narrow to it."""
    if shape.op == "search" and shape.query_arg:
        return shape.query_arg
    props = shape.spec.properties
    if (
        in_field in props
        and in_field in info.fields
        and scalar(props[in_field])
        and in_field not in shape.refs
    ):
        return in_field
    return None


def _record_id(info: CollectionInfo, taken: set[Any], rng: random.Random, avoid: str) -> Any:
    """A free id for a planted record (a code for text ids, a number for integer ids), drawn so
    that planted records sort in no fixed order: the store lists records by id."""
    while True:
        rid = rng.randint(10, 9999) if info.integer_ids else fresh_value("code", rng, avoid)
        if rid not in taken:
            taken.add(rid)
            return rid


def _inside(
    rid: Any, others: list[Any], movable: bool, draw: Callable[[], Any], rng: random.Random
) -> tuple[Any, list[Any]]:
    """The ids of a scanned record and of its neighbours, some neighbour sorting before it and some
    after (the store lists records by id, so a policy that reads the first or the last row fails):
    a record whose id is free (`movable`) takes any drawn id but the smallest and the largest; else
    a neighbour is drawn again until one sorts before it and another after it (50 tries each, then
    a code like the record's own with lower digits, or its own code extended)."""
    if movable:
        ids = sorted([rid, *others])
        chosen = rng.choice(ids[1:-1])
        return chosen, [i for i in ids if i != chosen]
    others = list(others)
    if not any(other < rid for other in others):
        others[0] = _drawn(lambda c: c < rid, draw) or _below(rid, rng) or others[0]
    if not any(other > rid for other in others):
        others[-1] = _drawn(lambda c: c > rid, draw) or f"{rid}0"
    return rid, others


def _drawn(fits: Callable[[Any], bool], draw: Callable[[], Any]) -> Any:
    """The first of 50 draws that `fits`, or None."""
    return next((c for c in (draw() for _ in range(50)) if fits(c)), None)


def _below(rid: Any, rng: random.Random) -> str | None:
    """A code like `rid` that sorts before it (``PS-3229`` -> ``PS-1877``), if its digits allow."""
    match = re.match(r"^(.*?)(\d+)$", str(rid))
    if not match or int(match[2]) == 0:
        return None
    return f"{match[1]}{rng.randint(0, int(match[2]) - 1):0{len(match[2])}d}"


def listing_hop(
    title: str,
    info: CollectionInfo,
    shape: Shape,
    pair: tuple[str, str, str, str],
) -> Hop[ImportedState]:
    """One hop through a list or search tool: the record whose known value matches reveals another."""
    in_type, in_field, out_type, out_field = pair
    spec = shape.spec
    carried_arg = _carrier(info, shape, in_field)

    def plant(state: ImportedState, rng: random.Random, value: str) -> HopPlan:
        records: dict[Any, Any] = getattr(state, info.name)
        low = value.lower()
        for rid in [
            r
            for r, rec in records.items()
            if str(r).lower() == low or any(low in t.lower() for t in texts(dump_record(rec)))
        ]:
            del records[rid]  # no other record holds the carried value
        constants = {
            p: stated_constant(shape, p, state, rng)
            for p in spec.required
            if p != carried_arg and p != in_field
        }
        shared = {p: v for p, v in constants.items() if p in info.fields}  # what the listing filters on
        taken = set(records)
        rid = value if in_field == ID else _record_id(info, taken, rng, value)
        others: list[Any] = []
        if carried_arg is None:  # a scan: other records beside it, so no fixed row of the listing is it
            others = [_record_id(info, taken, rng, value) for _ in range(rng.randint(2, 4))]
            rid, others = _inside(
                rid, others, in_field != ID, lambda: _record_id(info, taken, rng, value), rng
            )
        output = rid if out_field == ID else fresh_value(out_type, rng, value)
        fixed = dict(shared)
        if in_field != ID:
            fixed[in_field] = value
        if out_field != ID:
            fixed[out_field] = output
        record_with_id(info, state, rng, rid, fixed, avoid=value)
        for other_id in others:
            other = dict(shared)
            for field, kind in ((in_field, in_type), (out_field, out_type)):
                if field != ID:
                    other[field] = fresh_value(kind, rng, f"{value} {output}")
            record_with_id(info, state, rng, other_id, other, avoid=value)
        arguments = {**constants, **({carried_arg: value} if carried_arg else {})}
        call = PlannedCall(
            spec.name,
            arguments,
            inputs={carried_arg: "{value}"} if carried_arg else {},
            reveals=(info.name, {in_field: value}, out_field),
        )
        phrase = _phrase(title, info, spec.name, pair, constants)
        return HopPlan([call], output, phrase, _relation(info, pair, constants))

    relation = _relation(info, pair, {})
    return Hop(f"{spec.name}_{in_field}_to_{out_field}", in_type, out_type, plant, relation)  # type: ignore[arg-type]


def stated(constants: dict[str, Any]) -> str:
    """Constant arguments as a request states them: ``issue key 'IK-3201', limit 100``."""
    return ", ".join(f"{say(p)} {v!r}" for p, v in constants.items())


def _relation(info: CollectionInfo, pair: tuple[str, str, str, str], constants: dict[str, Any]) -> str:
    """The revealed value over ``{of}``, with the listing's stated constants (a goal-level request
    names no tool, so they are how the agent knows which listing to read)."""
    _, in_field, _, out_field = pair
    known = "id" if in_field == ID else say(in_field)
    listed = f" (listed with {stated(constants)})".replace("{", "{{").replace("}", "}}") if constants else ""
    return f"the {'id' if out_field == ID else say(out_field)} of the {say(info.noun)}{listed} whose {known} is {{of}}"


def _phrase(
    title: str, info: CollectionInfo, tool: str, pair: tuple[str, str, str, str], constants: dict[str, Any]
) -> str:
    in_type, in_field, _, out_field = pair
    known = "id" if in_field == ID else say(in_field)
    said = stated(constants)
    return (
        f"{service_where(title)}, look through the {say(info.name)} ('{tool}'"
        + (f" with {said}" if said else "")
        + f") for the {say(info.noun)} whose {known} is {VALUE_PHRASES[in_type]} and note its "
        + ("id" if out_field == ID else say(out_field))
    )


def listing_hops(
    title: str, info: CollectionInfo, shape: Shape, typed: dict[ValueType, str]
) -> list[Hop[ImportedState]]:
    """The first `HOPS_PER_TOOL` listing hops of one list or search tool (none for other tools)."""
    if shape.op not in ("list", "search"):
        return []
    if shape.query_arg in shape.refs or not _limit_fits(shape):
        return []
    by_query = shape.query_arg is not None
    pairs = [
        p
        for p in _pairs(info, typed, by_search=by_query)
        if _fillable(info, shape, p) and _narrows(info, shape, p)
    ]
    return [listing_hop(title, info, shape, pair) for pair in pairs[:HOPS_PER_TOOL]]


def _narrows(info: CollectionInfo, shape: Shape, pair: tuple[str, str, str, str]) -> bool:
    """Whether a listing finds the record by `pair`'s known value: any list or search with a query
    does; a search without a query argument only where it filters on the known field, as a list
    does (QuickBooks' ``search_customers(email=...)``). Such a search scanned whole is no finder:
    its other arguments are a question or a program (Stripe's ``search_stripe_documentation``,
    D1's ``sql``) and its collection only its own answers."""
    return shape.op == "list" or shape.query_arg is not None or _carrier(info, shape, pair[1]) is not None


def _limit_fits(shape: Shape) -> bool:
    """Whether a required page size can show a planted collection whole (a few dozen records)."""
    for prop in shape.spec.required:
        schema = shape.spec.properties[prop]
        if prop.lower() in LIMIT_ARGS and schema.get("maximum", LISTING_LIMIT) < MIN_PAGE:
            return False
    return True


def _fillable(info: CollectionInfo, shape: Shape, pair: tuple[str, str, str, str]) -> bool:
    """Whether a listing hop can carry its known value (a required argument named like the known
    field must be the filter that takes it: a plain field of the record) and reveal a value the
    call does not already state (a required argument is a constant)."""
    in_field, out_field = pair[1], pair[3]
    if out_field in shape.spec.required:
        return False
    return in_field not in shape.spec.required or _carrier(info, shape, in_field) == in_field


def found_delete_actions(
    title: str, info: CollectionInfo, delete: Shape, listings: list[Shape], typed: dict[ValueType, str]
) -> list[Action[ImportedState]]:
    """Delete-by-value actions of a delete tool that takes only the record's integer id, one per
    typed field some listing of the collection can find the record by (at most `HOPS_PER_TOOL`).
    A text id is carried as a code by `mcp_crud_links.delete_action` instead."""
    id_arg = delete.id_arg
    if delete.op != "delete" or id_arg is None or set(delete.spec.required) != {id_arg}:
        return []
    if not info.integer_ids:
        return []
    found: list[Action[ImportedState]] = []
    for in_type, in_field in typed.items():
        pair = (in_type, in_field, "code", ID)
        finder = next((s for s in listings if _finds(info, s, pair)), None)
        if finder is not None:
            found.append(_found_delete(title, info, delete, listing_hop(title, info, finder, pair), pair))
    return found[:HOPS_PER_TOOL]


def _finds(info: CollectionInfo, shape: Shape, pair: tuple[str, str, str, str]) -> bool:
    """Whether `shape` lists the collection so that a listing hop finds a record by `pair`'s known
    field and shows its id (what `listing_hops` asks of a listing, for that one pair)."""
    return (
        shape.op in ("list", "search")
        and shape.query_arg not in shape.refs
        and _limit_fits(shape)
        and _fillable(info, shape, pair)
        and _narrows(info, shape, pair)
    )


def _found_delete(
    title: str,
    info: CollectionInfo,
    delete: Shape,
    finder: Hop[ImportedState],
    pair: tuple[str, str, str, str],
) -> Action[ImportedState]:
    """Delete the record whose known field holds the carried value: `finder` plants it among its
    listing's records and shows its id, the delete call takes that id from the listing's answer.
    The criterion is that record's absence (by id: renaming it away does not delete it)."""
    in_type, in_field = pair[0], pair[1]
    id_arg = delete.id_arg or ""
    noun = say(info.noun)

    def plant(state: ImportedState, rng: random.Random, value: str) -> ActionPlan:
        listed = finder.plant(state, rng, value)
        (call,) = listed.calls
        rid: Any = listed.output  # the planted record's id as the listing shows it (a number or a code)
        removal = PlannedCall(delete.spec.name, {id_arg: None}, bind={id_arg: (0, tuple(call.reveals or ()))})
        crit = expect_record(
            info.name, f"the {noun} whose {say(in_field)} is {value!r} is gone", absent=True, id=rid
        )
        constants = {k: v for k, v in call.arguments.items() if k not in call.inputs}
        listed_with = f" (listed with {stated(constants)})" if constants else ""
        phrase = (
            f"{service_where(title)}, delete the {noun}{listed_with} whose {say(in_field)} is "
            f"{VALUE_PHRASES[in_type]}"  # type: ignore[index]
        )
        return ActionPlan([call, removal], [crit], phrase)

    return Action(f"{delete.spec.name}_by_{in_field}", in_type, plant)  # type: ignore[arg-type]
