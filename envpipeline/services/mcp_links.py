"""Hops and actions derived automatically for services synthesized from MCP tool specs.

- **Field hops**: a collection with at least two *typed* string fields (names that map to a
  composer value type: ``assigneeEmail`` -> email, ``dueDate`` -> date, ...) offers, for each
  pair of differently typed fields, a hop that consumes one and produces the other through the
  collection's search tool (or its list tool filtered on the consumed field).
- **Create actions**: a create tool with a typed field offers an action that creates a record
  carrying the consumed value; its criterion is an `expect_record` on that field (plus a new
  constant title-like marker when there is one). Outside the curated services a create tool that
  requires a parent record (``project_id``) names an existing one as a constant, and a create
  with no typed field carries the value in the field `mcp_carriers.carrier` picks (a referenced
  record's id: that record is planted).
- **Simulated hops**: a simulated read-like tool with one typed string argument (its only
  required one, or its only one; an id-like argument carries a ``code``, registered as a known id
  when planted) offers a hop producing a ``code``: the first string of its simulated response.
  Outside the curated services the carrying argument is `mcp_carriers.carry`'s (a referenced
  record's id, an identifier, free text, a thing's name; a list's one item; an optional one where
  no required one can; a property of an object argument) and the other required arguments are
  constants the request states.
- **Simulated write actions** (outside the curated services): a simulated write called with the
  carried value (where `mcp_carriers.carry` puts it); checked among its family's recorded calls
  (`rubric.SIMULATED_CALLS`).
- Get hops, update and delete actions: `envpipeline.services.mcp_crud_links`.
- Sources (outside the curated services): simulated reads that take no argument start a chain
  (`envpipeline.services.mcp_sources`).
- Listing hops through the list and search tools the field hops leave unused:
  `envpipeline.services.mcp_list_links`.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

from envpipeline.models.task import LIST_TEMPLATE, fill_template
from envpipeline.rubric import SIMULATED_CALLS
from envpipeline.services import vocab
from envpipeline.services.base import ToolDef
from envpipeline.services.links import (
    VALUE_PHRASES,
    Action,
    ActionPlan,
    Hop,
    HopPlan,
    Link,
    PlannedCall,
    ValueType,
    expect_record,
    revealed,
    spoken_title,
)
from envpipeline.services.mcp_carriers import (
    Carry,
    carried_template,
    carried_type,
    carrier,
    carry,
    carry_template,
    field_types,
    fields_typed,
    scope_arguments,
)
from envpipeline.services.mcp_crud_links import (
    delete_action,
    fresh_value,
    get_hop,
    know_id,
    record_with_id,
    say,
    service_where,
    tool_named,
    update_action,
)
from envpipeline.services.mcp_list_links import found_delete_actions, listing_hops, stated, stated_constant
from envpipeline.services.mcp_simulated import simulated_answer
from envpipeline.services.mcp_sources import simulated_source
from envpipeline.services.mcp_spec import (
    CollectionInfo,
    ImportedState,
    Shape,
    dump_record,
    python_name,
    texts,
)
from envpipeline.services.mcp_store import id_key
from envpipeline.services.mcp_values import (
    field_value_type,
    harmonize,
    sample,
    schema_type,
    stated_sample,
)
from envpipeline.services.worldmodel import WorldModel, first_string_path


def typed_fields(info: CollectionInfo, names: list[str] | None = None) -> dict[ValueType, str]:
    """Plain string fields (no enum, not ids) whose names map to a value type: type -> first field."""
    return fields_typed(info, lambda prop, _schema: field_value_type(prop), names)


def _a(noun: str) -> str:
    said = say(noun)
    return f"an {said}" if said[:1] in "aeiou" else f"a {said}"


def _plant_record(
    info: CollectionInfo, state: ImportedState, rng: random.Random, fixed: dict[str, Any], avoid: str
) -> None:
    """Insert a record with `fixed` values; other fields sampled so that none mentions `avoid`."""
    row: dict[str, Any] = {}
    for prop, schema in info.fields.items():
        if prop in fixed:
            row[prop] = fixed[prop]
        elif prop in info.refs:
            row[prop] = rng.choice(list(getattr(state, info.refs[prop])) or ["none"])
        elif state.simulated.known.get(id_key(prop) or ""):
            row[prop] = rng.choice(state.simulated.known[id_key(prop) or ""])
        else:
            for _ in range(5):
                row[prop] = sample(schema, rng, prop)
                if not any(avoid.lower() in t.lower() for t in texts(row[prop])):
                    break
    records: dict[Any, Any] = getattr(state, info.name)  # id (str or int) -> record
    rid = info.new_id(records)
    records[rid] = info.record.model_validate({"id": rid, **harmonize(row, set(fixed))})


def _drop(info: CollectionInfo, state: ImportedState, keep: Callable[[dict[str, Any]], bool]) -> None:
    records: dict[str, Any] = getattr(state, info.name)
    for rid in [rid for rid, r in records.items() if not keep(dump_record(r))]:
        del records[rid]


def _field_hop(
    title: str,
    info: CollectionInfo,
    finder: Shape,
    src: tuple[ValueType, str],
    dst: tuple[ValueType, str],
) -> Hop[ImportedState]:
    (in_type, in_field), (out_type, out_field) = src, dst
    by_search = finder.op == "search"
    arg = finder.query_arg if by_search and finder.query_arg else in_field

    def plant(state: ImportedState, rng: random.Random, value: str) -> HopPlan:
        low = value.lower()
        if by_search:
            _drop(info, state, lambda r: not any(low in t.lower() for t in texts(r)))
        else:
            _drop(info, state, lambda r: r.get(in_field) != value)
        output = fresh_value(out_type, rng, value)
        _plant_record(info, state, rng, {in_field: value, out_field: output}, value)
        call = PlannedCall(
            finder.spec.name, {arg: value}, inputs={arg: "{value}"}, reveals=(info.name, 0, out_field)
        )
        phrase = (
            f"{service_where(title)}, find the {say(info.noun)} whose {say(in_field)} is "
            f"{VALUE_PHRASES[in_type]} and note its {say(out_field)}"
        )
        return HopPlan([call], output, phrase)

    relation = f"the {say(out_field)} of the {say(info.noun)} whose {say(in_field)} is {{of}}"
    return Hop(f"{info.noun}_{in_field}_to_{out_field}", in_type, out_type, plant, relation)


def _quote(value: Any) -> str:
    return f"'{value}'" if isinstance(value, str) else json.dumps(value)


def _create_action(
    title: str,
    info: CollectionInfo,
    shape: Shape,
    value_type: ValueType,
    field: str,
    target: CollectionInfo | None = None,
) -> Action[ImportedState]:
    spec = shape.spec
    markers = [
        p
        for p in spec.required
        if p != field
        and field_value_type(p) == "title"
        and p in info.fields
        and schema_type(spec.properties[p]) == "string"
        and not spec.properties[p].get("enum")
    ]

    def plant(state: ImportedState, rng: random.Random, value: str) -> ActionPlan:
        _drop(info, state, lambda r: r.get(field) != value)
        if target is not None:  # the field names a record of `target`: that record exists
            record_with_id(target, state, rng, value, {}, avoid=value)
        know_id(state, field, value)
        constants: dict[str, Any] = {}
        for prop in spec.required:
            if prop == field:
                continue
            schema = spec.properties[prop]
            known = state.simulated.known.get(id_key(prop) or "")
            if prop in markers:
                constants[prop] = f"{vocab.title(rng)} {vocab.code(rng, 'N')}"
            elif prop in shape.refs:  # the record it belongs to (outside the curated library)
                constants[prop] = stated_constant(shape, prop, state, rng)
            else:
                constants[prop] = rng.choice(known) if known else stated_sample(schema, rng, prop)
        harmonized = harmonize({**constants, field: value}, {field}, secret={field})
        constants = {k: v for k, v in harmonized.items() if k != field}
        call = PlannedCall(spec.name, {**constants, field: value}, inputs={field: "{value}"})
        match = {python_name(field): value, **{python_name(m): constants[m] for m in markers[:1]}}
        match |= {
            python_name(p): constants[p]
            for p in spec.required
            if p in shape.refs and p in info.fields and p != field
        }
        described = ", ".join(f"{say(p)} {_quote(v)}" for p, v in constants.items())
        crit = expect_record(info.name, f"{_a(info.noun)} with {say(field)} {value!r} exists", **match)
        phrase = f"{service_where(title)}, create {_a(info.noun)} with its {say(field)} set to {VALUE_PHRASES[value_type]}"
        return ActionPlan([call], [crit], f"{phrase} ({described})" if described else phrase)

    return Action(f"{spec.name}_with_{field}", value_type, plant)


def _carrying(shape: Shape, carried: Carry, value: str) -> str:
    """How a request says where the value goes: an argument set to it, a list holding it alone,
    a property of an object argument (the place as `_as` names it)."""
    if carried.inner is None and carried_template(shape, carried.arg) == LIST_TEMPLATE:
        return f"with {value} as {_as(shape, carried)}"
    return f"with {_as(shape, carried)} set to {value}"


def _as(shape: Shape, carried: Carry) -> str:
    """Where a relation says the value went: ``its cycle id``, ``the only item of its track ids``,
    ``the project id in its params``."""
    if carried.inner is not None:
        return f"the {say(carried.inner)} in its {say(carried.arg)}"
    if carried_template(shape, carried.arg) == LIST_TEMPLATE:
        return f"the only item of its {say(carried.arg)}"
    return f"its {say(carried.arg)}"


def _simulated_call(
    shape: Shape,
    tool: ToolDef,
    carried: Carry,
    state: ImportedState,
    rng: random.Random,
    value: str,
    target: CollectionInfo | None = None,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], str]:
    """A planted call of a simulated tool with the carried value where `carried` puts it: the
    constants a request states (the other required arguments, the carrying object's other
    properties), the arguments given, the arguments as the tool receives them (validated,
    defaults filled) and the carrying argument's template. A carried id becomes one the simulated
    world knows, so the call is no 404; a carried id of a record in `target` (the collection the
    argument refers to) becomes that record's id."""
    if target is not None:
        record_with_id(target, state, rng, value, {}, avoid=value)
    arg = carried.arg
    fixed = {p: stated_constant(shape, p, state, rng) for p in shape.spec.required if p != arg}
    template, inside = carry_template(shape, carried, rng)
    given = {**fixed, arg: fill_template(template, value)}
    received = tool.args_model.model_validate(given).model_dump(mode="json", by_alias=True)
    know_id(state, carried.inner or arg, value)
    return {**fixed, **{f"{arg}_{k}": v for k, v in inside.items()}}, given, received, template


