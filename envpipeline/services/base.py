"""Service base: typed pydantic state, namespaced tools, structured observations, never a crash.

A service is a subclass of `Service[S]`, where ``S`` is its pydantic state model, with:

- `name` (the namespace, e.g. ``calendar``), `title`, `domain`;
- `state_model`: ``S``, the pydantic model holding the whole service state (collections of
  records), read from the ``Service[S]`` base (``self.state`` is an ``S``);
- `generate_state(rng)`: a seeded, deterministic initial-state generator;
- tools: methods decorated with `@tool(writes=...)` that take one pydantic arguments model
  (``extra="forbid"``) and return JSON-able data, or raise `ToolError` (400/404/409);
- `links()`: the hops and actions the composer may use (see `envpipeline.services.links`).

`Service.call(tool, arguments)` validates the arguments and always returns an observation:
``{"success": True, "data": ...}`` or ``{"success": False, "error": {"code": 400, "message": ...}}``.
"""

from __future__ import annotations

import copy
import inspect
import math
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import UnionType
from typing import Any, ClassVar, Generic, Literal, TypeVar, Union, cast, get_args, get_origin, get_type_hints

from pydantic import BaseModel, ValidationError

from envpipeline.errors import ServiceError
from envpipeline.models.base import Strict
from envpipeline.services.links import Link, StateT
from envpipeline.services.schema_cache import tool_schema

BAD_REQUEST = 400
NOT_FOUND = 404
CONFLICT = 409


