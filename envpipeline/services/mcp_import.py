"""Import from MCP tool specs: a ``tools/list`` result becomes an executable, typed `Service`.

CompoWorld turns MCP tool specs into executable services with typed state; tools that cannot be
implemented reliably are served by a world-model simulator. Here the synthesis is deterministic:

- `parse_tools_list` validates the spec (`SpecError` names the offending tool);
- tools are mapped by name shape onto typed collections (``create_issue``, ``get_issue``,
  ``list_issues``, ``update_issue``, ``delete_issue``, ``search_issues`` share ``issues``) and get
  CRUD semantics: create -> new id; get/update/delete of an unknown id -> 404; any argument
  naming another collection's id (``issueId``) must exist (404); a missing required argument
  -> 400; search = case-insensitive substring over string fields; list = equality filters;
- every other tool is ``simulated``: its arguments and referenced ids are checked against the
  state, then a `WorldModel` answers (`OfflineWorldModel` by default); simulated tools never
  change the state.

Records hold ``id`` plus the union of the create tools' properties (required where every create
tool requires them) and the update tools' properties (optional). Ids are strings (``issue_1``),
or integers (1, 2, ...; a create mints one past the largest) in a collection whose every id
argument is a JSON integer (Freshdesk's ``ticket_id``; see `classify`). Links (hops and actions for the
composer) are derived in `envpipeline.services.mcp_links`.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from envpipeline.errors import SpecError
from envpipeline.models.base import Strict
from envpipeline.services import mcp_values
from envpipeline.services.base import (
    Record,
    Service,
    ToolArgs,
    ToolDef,
    bad_request,
    conflict,
    format_validation_error,
    not_found,
    plain_keys,
    text_hit,
)
from envpipeline.services.links import Link
from envpipeline.services.mcp_links import derive_links
from envpipeline.services.mcp_simulated import simulated_answer
from envpipeline.services.mcp_spec import (
    LIMIT_ARGS,
    CollectionInfo,
    ImportedState,
    Shape,
    ToolSpec,
    args_model,
    classify,
    dump_record,
    field_info,
    integer_ids,
    noun_of,
    parse_tools_list,
    python_name,
    singular,
    texts,
)
from envpipeline.services.mcp_store import (
    family,
    id_key,
    is_write,
    record_write,
    seed_known,
    unknown_id,
)
from envpipeline.services.mcp_values import schema_type
from envpipeline.services.worldmodel import OfflineWorldModel, WorldModel, sampled_response

__all__ = [
    "ImportedService",
    "ImportedState",
    "SynthesisReport",
    "parse_tools_list",
    "synthesis_report",
    "synthesize_service",
    "verified_service",
]

WRITES = frozenset({"create", "update", "delete"})


class SynthesisReport(Strict):
    """What a synthesis produced: tool count and which tools the world model simulates."""

    model_config = ConfigDict(strict=True)

    service: Annotated[str, Field(description="service namespace")]
    tools: Annotated[int, Field(description="number of tools")]
    collections: Annotated[dict[str, list[str]], Field(description="typed collection -> its tools")] = {}
    simulated_tools: Annotated[list[str], Field(description="tools answered by the world model")]
    simulated_share: Annotated[float, Field(description="simulated tools / all tools, 0..1")]


class ImportedService(Service[ImportedState]):
    """Base of synthesized services: the state is an `ImportedState` with one field per collection."""

    world_model: ClassVar[WorldModel]
    #: typed collection -> the tools serving it
    collections: ClassVar[dict[str, list[str]]]
    #: typed collection -> its record noun, the key a get tool answers with (``{"file": {...}}``)
    nouns: ClassVar[dict[str, str]]
    #: CRUD tool -> its operation (create, get, list, update, delete, search)
    operations: ClassVar[dict[str, str]]
    #: simulated tool -> why no CRUD operation serves it (`Shape.reason`)
    simulated_reasons: ClassVar[dict[str, str]]


@dataclass
class SimulatedTools:
    """The simulated tools of one service (families, writes) and every tool's known-id arguments."""

    shapes: list[Shape]
    family: dict[str, str]
    writes: set[str]
    id_args: dict[str, list[str]]

    @classmethod
    def of(cls, service_name: str, shapes: list[Shape]) -> SimulatedTools:
        """Group the simulated tools among `shapes` (see `mcp_store`)."""
        mine = [s for s in shapes if s.simulated]
        prefixes = frozenset({*mcp_values.words(service_name), "api", "mcp"})
        return cls(
            mine,
            {s.spec.name: family(s.spec.name, prefixes) for s in mine},
            {
                s.spec.name
                for s in mine
                if is_write(s.spec.name, s.spec.annotations, prefixes, s.spec.description)
            },
            _free_ids(shapes),
        )