def _simulated_hop(
    title: str,
    service: str,
    shape: Shape,
    tool: ToolDef,
    world_model: WorldModel,
    sim: Any,
    infos: dict[str, CollectionInfo] | None = None,
    scopes: frozenset[str] = frozenset(),
) -> Hop[ImportedState] | None:
    """A hop through a simulated read that takes the carried value in one argument. With `infos`
    (outside the curated services) the argument is where `mcp_carriers.carry` puts it (an
    argument, a list's one item, a property of an object argument), named by the phrase and the
    goal-level relation, and the tool's other required arguments are constants they state."""
    spec = shape.spec
    props = spec.properties
    if not props:  # a write never gets here (`mcp_store.is_write`): it is an action
        return None
    carried: Carry | None = None
    if infos is not None:
        carried = carry(shape, infos, scopes)
    elif len(spec.required) == 1 or (len(props) == 1 and not spec.required):
        only = spec.required[0] if spec.required else next(iter(props))
        value_type = carried_type(shape, only)
        carried = Carry(only, value_type) if value_type is not None else None
    path = first_string_path(spec.output_schema)
    if carried is None or not path:
        return None
    arg, value_type = carried.arg, carried.value_type
    target = (infos or {}).get(shape.refs.get(arg, ""))
    named = infos is not None  # outside the curated services the phrase names the argument
    relation = (
        f"the {say(path[-1])} that {tool_named(spec.name)} gives for {{of}}"  # a plan adds its constants
    )

    def plant(state: ImportedState, rng: random.Random, value: str) -> HopPlan:
        fixed, given, arguments, template = _simulated_call(shape, tool, carried, state, rng, value, target)
        response: Any = simulated_answer(
            service,
            state,
            shape,
            arguments,
            world_model,
            sim.family[spec.name],
            False,  # a hop only reads: `is_write` made every simulated write an action, never a hop
            sim.id_args.get(spec.name, []),
        )
        found = revealed(response, path, f"the simulated '{spec.name}' of {service}")
        call = PlannedCall(spec.name, given, inputs={arg: template}, reveals=path)
        with_ = f" with {stated(fixed)}" if fixed else ""
        tool_words = f"use the {spoken_title(title).lower()} service's '{spec.name}' tool"
        said = with_.replace("{", "{{").replace("}", "}}")
        if named:  # which argument takes the value: a tool may take several ids (Plane's cycle)
            phrase = f"{tool_words} {_carrying(shape, carried, VALUE_PHRASES[value_type])}{with_} and note the {say(path[-1])} it returns"
            # a goal-level request must say which constants, as the phrase does
            return HopPlan([call], found, phrase, f"{relation} as {_as(shape, carried)}{said}")
        phrase = f"{tool_words} on {VALUE_PHRASES[value_type]}{with_} and note the {say(path[-1])} it returns"
        return HopPlan([call], found, phrase, relation + said)

    return Hop(f"{spec.name}_lookup", value_type, "code", plant, relation)