class ToolError(Exception):
    """Raised inside a tool; becomes an error observation, never escapes `Service.call`."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def bad_request(message: str) -> ToolError:
    """A 400 error: a missing or invalid argument."""
    return ToolError(BAD_REQUEST, message)


def not_found(kind: str, identifier: str) -> ToolError:
    """A 404 error: an unknown id."""
    return ToolError(NOT_FOUND, f"{kind} '{identifier}' not found")


def conflict(message: str) -> ToolError:
    """A 409 error: the request conflicts with the current state."""
    return ToolError(CONFLICT, message)


class ToolArgs(Strict):
    """Base of every tool-arguments model: unknown arguments are rejected."""


class Record(Strict):
    """Base of every state record: unknown fields are an error."""


@dataclass(frozen=True)
class ToolDef:
    """One tool of a service: its local name, schema model and implementation."""

    name: str
    description: str
    args_model: type[ToolArgs]
    func: Callable[[Any, Any], Any]
    writes: bool
    simulated: bool = False

    def json_schema(self, namespace: str) -> dict[str, Any]:
        """The OpenAI-style function schema of this tool, with its namespaced name.

        Built once per tool definition and namespace (`schema_cache`); every call returns a
        fresh copy, equal to what `build_json_schema` gives.
        """
        return tool_schema(self, namespace)

    def build_json_schema(self, namespace: str) -> dict[str, Any]:
        """`json_schema` built afresh from the arguments model (pydantic's JSON schema), uncached."""
        params = self.args_model.model_json_schema()
        params.pop("title", None)
        for prop in params.get("properties", {}).values():
            prop.pop("title", None)
        params.setdefault("properties", {})
        params["additionalProperties"] = False
        return {
            "type": "function",
            "function": {
                "name": f"{namespace}.{self.name}",
                "description": self.description,
                "parameters": params,
            },
        }


#: The attribute `tool` sets on a method: whether the tool writes.
_TOOL_MARK = "__tool_writes__"


def tool(*, writes: bool) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark a service method as a tool; its docstring's first paragraph is the description."""

    def mark(func: Callable[..., Any]) -> Callable[..., Any]:
        setattr(func, _TOOL_MARK, writes)
        return func

    return mark


def format_validation_error(error: ValidationError) -> str:
    """A short, agent-readable summary of a pydantic validation error."""
    parts = []
    for item in error.errors()[:3]:
        where = ".".join(str(p) for p in item["loc"]) or "arguments"
        if item["type"] == "missing":
            parts.append(f"missing required argument '{where}'")
        elif item["type"] == "extra_forbidden":
            parts.append(f"unknown argument '{where}'")
        else:
            parts.append(f"invalid argument '{where}': {item['msg']}")
    return "; ".join(parts)


class Service(Generic[StateT]):
    """Base class of every executable service; see the module docstring for the contract."""

    name: ClassVar[str]
    title: ClassVar[str]
    domain: ClassVar[str]
    state_model: ClassVar[type[BaseModel]]
    tools: ClassVar[dict[str, ToolDef]]
    #: hand-written links and phrasings; compositions draw on curated services unless asked for
    #: the whole library (the imported MCP corpus is not curated: its links are derived from names)
    curated: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        declared = _declared_state(cls)
        if declared is not None and "state_model" not in cls.__dict__:
            cls.state_model = declared
        cls.tools = {}
        for attr, func in inspect.getmembers(cls, inspect.isfunction):
            if not hasattr(func, _TOOL_MARK):
                continue
            hints = get_type_hints(func)
            args_model = hints.get("args")
            if args_model is None or not issubclass(args_model, ToolArgs):
                raise ServiceError(f"{cls.__name__}.{attr}: a tool takes one `args: ToolArgs` model")
            description = inspect.cleandoc(func.__doc__ or "").split("\n\n")[0].replace("\n", " ")
            if not description:
                raise ServiceError(f"{cls.__name__}.{attr}: a tool needs a docstring")
            cls.tools[attr] = ToolDef(attr, description, args_model, func, getattr(func, _TOOL_MARK))

    def __init__(self, state: StateT) -> None:
        self.state = state

    @classmethod
    def generate_state(cls, rng: random.Random) -> StateT:
        """Build a deterministic initial state from `rng`."""
        raise ServiceError(f"service {cls.name} has no initial-state generator")

    @classmethod
    def example_arguments(cls, state: StateT) -> dict[str, dict[str, Any]]:
        """Valid arguments for every tool against `state` (drives the generated service tests)."""
        raise ServiceError(f"service {cls.name} gives no example arguments")

    @classmethod
    def links(cls) -> list[Link[StateT]]:
        """The hops and actions this service offers to the composer (none by default)."""
        return []

    @classmethod
    def tool_schemas(cls) -> list[dict[str, Any]]:
        """OpenAI-style schemas of every tool, namespaced (``calendar.update_event``)."""
        return [t.json_schema(cls.name) for t in cls.tools.values()]

    def call(self, tool_name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
        """Run one tool and return its observation; never raises for bad calls."""
        tool_def = self.tools.get(tool_name)
        if tool_def is None:
            return error_observation(NOT_FOUND, f"unknown tool '{self.name}.{tool_name}'")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            return error_observation(BAD_REQUEST, "arguments must be a JSON object")
        try:
            args = tool_def.args_model.__pydantic_validator__.validate_python(arguments)
        except ValidationError as e:
            return error_observation(BAD_REQUEST, format_validation_error(e))
        try:
            data = tool_def.func(self, args)
        except ToolError as e:
            return error_observation(e.code, e.message)
        return {"success": True, "data": data}


def _declared_state(cls: type) -> type[BaseModel] | None:
    """The ``S`` of a class declared as ``class X(Service[S])``; None for any other base."""
    for base in cls.__dict__.get("__orig_bases__", ()):
        origin = get_origin(base)
        if isinstance(origin, type) and issubclass(origin, Service):
            (state,) = get_args(base)
            if isinstance(state, type) and issubclass(state, BaseModel):
                return state
    return None


def is_id_field(name: str) -> bool:
    """Whether an argument or record field names an id (``eventId``, ``id``, ``folder_id``)."""
    return name == "id" or name.endswith("Id") or name.endswith("_id")


def error_observation(code: int, message: str) -> dict[str, Any]:
    """The observation of a failed tool call."""
    return {"success": False, "error": {"code": code, "message": message}}


def _collections_of(cls: type[BaseModel]) -> dict[str, type] | None:
    """State field -> record class, when every field is a ``dict[str, Record]`` collection."""
    decorators = cls.__pydantic_decorators__
    if (
        decorators.field_serializers
        or decorators.model_serializers
        or cls.model_computed_fields
        or cls.model_config.get("extra") == "allow"
    ):
        return None
    found: dict[str, type] = {}
    for name, f in cls.model_fields.items():
        args = get_args(f.annotation)
        if f.exclude or f.serialization_alias or get_origin(f.annotation) is not dict or args[0] is not str:
            return None
        if not (isinstance(args[1], type) and issubclass(args[1], BaseModel)):
            return None
        found[name] = args[1]
    return found


_STATES: dict[type, dict[str, type] | None] = {}


def dump_state(state: BaseModel) -> dict[str, Any]:
    """``state.model_dump(mode="json")``; collections of flat records are copied by `plain_dump`."""
    cls = type(state)
    collections = _STATES[cls] if cls in _STATES else _STATES.setdefault(cls, _collections_of(cls))
    values = state.__dict__
    if collections is None or len(values) != len(collections):
        return state.model_dump(mode="json")
    out: dict[str, Any] = {}
    for name, records in values.items():
        record_cls = collections[name]
        if type(records) is not dict or any(type(r) is not record_cls for r in records.values()):
            return state.model_dump(mode="json")
        out[name] = {key: plain_dump(r) for key, r in records.items()}
    return out


def copy_state(state: StateT) -> StateT:
    """``state.model_copy(deep=True)``, record by record for collections of flat records.

    A field holding a dict of flat records of one class (what `plain_dump` reads straight from
    their fields: JSON scalars, and lists and dicts of them) is copied record by record, each
    record's list and dict fields copied and its scalars shared (they are immutable); every other
    field is deep-copied. About 2.5x cheaper than pydantic's deep copy on the curated services'
    states: composing a candidate copies a service's state before every planting it may have to
    take back. A state with extra or private attributes goes through pydantic's deep copy."""
    if state.__pydantic_extra__ or state.__pydantic_private__:
        return state.model_copy(deep=True)
    memo: dict[int, Any] = {}
    copied = {name: _copied_field(value, memo) for name, value in state.__dict__.items()}
    clone = state.model_copy()  # its fields set, as a deep copy keeps them
    cast("dict[str, Any]", clone.__dict__).update(copied)
    return clone


def _copied_field(value: Any, memo: dict[int, Any]) -> Any:
    """One state field, copied: a dict of flat records record by record, anything else deeply."""
    if type(value) is not dict or not value:
        return copy.deepcopy(value, memo)
    record_cls = type(next(iter(value.values())))
    if not issubclass(record_cls, BaseModel):
        return copy.deepcopy(value, memo)
    key = (record_cls, None)
    plan = _PLANS[key] if key in _PLANS else _PLANS.setdefault(key, _plan(record_cls, None))
    if plan is None:
        return copy.deepcopy(value, memo)
    out: dict[Any, BaseModel] = {}
    for name, record in value.items():
        if type(record) is not record_cls or record.__pydantic_private__ or record.__pydantic_extra__:
            return copy.deepcopy(value, memo)
        fresh = out[name] = record.model_copy()
        fields = cast("dict[str, Any]", fresh.__dict__)  # a model's own field values
        for field in plan.lists:
            if fields[field] is not None:
                fields[field] = list(fields[field])
        for field in plan.dicts:
            fields[field] = dict(fields[field])
    return out


def text_hit(query: str, values: tuple[str, ...]) -> bool:
    """Whether lowercase `query` occurs in one of `values`, case-insensitively (one scan of all)."""
    if "\x00" in query:  # the separator below could join two values into a false hit
        return any(query in v.lower() for v in values)
    return query in "\x00".join(values).lower()


RecordT = TypeVar("RecordT", bound=BaseModel)


def find_record(records: dict[str, RecordT], kind: str, record_id: str) -> RecordT:
    """The record with id `record_id` of one collection.

    Args:
        records: a state collection (id -> record).
        kind: what a record is, for the error message (``contact``).
        record_id: the id a tool was given.

    Raises:
        ToolError: 404 when no record has that id.
    """
    if record_id not in records:
        raise not_found(kind, record_id)
    return records[record_id]


def check_reference(records: Mapping[str, BaseModel], kind: str, record_id: str | None) -> None:
    """Check an optional id argument: None passes, an id must name a record of `records`.

    Raises:
        ToolError: 404 when `record_id` is given and no record has it.
    """
    if record_id is not None and record_id not in records:
        raise not_found(kind, record_id)


def next_id(prefix: str, existing: dict[str, Any]) -> str:
    """The next free id ``<prefix>_<n>`` for a collection keyed by id (deterministic)."""
    n = len(existing) + 1
    while f"{prefix}_{n}" in existing:
        n += 1
    return f"{prefix}_{n}"


def next_int_id(existing: dict[Any, Any]) -> int:
    """The next free integer id for a collection keyed by integer ids: one more than the largest
    (deterministic, never an id in use; 1 for an empty collection)."""
    return max((k for k in existing if type(k) is int), default=0) + 1


def dump(record: BaseModel) -> dict[str, Any]:
    """A record as plain JSON-able data (``model_dump(mode="json")``, fast for flat records)."""
    return plain_dump(record)


_SCALAR_TYPES = (str, int, bool, type(None))


@dataclass(frozen=True)
class _DumpPlan:
    """How `plain_dump` copies one record class: output keys and the fields needing care."""

    keys: dict[str, str] | None  # field -> output key, None when they are the same
    lists: tuple[str, ...]  # list fields of scalars: copied
    dicts: tuple[str, ...]  # dict fields of scalars/floats: copied, floats checked
    floats: tuple[str, ...]  # float fields: must be finite


def _kind(annotation: Any) -> str | None:
    """scalar / float / list / dict for a JSON-plain annotation, None for anything else."""
    if annotation in _SCALAR_TYPES:
        return "scalar"
    if annotation is float:
        return "float"
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Literal:
        return "scalar" if all(isinstance(a, _SCALAR_TYPES) for a in args) else None
    if origin in (Union, UnionType):
        kinds = {_kind(a) for a in args}
        if kinds <= {"scalar"}:
            return "scalar"
        if kinds <= {"scalar", "float"}:
            return "float"
        return "list" if kinds == {"scalar", "list"} and type(None) in args else None
    if origin is list and len(args) == 1 and _kind(args[0]) == "scalar":
        return "list"
    if origin is dict and len(args) == 2 and args[0] is str and _kind(args[1]) in ("scalar", "float"):
        return "dict"
    return None


def _plan(cls: type[BaseModel], by_alias: bool | None) -> _DumpPlan | None:
    decorators = cls.__pydantic_decorators__
    if decorators.field_serializers or decorators.model_serializers or cls.model_computed_fields:
        return None
    if cls.model_config.get("extra") == "allow" or any(f.exclude for f in cls.model_fields.values()):
        return None
    kinds = {name: _kind(f.annotation) for name, f in cls.model_fields.items()}
    if None in kinds.values():
        return None
    if by_alias is None:
        by_alias = bool(cls.model_config.get("serialize_by_alias", False))
    keys = {
        name: (f.serialization_alias or f.alias or name) if by_alias else name
        for name, f in cls.model_fields.items()
    }
    return _DumpPlan(
        keys=None if all(k == v for k, v in keys.items()) else keys,
        lists=tuple(n for n, k in kinds.items() if k == "list"),
        dicts=tuple(n for n, k in kinds.items() if k == "dict"),
        floats=tuple(n for n, k in kinds.items() if k == "float"),
    )


#: (model class, by_alias) -> its dump plan, or None where only pydantic will do
_PLANS: dict[tuple[type, bool | None], _DumpPlan | None] = {}


def plain_keys(cls: type[BaseModel], by_alias: bool | None = None) -> dict[str, str] | None:
    """Output key -> field name of what `plain_dump` gives for records of `cls` straight from their
    fields (in field order), or None when their dump goes through pydantic (nested models, enums,
    dates...). Reading a flat record's values by these keys reads what its dump holds, without
    copying it (except that a non-finite float, which the dump writes as null, reads as itself)."""
    key = (cls, by_alias)
    plan = _PLANS[key] if key in _PLANS else _PLANS.setdefault(key, _plan(cls, by_alias))
    if plan is None:
        return None
    return {plan.keys[name] if plan.keys else name: name for name in cls.model_fields}


def plain_dump(record: BaseModel, by_alias: bool | None = None) -> dict[str, Any]:
    """``record.model_dump(mode="json", by_alias=...)``, read straight from a flat record's fields.

    Records whose declared fields are JSON scalars or lists/dicts of them are copied from their
    field values (containers copied, so the result never aliases the live state); anything else
    (nested models, enums, dates, custom serializers, non-finite floats) goes through pydantic.
    """
    key = (type(record), by_alias)
    plan = _PLANS[key] if key in _PLANS else _PLANS.setdefault(key, _plan(type(record), by_alias))
    if plan is None:
        return record.model_dump(mode="json", by_alias=by_alias)
    out = dict(record.__dict__)
    for name in plan.floats:
        value = out[name]
        if type(value) is float and not math.isfinite(value):
            return record.model_dump(mode="json", by_alias=by_alias)
    for name in plan.lists:
        if out[name] is not None:
            out[name] = list(out[name])
    for name in plan.dicts:
        values = out[name] = dict(out[name])
        if any(type(v) is float and not math.isfinite(v) for v in values.values()):
            return record.model_dump(mode="json", by_alias=by_alias)
    if plan.keys is not None:
        return {plan.keys[name]: value for name, value in out.items()}
    return out