# ---------------------------------------------------------------------------------- typed state


def _collections(service: str, shapes: list[Shape]) -> dict[str, CollectionInfo]:
    infos: dict[str, CollectionInfo] = {}
    for name in dict.fromkeys(s.collection for s in shapes if s.collection):
        mine = [s for s in shapes if s.collection == name]
        creates = [s.spec for s in mine if s.op == "create"]
        updates = [s for s in mine if s.op == "update"]
        fields: dict[str, dict[str, Any]] = {}
        for spec in creates:
            fields.update({p: sch for p, sch in spec.properties.items() if p not in fields and p != "id"})
        for shape in updates:
            fields.update(
                {p: s for p, s in shape.spec.properties.items() if p not in fields and p != shape.id_arg}
            )
        if not fields:
            fields = {"name": {"type": "string", "description": f"{noun_of(name)} name"}}
        required = set.intersection(*(set(s.required) for s in creates)) if creates else set()
        refs = {f: t for s in mine for f, t in s.refs.items() if f in fields}
        integer = integer_ids(name, shapes)
        record_fields: dict[str, Any] = {
            "id": (int if integer else str, Field(description=f"{noun_of(name)} id")),
            **{python_name(f): field_info(f, sch, f in required) for f, sch in fields.items()},
        }
        model = create_model(
            "".join(w.capitalize() for w in f"{service}_{singular(name)}".split("_")),
            __base__=_ImportedRecord,
            **record_fields,
        )
        tools = {s.spec.name: s.op or "" for s in mine}
        infos[name] = CollectionInfo(name, noun_of(name), model, fields, refs, tools, integer)
    return infos


class _ImportedRecord(Record):
    """Records of imported collections: a stored state (Python field names) reloads as it was dumped.

    Validators are built on first use (``defer_build``): the library synthesizes every corpus
    service when it loads, and a run uses few of them (all of them built cost ~7 MB resident).
    """

    model_config = ConfigDict(validate_by_name=True, defer_build=True)


def _state_model(service: str, infos: dict[str, CollectionInfo]) -> type[ImportedState]:
    """The state model: one ``dict[id, record]`` per collection (``int`` keys for integer ids)."""
    fields: dict[str, Any] = {
        n: (dict[int if i.integer_ids else str, i.record], Field(default_factory=dict))
        for n, i in infos.items()
    }
    return create_model(f"{service.capitalize()}State", __base__=ImportedState, **fields)


def _free_ids(shapes: list[Shape]) -> dict[str, list[str]]:
    """Tool -> its string arguments named like ids that point at no typed collection (known ids)."""
    return {
        s.spec.name: [
            a
            for a, sch in s.spec.properties.items()
            if id_key(a) and a not in s.refs and schema_type(sch) == "string"
        ]
        for s in shapes
    }


def _generate(
    state_model: type[ImportedState],
    infos: dict[str, CollectionInfo],
    sim: SimulatedTools,
    rng: random.Random,
) -> ImportedState:
    """3-6 records per collection; values chosen by field name; id-like fields point at real ids.

    The simulated store gets 3-5 known ids per simulated id argument and one seeded earlier call
    per simulated tool (the world's history before this episode).
    """
    names = {id_key(a) or a for args in sim.id_args.values() for a in args}
    known = seed_known(names, random.Random(rng.getrandbits(64))) if names else {}
    ids = {n: _seed_ids(i, rng.randint(3, 6)) for n, i in infos.items()}
    data: dict[str, dict[str, Any]] = {}
    for name, info in infos.items():
        records = {}
        for rid in ids[name]:
            row: dict[str, Any] = {"id": rid}
            for prop, schema in info.fields.items():
                target = info.refs.get(prop)
                pool = ids[target] if target else known.get(id_key(prop) or "")
                row[prop] = rng.choice(pool) if pool else mcp_values.sample(schema, rng, prop)
            records[rid] = mcp_values.harmonize(row)
        data[name] = records
    state = state_model.model_validate(data)
    store = state.simulated
    store.known = known
    for shape in sim.shapes:
        spec = shape.spec
        args = {p: _sample_arg(shape, p, state, rng) for p in spec.required}
        response = sampled_response(spec.output_schema, rng, "SIM")
        record_write(store, sim.family[spec.name], spec.name, args, response)
    return state