def _simulated_write_action(
    title: str,
    shape: Shape,
    tool: ToolDef,
    family: str,
    infos: dict[str, CollectionInfo],
    scopes: frozenset[str] = frozenset(),
) -> Action[ImportedState] | None:
    """An action through a simulated write: call it with the carried value in the argument
    `mcp_carriers.carrier` picks (a referenced record's id: that record planted), the required
    others stated as constants. The criterion is that call among the
    family's recorded calls (``simulated.records.<family>``, `rubric.SIMULATED_CALLS`), every stated
    argument included; ``state_preserved`` allows that one recorded call and no other."""
    spec = shape.spec
    carried = carry(shape, infos, scopes)
    if carried is None or any("." in p for p in spec.required):
        return None
    arg, value_type = carried.arg, carried.value_type
    target = infos.get(shape.refs.get(arg, ""))

    def plant(state: ImportedState, rng: random.Random, value: str) -> ActionPlan:
        fixed, given, recorded, template = _simulated_call(shape, tool, carried, state, rng, value, target)
        call = PlannedCall(spec.name, given, inputs={arg: template})
        match = {"tool": spec.name, **{f"arguments.{p}": recorded[p] for p in given}}
        crit = expect_record(
            f"{SIMULATED_CALLS}{family}", f"'{spec.name}' was called with {say(arg)} {value!r}", **match
        )
        with_ = f" ({stated(fixed)})" if fixed else ""
        phrase = f"{service_where(title)}, call '{spec.name}' {_carrying(shape, carried, VALUE_PHRASES[value_type])}{with_}"
        return ActionPlan([call], [crit], phrase)

    return Action(f"{spec.name}_call", value_type, plant)


