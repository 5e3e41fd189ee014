"""Hops and actions derived automatically for services synthesized from MCP tool specs.

- **Field hops**: a collection with at least two *typed* string fields (names that map to a
  composer value type: ``assigneeEmail`` -> email, ``dueDate`` -> date, ...) offers, for each
  pair of differently typed fields, a hop that consumes one and produces the other through the
  collection's search tool (or its list tool filtered on the consumed field).
- **Create actions**: a create tool with a typed field offers an action that creates a record
  carrying the consumed value; its criterion is an `expect_record` on that field (plus a new
  constant title-like marker when there is one). Outside the curated services a create tool that
  requires a parent record (``project_id``) names an existing one as a constant.
- **Simulated hops**: a simulated read-like tool with one typed string argument (its only
  required one, or its only one; an id-like argument carries a ``code``, registered as a known id
  when planted) offers a hop producing a ``code``: the first string of its simulated response.
  Outside the curated services, a tool with several required arguments carries the value in the
  first typed one and states the others as constants.
- **Simulated write actions** (outside the curated services): a simulated write called with the
  carried value; checked among its family's recorded calls (`rubric.SIMULATED_CALLS`).
- Get hops, update and delete actions: `envpipeline.services.mcp_crud_links`.
- Listing hops through the list and search tools the field hops leave unused:
  `envpipeline.services.mcp_list_links`.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

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
    spoken_title,
)
from envpipeline.services.mcp_crud_links import (
    delete_action,
    fresh_value,
    get_hop,
    say,
    service_where,
    update_action,
)
from envpipeline.services.mcp_list_links import listing_hops, stated, stated_constant
from envpipeline.services.mcp_simulated import simulated_answer
from envpipeline.services.mcp_spec import (
    CollectionInfo,
    ImportedState,
    Shape,
    dump_record,
    python_name,
    texts,
)
from envpipeline.services.mcp_store import id_key
from envpipeline.services.mcp_values import field_value_type, harmonize, sample, schema_type, words
from envpipeline.services.worldmodel import WorldModel, first_string_path

#: first words of simulated tools that (probably) change the outside world: no hop from them
WRITE_VERBS = frozenset(
    {
        "send",
        "post",
        "submit",
        "approve",
        "reject",
        "close",
        "open",
        "assign",
        "merge",
        "pay",
        "book",
        "cancel",
        "notify",
        "publish",
        "upload",
        "move",
        "transfer",
        "refund",
        "charge",
        "invite",
        "reply",
    }
)


def typed_fields(info: CollectionInfo, names: list[str] | None = None) -> dict[ValueType, str]:
    """Plain string fields (no enum, not ids) whose names map to a value type: type -> first field."""
    found: dict[ValueType, str] = {}
    for prop in names if names is not None else info.fields:
        schema = info.fields.get(prop)
        if (
            schema is None
            or prop in info.refs
            or id_key(prop)  # an id names a record, it is no value to carry
            or schema.get("enum")
            or schema_type(schema) != "string"
        ):
            continue
        value_type = field_value_type(prop)
        if value_type and value_type not in found:
            found[value_type] = prop
    return found


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

    return Hop(f"{info.noun}_{in_field}_to_{out_field}", in_type, out_type, plant)


def _quote(value: Any) -> str:
    return f"'{value}'" if isinstance(value, str) else json.dumps(value)


def _create_action(
    title: str, info: CollectionInfo, shape: Shape, value_type: ValueType, field: str
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
                constants[prop] = rng.choice(known) if known else sample(schema, rng, prop)
        constants = {k: v for k, v in harmonize({**constants, field: value}, {field}).items() if k != field}
        call = PlannedCall(spec.name, {**constants, field: value}, inputs={field: "{value}"})
        match = {python_name(field): value, **{python_name(m): constants[m] for m in markers[:1]}}
        match |= {python_name(p): constants[p] for p in spec.required if p in shape.refs and p in info.fields}
        described = ", ".join(f"{say(p)} {_quote(v)}" for p, v in constants.items())
        crit = expect_record(info.name, f"{_a(info.noun)} with {say(field)} {value!r} exists", **match)
        phrase = f"{service_where(title)}, create {_a(info.noun)} with its {say(field)} set to {VALUE_PHRASES[value_type]}"
        return ActionPlan([call], [crit], f"{phrase} ({described})" if described else phrase)

    return Action(f"{spec.name}_with_{field}", value_type, plant)


def _carried_type(shape: Shape, arg: str) -> ValueType | None:
    """The value type an argument of a simulated tool can carry: a plain string named like a type
    (or like an id: a ``code``) that points at no typed collection."""
    schema = shape.spec.properties[arg]
    if arg in shape.refs or schema.get("enum") or schema_type(schema) != "string":
        return None
    return field_value_type(arg) or ("code" if id_key(arg) else None)


def _simulated_call(
    shape: Shape,
    tool: ToolDef,
    arg: str,
    others: list[str],
    state: ImportedState,
    rng: random.Random,
    value: str,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """A planted call of a simulated tool with the carried value in `arg`: the constants stated for
    `others`, the arguments given, and the arguments as the tool receives them (validated, defaults
    filled). A carried id becomes one the simulated world knows, so the call is no 404."""
    fixed = {p: stated_constant(shape, p, state, rng) for p in others}
    given = {**fixed, arg: value}
    received = tool.args_model.model_validate(given).model_dump(mode="json", by_alias=True)
    key = id_key(arg)
    if key in state.simulated.known and value not in state.simulated.known[key]:
        state.simulated.known[key].append(value)
    return fixed, given, received


def _simulated_hop(
    title: str,
    service: str,
    shape: Shape,
    tool: ToolDef,
    world_model: WorldModel,
    sim: Any,
    *,
    constants: bool = False,
) -> Hop[ImportedState] | None:
    """A hop through a simulated read that takes the carried value in one argument. With
    `constants`, a tool with several required arguments carries it in the first that can, and its
    other required arguments are constants the phrase (and goal-level relation) state."""
    spec = shape.spec
    props = spec.properties
    if not props or words(spec.name)[0] in WRITE_VERBS:
        return None
    if len(spec.required) == 1:
        arg = spec.required[0]
    elif len(props) == 1 and not spec.required:
        arg = next(iter(props))
    elif constants and len(spec.required) > 1:
        arg = next((p for p in spec.required if _carried_type(shape, p)), spec.required[0])
    else:
        return None
    value_type = _carried_type(shape, arg)
    path = first_string_path(spec.output_schema)
    if not value_type or not path:
        return None
    others = [p for p in spec.required if p != arg]

    def plant(state: ImportedState, rng: random.Random, value: str) -> HopPlan:
        fixed, given, arguments = _simulated_call(shape, tool, arg, others, state, rng, value)
        response: Any = simulated_answer(
            service,
            state,
            shape,
            arguments,
            world_model,
            sim.family[spec.name],
            spec.name in sim.writes,
            sim.id_args.get(spec.name, []),
        )
        for key in path:
            response = response[key]
        call = PlannedCall(spec.name, given, inputs={arg: "{value}"}, reveals=path)
        with_ = f" with {stated(fixed)}" if fixed else ""
        phrase = f"use the {spoken_title(title).lower()} service's '{spec.name}' tool on {VALUE_PHRASES[value_type]}{with_} and note the {say(path[-1])} it returns"
        relation = ""
        if fixed:  # a goal-level request must say which constants, as the phrase does
            said = with_.replace("{", "{{").replace("}", "}}")
            relation = f"the {say(path[-1])} that {say(spec.name)} gives for {{of}}{said}"
        return HopPlan([call], str(response), phrase, relation)

    return Hop(f"{spec.name}_lookup", value_type, "code", plant)


def _simulated_write_action(
    title: str, shape: Shape, tool: ToolDef, family: str
) -> Action[ImportedState] | None:
    """An action through a simulated write: call it with the carried value in its first required
    argument that can take it, the others stated as constants. The criterion is that call among the
    family's recorded calls (``simulated.records.<family>``, `rubric.SIMULATED_CALLS`), every stated
    argument included; ``state_preserved`` allows that one recorded call and no other."""
    spec = shape.spec
    arg = next((p for p in spec.required if _carried_type(shape, p)), None)
    value_type = _carried_type(shape, arg) if arg else None
    if arg is None or value_type is None or any("." in p for p in spec.required):
        return None
    others = [p for p in spec.required if p != arg]

    def plant(state: ImportedState, rng: random.Random, value: str) -> ActionPlan:
        fixed, given, recorded = _simulated_call(shape, tool, arg, others, state, rng, value)
        call = PlannedCall(spec.name, given, inputs={arg: "{value}"})
        match = {"tool": spec.name, **{f"arguments.{p}": recorded[p] for p in given}}
        crit = expect_record(
            f"{SIMULATED_CALLS}{family}", f"'{spec.name}' was called with {say(arg)} {value!r}", **match
        )
        with_ = f" ({stated(fixed)})" if fixed else ""
        phrase = f"{service_where(title)}, call '{spec.name}' with its {say(arg)} set to {VALUE_PHRASES[value_type]}{with_}"
        return ActionPlan([call], [crit], phrase)

    return Action(f"{spec.name}_call", value_type, plant)


def _crud_links(
    title: str, info: CollectionInfo, shape: Shape, typed: dict[ValueType, str]
) -> list[Link[ImportedState]]:
    """Get hops, update and delete actions of one tool (`mcp_crud_links`), at most two per tool."""
    links: list[Link[ImportedState] | None] = []
    if shape.op == "get":
        links += [get_hop(title, info, shape, t, f) for t, f in typed.items() if t != "code"][:2]
    elif shape.op == "update":
        fields = typed_fields(info, list(shape.spec.properties))
        links += [update_action(title, info, shape, t, f) for t, f in fields.items()][:2]
    elif shape.op == "delete":
        links.append(delete_action(title, info, shape))
    return [link for link in links if link is not None]


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
    for info in infos.values():
        typed = typed_fields(info)
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
            found += _crud_links(title, info, shape, typed)
            if extended and shape.spec.name not in finders:
                found += listing_hops(title, info, shape, typed)
            if shape.op != "create" or (not extended and any(p in shape.refs for p in shape.spec.required)):
                continue
            for value_type, field in typed_fields(info, list(shape.spec.properties)).items():
                found.append(_create_action(title, info, shape, value_type, field))
    for shape in shapes:
        if shape.simulated:
            if shape.spec.name in sim.writes:
                action = _simulated_write_action(
                    title, shape, tools[shape.spec.name], sim.family[shape.spec.name]
                )
                if extended and action is not None:
                    found.append(action)
                continue
            hop = _simulated_hop(
                title, service, shape, tools[shape.spec.name], world_model, sim, constants=extended
            )
            if hop is not None:
                found.append(hop)
    return found