def _seed_ids(info: CollectionInfo, count: int) -> list[str | int]:
    """The ids of a collection's first `count` records: ``issue_1``... or, for integer ids, 1...."""
    return [k + 1 if info.integer_ids else f"{info.noun}_{k + 1}" for k in range(count)]


# ---------------------------------------------------------------------------------- tools


def _check_refs(service: ImportedService, shape: Shape, data: dict[str, Any]) -> None:
    for arg, target in shape.refs.items():
        value = data.get(arg)
        if value == shape.spec.properties[arg].get("default"):
            continue  # a declared default (Box's root folder '0') names what the server knows
        if value is not None and value not in getattr(service.state, target):
            raise not_found(noun_of(target).replace("_", " "), str(value))


def _validated_record(record: type[BaseModel], data: dict[str, Any]) -> BaseModel:
    """A record built from a call's arguments; arguments that do not fit it are the caller's 400."""
    try:
        return record.model_validate(data)
    except ValidationError as e:
        raise bad_request(format_validation_error(e)) from e


def _matches(row: dict[str, Any], filters: dict[str, Any]) -> bool:
    for key, wanted in filters.items():
        actual = row.get(key)
        if isinstance(actual, list) and not isinstance(wanted, list):
            if wanted not in actual:
                return False
        elif actual != wanted:
            return False
    return True


@functools.cache
def _argument_keys(model: type[BaseModel]) -> dict[str, str]:
    """Field name -> JSON argument name of a tool's arguments model (what a dump by alias keys)."""
    return {name: f.serialization_alias or f.alias or name for name, f in model.model_fields.items()}


def _sent_arguments(args: BaseModel) -> set[str]:
    """The JSON names of the arguments a call gave (not those its defaults filled)."""
    keys = _argument_keys(type(args))
    return {keys[name] for name in args.model_fields_set}


def _selected_rows(
    records: dict[Any, BaseModel], record_cls: type[BaseModel], filters: dict[str, Any], query: str | None
) -> list[dict[str, Any]]:
    """The dumped records that match every filter (and hold `query`, lowercase, in some string).

    Flat records are matched on their field values and only the matches are dumped; others are
    dumped first. Both read the same values (`plain_keys`), so both select the same rows.
    """
    keys = plain_keys(record_cls, True)
    if keys is None:
        rows = [dump_record(r) for r in records.values()]
        return [
            r for r in rows if _matches(r, filters) and (query is None or text_hit(query, tuple(texts(r))))
        ]
    fields = {key: keys.get(key, "") for key in filters}
    picked = [
        r
        for r in records.values()
        if _matches({key: r.__dict__.get(name) for key, name in fields.items()}, filters)
        and (query is None or text_hit(query, tuple(texts(r.__dict__))))
    ]
    return [dump_record(r) for r in picked]


def _implementation(
    shape: Shape, info: CollectionInfo | None, world_model: WorldModel, sim: SimulatedTools
) -> Callable[[Any, Any], Any]:
    """The function serving one tool (called as ``func(service, args)``)."""
    free_ids = sim.id_args.get(shape.spec.name, [])

    def simulated(service: ImportedService, args: ToolArgs) -> Any:
        data = args.model_dump(mode="json", by_alias=True)
        _check_refs(service, shape, data)
        # the class's model at call time: `install_world_model` may have swapped it in
        model = getattr(type(service), "world_model", world_model)
        return simulated_answer(
            service.name,
            service.state,
            shape,
            data,
            model,
            sim.family[shape.spec.name],
            shape.spec.name in sim.writes,
            sim.id_args.get(shape.spec.name, []),
        )

    if info is None:
        return simulated
    coll, noun = info.name, info.noun

    def run(service: ImportedService, args: ToolArgs) -> Any:
        data = args.model_dump(mode="json", by_alias=True)
        _check_refs(service, shape, data)
        unknown = unknown_id(service.state.simulated, data, free_ids, shape.spec.properties)
        if unknown is not None:
            raise not_found(" ".join(mcp_values.words(unknown[0])[:-1]) or "item", unknown[1])
        records: dict[Any, Any] = getattr(service.state, coll)  # id (str or int) -> record
        if shape.op == "create":
            rid = data.get("id") or info.new_id(records)
            if rid in records:
                raise conflict(f"{noun} '{rid}' already exists")
            record = _validated_record(
                info.record, {"id": rid, **{k: v for k, v in data.items() if k in info.fields}}
            )
            records[rid] = record
            return {noun: dump_record(record)}
        if shape.op in ("get", "update", "delete"):
            rid = data[shape.id_arg]  # type: ignore[index]
            if shape.op == "get":
                return {noun: dump_record(records[rid])}
            if shape.op == "delete":
                del records[rid]
                return {"deleted": rid}
            # an argument the caller left out keeps the record's value, not the tool's default
            # (a flag that defaults to false is not switched off by every update)
            sent = _sent_arguments(args)
            changes = {
                k: v
                for k, v in data.items()
                if k in info.fields and k in sent and k != shape.id_arg and v is not None
            }
            if not changes:
                raise bad_request(f"nothing to update; updatable fields: {', '.join(sorted(info.fields))}")
            records[rid] = _validated_record(info.record, {**dump_record(records[rid]), **changes})
            return {noun: dump_record(records[rid]), "updated": sorted(changes)}
        given = _sent_arguments(args)  # defaults filter nothing
        limit = next((v for k, v in data.items() if k.lower() in LIMIT_ARGS and isinstance(v, int)), None)
        if limit is not None and limit < 0:
            raise bad_request(f"invalid limit {limit}")
        skip = {shape.query_arg} if shape.query_arg else set()
        filters = {
            k: v
            for k, v in data.items()
            if k in info.fields
            and k in given
            and k not in skip
            and v is not None
            and mcp_values.scalar(shape.spec.properties[k])
        }
        query = None
        if shape.query_arg:
            query = str(data.get(shape.query_arg) or "").strip().lower()
            if not query:
                raise bad_request(f"{shape.query_arg} must not be empty")
        rows = _selected_rows(records, info.record, filters, query)
        return {coll: rows[:limit] if limit is not None else rows}

    return run