def _crud_links(
    title: str,
    info: CollectionInfo,
    shape: Shape,
    typed: dict[ValueType, str],
    infos: dict[str, CollectionInfo] | None = None,
    scopes: frozenset[str] = frozenset(),
) -> list[Link[ImportedState]]:
    """Get hops, update and delete actions of one tool (`mcp_crud_links`), at most two per tool.
    With `infos` (outside the curated services) an update with no typed field sets one a value can
    be written into (`mcp_carriers.carrier`: a description, a name); one of the service's `scopes`
    (`mcp_carriers.scope_arguments`) only where nothing else can."""
    links: list[Link[ImportedState] | None] = []
    if shape.op == "get":
        links += [get_hop(title, info, shape, t, f) for t, f in typed.items() if t != "code"][:2]
    elif shape.op == "update":
        fields: dict[ValueType, str] = typed_fields(info, list(shape.spec.properties))
        if infos is not None:
            among = {p for p in info.fields if p != shape.id_arg and p not in shape.refs}
            fields, wide = _written_fields(info, shape, infos, among, scopes)
            fields = {wide[1]: wide[0]} if wide is not None else fields
        own = infos is not None  # outside the curated services: a record of its own per update
        links += [update_action(title, info, shape, t, f, own_record=own) for t, f in fields.items()][:2]
    elif shape.op == "delete":
        links.append(delete_action(title, info, shape))
    return [link for link in links if link is not None]