# ---------------------------------------------------------------------------------- examples


def _example_value(shape: Shape, prop: str, state: ImportedState, rng: random.Random) -> Any:
    target = shape.refs.get(prop)
    if target:
        return next(iter(getattr(state, target)), "none")
    known = state.simulated.known.get(id_key(prop) or "")
    if known and prop not in shape.refs:
        return known[0]
    return mcp_values.sample(shape.spec.properties[prop], rng, prop)


def _sample_arg(shape: Shape, prop: str, state: ImportedState, rng: random.Random) -> Any:
    """A seeded argument value: a real id for references, a known id for simulated ids."""
    target = shape.refs.get(prop)
    if target:
        return rng.choice(sorted(getattr(state, target)) or ["none"])
    known = state.simulated.known.get(id_key(prop) or "")
    if known:
        return rng.choice(known)
    return mcp_values.sample(shape.spec.properties[prop], rng, prop)


def _examples(shapes: list[Shape], infos: dict[str, CollectionInfo], state: ImportedState) -> dict[str, dict]:
    """Valid arguments for every tool against `state` (each call succeeds on a fresh state)."""
    rng = random.Random(0)
    examples: dict[str, dict] = {}
    for shape in shapes:
        spec, props = shape.spec, shape.spec.properties
        wanted = [
            p for p in props if p in spec.required or (shape.op == "create" and p != "id") or p in shape.refs
        ]
        if shape.op in ("list", "search"):
            wanted = [p for p in spec.required if p not in shape.refs] + list(shape.refs)
        args = {p: _example_value(shape, p, state, rng) for p in wanted}
        info = infos.get(shape.collection or "")
        first = dump_record(next(iter(getattr(state, info.name).values()))) if info else {}
        if shape.op in ("list", "search") and info:
            args.update(
                {
                    p: first[p]
                    for p in spec.required
                    if p in first and p not in shape.refs and mcp_values.scalar(props[p])
                }
            )
        if shape.op == "search" and shape.query_arg:
            text = next((t for t in texts({k: v for k, v in first.items() if k != "id"}) if t.strip()), "a")
            args[shape.query_arg] = text.split()[0]
        if shape.op == "update" and info:
            _example_change(shape, info, first, args, rng)
        examples[spec.name] = args
    return examples


def _example_change(shape: Shape, info: CollectionInfo, first: dict, args: dict, rng: random.Random) -> None:
    for prop in shape.spec.properties:
        if prop == shape.id_arg or prop not in info.fields or prop in shape.refs or id_key(prop):
            continue
        for _ in range(20):
            value = mcp_values.sample(shape.spec.properties[prop], rng, prop)
            if value != first.get(prop) and value is not None:
                args[prop] = value
                return


# ---------------------------------------------------------------------------------- synthesis


def synthesize_service(
    service_name: str,
    payload: Any,
    world_model: WorldModel | None = None,
    *,
    title: str | None = None,
    domain: str = "imported",
    classifier: Callable[[list[ToolSpec]], list[Shape]] | None = None,
) -> type[ImportedService]:
    """An `ImportedService` subclass built from a ``tools/list`` payload (see the module docstring).

    The class is not registered; pass it to `register_service` to join the library. `classifier`
    decides each tool's shape (default None: by name, `classify`; `llm_synthesis` passes a model's plan).
    """
    if not service_name.isidentifier() or not service_name.islower():
        raise SpecError(f"service name '{service_name}' must be a lowercase identifier")
    specs: list[ToolSpec] = parse_tools_list(payload)
    model = world_model or OfflineWorldModel()
    shapes = classifier(specs) if classifier is not None else classify(specs, service_name)
    # Argument models first: they check every property default and name the tool of a bad one.
    arguments = {s.spec.name: args_model(service_name, s.spec) for s in shapes}
    infos = _collections(service_name, shapes)
    state_model = _state_model(service_name, infos)
    sim = SimulatedTools.of(service_name, shapes)
    tools = {
        s.spec.name: ToolDef(
            s.spec.name,
            s.spec.description.split("\n\n")[0].replace("\n", " "),
            arguments[s.spec.name],
            _implementation(s, infos.get(s.collection or ""), model, sim),
            s.op in WRITES or s.spec.name in sim.writes,
            s.simulated,
        )
        for s in shapes
    }
    cached_links: list[Link[ImportedState]] = []
    links_model: list[WorldModel] = []

    def generate_state(cls: type[ImportedService], rng: random.Random) -> ImportedState:
        return _generate(state_model, infos, sim, rng)

    def example_arguments(cls: type[ImportedService], state: ImportedState) -> dict[str, dict]:
        return _examples(shapes, infos, state)

    def links(cls: type[ImportedService]) -> list[Link[ImportedState]]:
        if not cached_links or links_model[0] is not cls.world_model:  # derived again after a swap
            cached_links[:] = derive_links(
                cls.title, shapes, infos, tools, cls.world_model, service_name, sim, extended=not cls.curated
            )
            links_model[:] = [cls.world_model]
        return list(cached_links)

    namespace: dict[str, Any] = {
        "__doc__": f"Service '{service_name}' synthesized from {len(specs)} MCP tool specs.",
        "__module__": __name__,
        "name": service_name,
        "title": title or service_name.replace("_", " ").title(),
        "domain": domain,
        "state_model": state_model,
        "world_model": model,
        "collections": {n: sorted(i.tools) for n, i in infos.items()},
        "nouns": {n: i.noun for n, i in infos.items()},
        "operations": {s.spec.name: s.op for s in shapes if s.op is not None},
        "simulated_reasons": {s.spec.name: s.reason or "simulated" for s in shapes if s.simulated},
        "generate_state": classmethod(generate_state),
        "example_arguments": classmethod(example_arguments),
        "links": classmethod(links),
    }
    name = f"{state_model.__name__.removesuffix('State')}Service"
    cls = cast(type[ImportedService], type(name, (ImportedService,), namespace))
    cls.tools = tools
    return cls


def verified_service(
    service_name: str,
    payload: Any,
    world_model: WorldModel | None = None,
    *,
    title: str | None = None,
    domain: str = "imported",
) -> type[ImportedService]:
    """`synthesize_service`, then the generated contract (`contract.check_service`): only a service
    that passes it is returned, so nothing that fails its own contract joins the library.

    Raises:
        SpecError: the spec is malformed, or the service fails its contract (every failure listed).
    """
    from envpipeline.services.contract import check_service

    cls = synthesize_service(service_name, payload, world_model, title=title, domain=domain)
    failures = check_service(cls)
    if failures:
        shown = "; ".join(failures[:20]) + (f"; ... {len(failures) - 20} more" if len(failures) > 20 else "")
        raise SpecError(f"service '{service_name}' fails its contract ({len(failures)} failures): {shown}")
    return cls


def synthesis_report(service_cls: type[Service]) -> SynthesisReport:
    """How many tools a service has and which of them are simulated (any `Service` works)."""
    simulated = sorted(n for n, t in service_cls.tools.items() if t.simulated)
    total = len(service_cls.tools)
    collections = getattr(service_cls, "collections", {})
    return SynthesisReport(
        service=service_cls.name,
        tools=total,
        collections=dict(collections),
        simulated_tools=simulated,
        simulated_share=round(len(simulated) / total, 4) if total else 0.0,
    )