def _written_fields(
    info: CollectionInfo,
    shape: Shape,
    infos: dict[str, CollectionInfo],
    among: set[str],
    scopes: frozenset[str],
) -> tuple[dict[ValueType, str], tuple[str, ValueType] | None]:
    """The fields of its record a create or an update outside the curated services writes the
    carried value into: its typed arguments, else one field of `among` a value can be written into
    (`mcp_carriers.carrier`: a description, a name). One of the service's `scopes` only where
    nothing else can: the same two tries again with the scopes let in."""
    for left_out in (scopes, frozenset()) if scopes else (frozenset(),):
        typed = typed_fields(info, [p for p in shape.spec.properties if p not in left_out])
        if typed:
            return typed, None
        wide = carrier(shape, infos, among - left_out, scopes)
        if wide is not None:
            return {}, wide
    return {}, None


def derive_links(
    title: str,
    shapes: list[Shape],
    infos: dict[str, CollectionInfo],
    tools: dict[str, ToolDef],
    world_model: WorldModel,
    service: str,
    sim: Any,
    *,
    extended: bool = True,
) -> list[Link[ImportedState]]:
    """Every hop and action of a synthesized service, in a deterministic order.

    `extended`: whether the links that reach the rest of the corpus are derived too (listing hops
    through the list and search tools no field hop uses, `mcp_list_links`; simulated reads with
    several required arguments, the others stated as constants; create actions of tools that
    require a parent record, named as a constant; actions through simulated writes); the curated
    imported services
    keep the link set the default generator's records were made with.
    """
    found: list[Link[ImportedState]] = []
    finders: set[str] = set()  # listings the field hops use (the others get listing hops)
    scopes = scope_arguments(shapes) if extended else frozenset()
    for info in infos.values():
        own = [f for f in info.fields if f not in scopes] if scopes else None  # fields, not scopes
        typed = typed_fields(info, own) or (field_types(info, own) if extended else {})
        mine = [s for s in shapes if s.collection == info.name]
        search = next(
            (s for s in mine if s.op == "search" and s.query_arg and set(s.spec.required) <= {s.query_arg}),
            None,
        )
        for in_type, in_field in typed.items():
            finder = search or next(
                (
                    s
                    for s in mine
                    if s.op == "list" and in_field in s.spec.properties and set(s.spec.required) <= {in_field}
                ),
                None,
            )
            if finder is None or len(typed) < 2:
                continue
            finders.add(finder.spec.name)
            for out_type, out_field in typed.items():
                if out_type != in_type:
                    found.append(_field_hop(title, info, finder, (in_type, in_field), (out_type, out_field)))
        for shape in mine:
            found += _crud_links(title, info, shape, typed, infos if extended else None, scopes)
            if extended:
                found += found_delete_actions(title, info, shape, mine, typed)
            if extended and shape.spec.name not in finders:
                found += listing_hops(title, info, shape, typed)
            if shape.op != "create" or (not extended and any(p in shape.refs for p in shape.spec.required)):
                continue
            created, wide = typed_fields(info, list(shape.spec.properties)), None
            if extended:
                created, wide = _written_fields(info, shape, infos, set(info.fields), scopes)
            for value_type, field in created.items():
                found.append(_create_action(title, info, shape, value_type, field))
            if wide is not None:  # no typed field: one a value can be written into (`mcp_carriers`)
                target = infos.get(shape.refs.get(wide[0], ""))
                found.append(_create_action(title, info, shape, wide[1], wide[0], target))
    for shape in shapes:
        if shape.simulated:
            if shape.spec.name in sim.writes:
                action = _simulated_write_action(
                    title, shape, tools[shape.spec.name], sim.family[shape.spec.name], infos, scopes
                )
                if extended and action is not None:
                    found.append(action)
                continue
            hop = _simulated_hop(
                title,
                service,
                shape,
                tools[shape.spec.name],
                world_model,
                sim,
                infos if extended else None,
                scopes,
            )
            if hop is not None:
                found.append(hop)
            if not extended:
                continue
            source = simulated_source(
                title,
                service,
                shape,
                tools[shape.spec.name],
                world_model,
                sim.family[shape.spec.name],
                sim.id_args.get(shape.spec.name, []),
                stating=hop is None,  # constants only where no hop carries a value into the read
            )
            if source is not None:
                found.append(source)
    return found
