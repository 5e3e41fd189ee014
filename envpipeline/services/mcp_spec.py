"""MCP tool specs: parsing, validation, tool shapes and pydantic models from JSON schema.

`parse_tools_list` accepts what an MCP server answers to ``tools/list`` and returns validated
`ToolSpec`s; every problem is a `SpecError` naming the offending tool. `classify` maps each tool
onto a typed collection by the shape of its name (``create_issue``/``get_issue``/``list_issues``
share ``issues``) or marks it simulated; `args_model` and `annotation` turn JSON schema into
pydantic types.
"""

from __future__ import annotations

import functools
import json
import keyword
import operator
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model

from envpipeline.errors import SpecError
from envpipeline.models.base import Strict
from envpipeline.services.base import ToolArgs, next_id, next_int_id, plain_dump
from envpipeline.services.mcp_bounds import check_schema_bounds
from envpipeline.services.mcp_schema import normalize_schema
from envpipeline.services.mcp_store import HTTP_METHODS, NOT_INSIDE, SimulatedStore
from envpipeline.services.mcp_values import NULL, schema_type, words

TOOL_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_\-]*$")
PROPERTY_NAME = re.compile(r"^[A-Za-z0-9_$@][A-Za-z0-9_\-.$@:]*$")

#: Words that name reading one object (``box_file_info``, ``task_details``): a get even after a
#: plural noun (Heroku's ``pipelines_info`` reads one pipeline).
DETAIL_WORDS = ("info", "details")
#: verb -> operation kind of a CRUD tool
VERBS: dict[str, str] = {
    **dict.fromkeys(("create", "add", "new", "insert", "post", "upload"), "create"),
    **dict.fromkeys(("get", "read", "fetch", "retrieve", "show", "describe", "view", *DETAIL_WORDS), "get"),
    **dict.fromkeys(("list", "all"), "list"),
    **dict.fromkeys(("update", "edit", "modify", "set", "patch", "put", "rename"), "update"),
    **dict.fromkeys(("delete", "remove", "archive"), "delete"),
    **dict.fromkeys(("search", "find", "query"), "search"),
}
#: Name words that never name a service's objects: prefixes of vendor tool names.
PREFIX_WORDS = frozenset({"api", "mcp", "tool"})
#: Name words that end vendor tool names without naming anything (Box's ``box_folder_create_tool``).
SUFFIX_WORDS = frozenset({"tool"})
FILLERS = frozenset({"all", "my", "the", "a", "an", "tool", "single"})
PREPOSITIONS = frozenset({"to", "from", "on", "for", "by", "in", "of", "with", "at"})
QUERY_ARGS = ("query", "q", "text", "keyword", "keywords", "term", "search", "searchText")
LIMIT_ARGS = frozenset({"limit", "maxresults", "max_results", "pagesize", "page_size", "count", "top"})


@dataclass(frozen=True)
class ToolSpec:
    """One validated MCP tool."""

    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] | None = None  # MCP tool annotations (readOnlyHint, ...)

    @property
    def properties(self) -> dict[str, dict[str, Any]]:
        """The input properties (name -> schema)."""
        return self.input_schema.get("properties", {})

    @property
    def required(self) -> list[str]:
        """The required input property names."""
        return list(self.input_schema.get("required", []))


@dataclass
class Shape:
    """How one tool is served: a CRUD operation on a collection, or simulated."""

    spec: ToolSpec
    op: str | None  # create/get/list/update/delete/search; None when simulated
    collection: str | None
    id_arg: str | None = None
    query_arg: str | None = None
    refs: dict[str, str] = field(default_factory=dict)  # id-like argument -> referenced collection
    #: JSON type of its collection's record ids: ``integer`` where `classify` found every id
    #: argument of that collection an integer (`_id_kinds`), else ``string``
    id_type: str = "string"
    #: why the tool is simulated, in words (empty for a CRUD tool)
    reason: str = ""

    @property
    def simulated(self) -> bool:
        """Whether the world model answers this tool."""
        return self.op is None


def singular(word: str) -> str:
    """A naive English singular (``categories`` -> ``category``, ``addresses`` -> ``address``)."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "ches", "shes", "xes", "zes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


#: plurals `singular` gets wrong, and the one a sentence names (a collection keeps its name)
IRREGULAR_SINGULARS = {
    "statuses": "status",
    "aliases": "alias",
    "analyses": "analysis",
    "indices": "index",
    "wikis": "wiki",
    "apis": "api",
}


def noun_of(collection: str) -> str:
    """What one record of `collection` is called: its last word made singular, where `singular`
    keeps a name's shape for `collection_of` (``timeseries`` -> ``timesery``, so that the plural
    comes back) but a sentence must read ``timeseries`` (and ``status``, ``alias``, ``index``)."""
    *head, last = collection.split("_")
    invariant = last.endswith(("series", "species"))
    one = last if invariant else IRREGULAR_SINGULARS.get(last, singular(last))
    return "_".join([*head, one])


def plural(word: str) -> str:
    """A naive English plural (``category`` -> ``categories``)."""
    if word.endswith("y") and len(word) > 1 and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    return word + "s"


def collection_of(noun_words: list[str]) -> str:
    """The collection named by noun words: the last word singularized then pluralized."""
    *head, last = noun_words
    return "_".join([*head, plural(singular(last))])


def id_target(arg: str) -> str | None:
    """The collection an id-like argument names (``issueId``/``issue_id`` -> ``issues``), if any."""
    parts = words(arg)
    if len(parts) < 2 or parts[-1] != "id":
        return None
    return collection_of(parts[:-1])


# ---------------------------------------------------------------------------------- parsing


def _fail(tool: str, problem: str) -> SpecError:
    return SpecError(f"tool '{tool}': {problem}")


def _check_input_schema(tool: str, raw: Any) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise _fail(tool, "inputSchema must be a JSON schema of type 'object'")
    schema = normalize_schema(tool, "inputSchema", raw)
    if schema.get("type") != "object":
        raise _fail(tool, "inputSchema must be a JSON schema of type 'object'")
    seen: dict[str, str] = {}
    for name in schema.get("properties", {}):
        if not PROPERTY_NAME.match(name):
            raise _fail(
                tool, f"inputSchema.properties: property name {name!r} is not usable as an argument name"
            )
        safe = python_name(name)
        if safe in seen:
            raise _fail(tool, f"inputSchema.properties: properties {seen[safe]!r} and {name!r} clash")
        seen[safe] = name
    return schema


def _tool_list(payload: Any) -> list[Any]:
    if isinstance(payload, (str, bytes)):
        try:
            payload = json.loads(payload)
        except ValueError as e:
            raise SpecError(f"tools/list payload is not valid JSON: {e}") from e
        except RecursionError as e:
            raise SpecError("tools/list payload is nested too deeply to parse") from e
    if isinstance(payload, dict) and "jsonrpc" in payload:
        if "error" in payload:
            raise SpecError(f"tools/list answered with a JSON-RPC error: {payload['error']}")
        payload = payload.get("result")
    if isinstance(payload, dict):
        payload = payload.get("tools")
    if not isinstance(payload, list):
        raise SpecError("tools/list payload must be a list of tools, {'tools': [...]} or a JSON-RPC result")
    return payload


def parse_tools_list(payload: Any) -> list[ToolSpec]:
    """Validated tools of a ``tools/list`` result: ``{"tools": [...]}``, a JSON-RPC response or a list.

    `payload` may be parsed JSON or JSON text. Raises `SpecError` naming the offending tool (or its
    position when it has no name).
    """
    specs: list[ToolSpec] = []
    seen: set[str] = set()
    for index, raw in enumerate(_tool_list(payload)):
        if not isinstance(raw, dict):
            raise SpecError(f"tool #{index}: must be a JSON object")
        name = raw.get("name")
        if not isinstance(name, str) or not name:
            raise SpecError(f"tool #{index}: has no name")
        if not TOOL_NAME.match(name):
            raise _fail(name, "name must start with a letter and hold only letters, digits, _ and -")
        if name in seen:
            raise _fail(name, "duplicate tool name")
        seen.add(name)
        # Bounds first: the type checks below recurse, so depth must be known to be sane.
        check_schema_bounds(name, "inputSchema", raw.get("inputSchema"))
        schema = _check_input_schema(name, raw.get("inputSchema"))
        output = raw.get("outputSchema")
        if output is not None and not isinstance(output, dict):
            raise _fail(name, "outputSchema must be a JSON schema object")
        check_schema_bounds(name, "outputSchema", output)
        if output is not None:
            output = normalize_schema(name, "outputSchema", output)
        description = str(raw.get("description") or raw.get("title") or " ".join(words(name))).strip()
        hints = raw.get("annotations")
        specs.append(ToolSpec(name, description, schema, output, hints if isinstance(hints, dict) else None))
    if not specs:
        raise SpecError("tools/list payload holds no tools")
    return specs


# ---------------------------------------------------------------------------------- shapes


def _verb_inside(parts: list[str], nouns: frozenset[str]) -> list[str]:
    """`parts` with a verb from inside the name moved first, when every word before it is a noun.

    ``folder_set_description`` -> [set, folder, description] and ``web_link_get_by_id`` -> [get,
    web, link, by, id] when the service names folders and web links elsewhere (`nouns`: singular
    words); ``cancel_all_orders`` and ``prepare_query_tuning`` stay as they are (``cancel`` and
    ``prepare`` name nothing, ``all`` inside a name is no verb).
    """
    for i, word in enumerate(parts):
        if word in VERBS:
            inside = i > 0 and word not in NOT_INSIDE and all(singular(w) in nouns for w in parts[:i])
            return [word, *parts[:i], *parts[i + 1 :]] if inside else parts
    return parts


def _verb_and_noun(
    name: str, prefixes: frozenset[str] = frozenset(), nouns: frozenset[str] = frozenset()
) -> tuple[str | None, list[str]]:
    """The CRUD operation and noun words of a tool name, after vendor prefixes.

    ``API-retrieve-a-page`` -> (get, [page]); ``slack_post_message`` -> (create, [message]);
    ``API-post-search`` -> (search, []); ``kv_namespace_create`` -> (create, [kv, namespace]);
    ``get_users``/``get_all_tasks`` (a plural noun) -> (list, ...); ``box_folder_create_tool``
    -> (create, [folder]) (a trailing ``tool`` is dropped first); ``box_file_info`` -> (get, [file]),
    ``file_rename`` -> (update, [file]), ``file_upload`` -> (create, [file]). With `nouns` (the service's
    object words, see `_verb_inside`), ``folder_set_description`` -> (update, [folder, description]).
    """
    parts = words(name)
    while len(parts) > 1 and parts[0] not in VERBS and parts[0] in prefixes | PREFIX_WORDS:
        parts = parts[1:]
    while len(parts) > 1 and parts[-1] in SUFFIX_WORDS:
        parts = parts[:-1]
    if parts and parts[0] not in VERBS and len(parts) > 1 and parts[-1] in VERBS:
        parts = [parts[-1], *parts[:-1]]  # ``workers_list``: verb last
    elif parts and parts[0] not in VERBS:
        parts = _verb_inside(parts, nouns)
    if not parts or parts[0] not in VERBS:
        return None, []
    if len(parts) > 1 and parts[0] in HTTP_METHODS and parts[1] in VERBS:
        parts = parts[1:]  # ``post_search``: an HTTP method before the real verb
    op = VERBS[parts[0]]
    noun: list[str] = []
    for word in parts[1:]:
        if word in PREPOSITIONS:
            break
        if word not in FILLERS:
            noun.append(word)
    if (
        op == "get"
        and parts[0] not in DETAIL_WORDS
        and noun
        and (parts[1:2] == ["all"] or _is_plural(noun[-1]))
    ):
        op = "list"
    if op == "get" and len(noun) > 1 and noun[-1] in DETAIL_WORDS:
        noun = noun[:-1]  # ``get_server_info``: a server's
    return op, noun


def _is_plural(word: str) -> bool:
    return singular(word) != word and not word.endswith(
        ("ss", "us", "is", "status", "details", "settings", "news")
    )


def common_prefixes(names: list[str], service: str = "") -> frozenset[str]:
    """Leading words shared by most tool names and not verbs (``asana_``, ``outlookMail_``)."""
    found = set(words(service))
    rest = [words(n) for n in names]
    while rest:
        firsts = [p[0] for p in rest if len(p) > 1]
        if not firsts:
            break
        top = max(set(firsts), key=firsts.count)
        if top in VERBS or firsts.count(top) < 0.6 * len(rest):
            break
        found.add(top)
        rest = [p[1:] if p and p[0] == top else p for p in rest]
    return frozenset(found - set(VERBS))


def _object_words(specs: list[ToolSpec], nouns: list[list[str]]) -> frozenset[str]:
    """The words a service uses for its objects, singular: the nouns of its CRUD-shaped names and
    the words of its id-like arguments (``web_link_id`` -> web, link)."""
    found = {w for noun in nouns for w in noun}
    found |= {w for spec in specs for a in spec.properties if words(a)[-1:] == ["id"] for w in words(a)[:-1]}
    return frozenset(singular(w) for w in found if w not in VERBS)


def _names_part_of(arg: str, collection: str, collections: set[str], listed: set[str]) -> bool:
    """Whether an id argument names `collection` by its last or first words (any JSON type).

    ``namespace_id`` of ``kv_namespaces`` does; ``email_id`` of ``email_activities`` does when email
    activities are listed or created (`listed`: else ``ticket_id`` of ``ticket_statuses`` is the
    ticket's status, not a record of its own). Neither when the words name a collection of their own:
    ``file_id`` of ``shared_link_files`` is a file's id when ``files`` is a collection.
    """
    target = id_target(arg)
    if not target or target in collections:
        return False
    first = "_".join(words(arg)[:-1])
    return collection.endswith(f"_{target}") or (collection in listed and collection.startswith(f"{first}_"))


def _id_candidates(shape: Shape, collections: set[str], listed: set[str]) -> Iterator[tuple[str, str]]:
    """(argument, collection) for every argument of `shape` that may carry a record id, of any type.

    An argument named like a collection's id (``issue_id``), a ``parent_id`` (its tool's own
    collection), and on a tool acting on a collection its ``id`` and the id arguments named by part
    of the collection's name (`_names_part_of`).
    """
    for arg in shape.spec.properties:
        target = id_target(arg)
        if target in collections:
            yield arg, target
        if shape.collection and (
            words(arg) == ["parent", "id"]
            or (arg == "id" and shape.op in ("create", "get", "update", "delete"))
            or _names_part_of(arg, shape.collection, collections, listed)
        ):
            yield arg, shape.collection


def _id_kinds(shapes: list[Shape], collections: set[str], listed: set[str]) -> dict[str, str]:
    """Collection -> the JSON type of its ids: ``integer`` when every argument that may carry one of
    them is an integer (Freshdesk's ``ticket_id``, Affinity's ``person_id``), else ``string``.

    A collection whose tools disagree (a string ``issue_id`` here, an integer one there) keeps
    string ids: its integer arguments then name nothing, as before integer ids were supported.
    """
    kinds: dict[str, set[str | None]] = {}
    for shape in shapes:
        for arg, target in _id_candidates(shape, collections, listed):
            kinds.setdefault(target, set()).add(schema_type(shape.spec.properties[arg]))
    return {c: "integer" if found == {"integer"} else "string" for c, found in kinds.items()}


#: `Shape.reason` of a tool whose name holds no CRUD verb
NO_VERB = "its name has no CRUD verb (create, get, list, update, delete, search or a synonym)"


def _no_id_reason(shape: Shape) -> str:
    """Why a get/update/delete tool is simulated: no required argument carries its record's id."""
    required = shape.spec.required
    shown = f"required: {', '.join(required)}" if required else "no argument is required"
    operation = str(shape.op)
    article = "an" if operation[:1] in "aeiou" else "a"
    return f"{article} {operation} on {shape.collection}, but no required argument carries one's id ({shown})"


def classify(specs: list[ToolSpec], service: str = "") -> list[Shape]:
    """The shape of every tool: its CRUD operation and collection, or simulated (op None).

    create/list/search tools name their collection by their noun; get/update/delete tools use the
    longest prefix of their noun that names a known collection (``set_issue_status`` updates
    ``issues``) and need an id-like argument for it. Anything else is simulated. Id arguments are
    strings, or integers for a collection whose every id argument is an integer (`_id_kinds`).
    """
    prefixes = common_prefixes([s.name for s in specs], service)
    parsed = [(spec, *_verb_and_noun(spec.name, prefixes)) for spec in specs]
    nouns = _object_words(specs, [noun for _, _, noun in parsed])
    parsed = [(spec, *_verb_and_noun(spec.name, prefixes, nouns)) for spec in specs]
    known = {collection_of(noun) for _, op, noun in parsed if op in ("create", "list", "search") and noun}
    shapes: list[Shape] = []
    for spec, op, noun in parsed:
        if op is None or not noun:
            why = NO_VERB if op is None else f"its name has the CRUD verb ({op}) but names no object"
            shapes.append(Shape(spec, None, None, reason=why))
            continue
        collection = collection_of(noun)
        if op in ("get", "update", "delete"):
            prefixes = [collection_of(noun[:n]) for n in range(len(noun), 0, -1)]
            collection = next((c for c in prefixes if c in known), collection)
        shapes.append(Shape(spec, op, collection))
    collections = {s.collection for s in shapes if s.collection}
    kinds = _id_kinds(shapes, collections, known)
    for shape in shapes:
        props = shape.spec.properties
        mine = kinds.get(str(shape.collection), "string")  # the type of this tool's collection's ids
        shape.refs = {
            a: t
            for a in props
            if (t := id_target(a)) in collections and schema_type(props[a]) == kinds.get(t, "string")
        }
        for arg in props:  # a parent of a folder is a folder
            if words(arg) == ["parent", "id"] and shape.collection and schema_type(props[arg]) == mine:
                shape.refs[arg] = shape.collection
        if shape.op in ("get", "update", "delete"):
            own = [a for a, t in shape.refs.items() if t == shape.collection and words(a)[:1] != ["parent"]]
            if "id" in props and schema_type(props["id"]) == mine:
                own.insert(0, "id")
            own += [
                a
                for a in props
                if a not in own
                and schema_type(props[a]) == mine
                and _names_part_of(a, str(shape.collection), collections, known)
            ]
            shape.id_arg = next((a for a in own if a in shape.spec.required), None)
            if shape.id_arg is None:
                shape.reason = _no_id_reason(shape)
                shape.op, shape.collection = None, None
            else:
                shape.refs[shape.id_arg] = shape.collection  # type: ignore[assignment]
        if shape.op == "search":
            strings = [a for a, s in props.items() if schema_type(s) == "string" and a not in shape.refs]
            shape.query_arg = next((a for a in QUERY_ARGS if a in strings), None)
    for shape in shapes:
        if shape.op == "update" and not (set(shape.spec.properties) - {shape.id_arg}):
            shape.reason = f"an update of {shape.collection} with no argument to change"
            shape.op, shape.collection = None, None
    alive = {s.collection for s in shapes if s.collection}
    for shape in shapes:
        shape.id_type = kinds.get(str(shape.collection), "string") if shape.collection else "string"
    for shape in shapes:  # a collection whose every tool turned out simulated is no target
        shape.refs = {a: t for a, t in shape.refs.items() if t in alive}
    return shapes


# ---------------------------------------------------------------------------------- pydantic


@functools.lru_cache(maxsize=65536)
def python_name(prop: str) -> str:
    """A safe Python attribute name for a JSON property (used with an alias when different)."""
    safe = re.sub(r"\W", "_", prop)
    if (
        keyword.iskeyword(safe)
        or safe.startswith("_")
        or safe.startswith("model_")
        or hasattr(BaseModel, safe)
        or safe[:1].isdigit()
    ):
        safe = f"f_{safe.lstrip('_')}"
    return safe


def _model_name(*parts: str) -> str:
    return "".join(w.capitalize() for p in parts for w in words(p)) or "Model"


_SCALARS: dict[str, type] = {"string": str, "integer": int, "number": float, "boolean": bool}
#: A JSON scalar (also the values of a free-form object and the items of a free-form list).
JSON_SCALAR = str | int | float | bool | None
#: Any JSON value one level deep: what an untyped ``{}`` property accepts.
JSON_VALUE = str | int | float | bool | list[JSON_SCALAR] | dict[str, JSON_SCALAR]


def annotation(schema: dict[str, Any], name: str) -> Any:
    """The pydantic annotation of one normalized property schema (see `mcp_schema`).

    Nested objects with properties become strict models (extra keys allowed only with
    ``additionalProperties``); free-form objects and untyped values hold JSON scalars one level
    deep; unions become pydantic unions (``int | str``); nullable types accept None.
    """
    kinds = schema.get("type")
    nullable = isinstance(kinds, list) and NULL in kinds
    if "const" in schema:
        result: Any = Literal[schema["const"]]  # type: ignore[valid-type]
    elif schema.get("enum"):
        values = [v for v in schema["enum"] if v is not None]
        nullable = nullable or None in schema["enum"]
        result = Literal[tuple(values)] if values else type(None)  # type: ignore[valid-type]
    elif "anyOf" in schema:
        options = [o for o in schema["anyOf"] if o.get("type") != NULL]
        nullable = len(options) < len(schema["anyOf"])
        result = functools.reduce(operator.or_, [annotation(o, name) for o in options])
    else:
        kind = schema_type(schema)
        if kind == "array":
            result = list[annotation(schema.get("items", {}), name)]  # type: ignore[misc]
        elif kind == "object" and schema.get("properties"):
            result = fields_model(_model_name(name), schema, base=_object_base(schema))
        elif kind == "object":
            extra = schema.get("additionalProperties")
            values = annotation(extra, name) if isinstance(extra, dict) and extra else JSON_SCALAR
            result = dict[str, values]  # type: ignore[valid-type]
        elif kind in _SCALARS:
            result = _SCALARS[kind]
        elif kind == NULL:
            return type(None)
        elif kind is None and not kinds:
            return JSON_VALUE | None
        else:
            raise SpecError(f"property '{name}' has unsupported type {kind!r}")
    return result | None if nullable else result


class _LazyArgs(ToolArgs):
    """Tool-argument models of imported tools: validators are built on first use, not at import
    (a library of ~2,000 imported tools would otherwise spend most of its load time here)."""

    # JSON names out and in (a nested record's ``from`` must survive a state dump and reload)
    model_config = ConfigDict(defer_build=True, serialize_by_alias=True, validate_by_name=True)


class _OpenArgs(ToolArgs):
    """Nested argument objects whose schema allows ``additionalProperties``."""

    model_config = ConfigDict(extra="allow", defer_build=True, serialize_by_alias=True, validate_by_name=True)


def _object_base(schema: dict[str, Any]) -> type[BaseModel]:
    return _OpenArgs if schema.get("additionalProperties") not in (None, False) else _LazyArgs


def field_info(prop: str, schema: dict[str, Any], required: bool) -> tuple[Any, Any]:
    """The (annotation, FieldInfo) of one property for `pydantic.create_model`."""
    kind = annotation(schema, prop)
    extra: dict[str, Any] = {"description": schema.get("description") or " ".join(words(prop))}
    if python_name(prop) != prop:
        extra["alias"] = prop
    if required:
        return kind, Field(**extra)
    default = schema.get("default")
    if default is not None:
        # Checked here, once: a default pydantic never validates would reach the tool unchecked.
        try:
            TypeAdapter(kind).validate_python(default)
        except ValidationError as e:
            problem = e.errors()[0]["msg"]
            raise SpecError(
                f"property '{prop}': default {default!r} does not fit its schema ({problem})"
            ) from e
    return kind | None, Field(default=default, **extra)


def fields_model(model_name: str, schema: dict[str, Any], base: type[BaseModel]) -> type[BaseModel]:
    """A pydantic model (on `base`) with one field per schema property; required ones have no default."""
    required = set(schema.get("required", []))
    fields = {
        python_name(p): field_info(p, sub, p in required) for p, sub in schema.get("properties", {}).items()
    }
    return create_model(model_name, __base__=base, **fields)  # type: ignore[call-overload]


def args_model(service: str, spec: ToolSpec) -> type[ToolArgs]:
    """The `ToolArgs` model of one tool (extra arguments forbidden).

    Raises:
        SpecError: naming the tool, when a property's default does not fit its schema.
    """
    try:
        model = fields_model(_model_name(service, spec.name, "args"), spec.input_schema, _LazyArgs)
    except SpecError as e:
        raise _fail(spec.name, str(e)) from e
    return model  # type: ignore[return-value]


class ImportedState(Strict):
    """Base of synthesized state models: one ``dict[str, Record]`` field per collection.

    ``simulated`` holds the simulated tools' known ids and recorded calls (`mcp_store`).
    """

    #: built on first use, like the records (`mcp_import._ImportedRecord`)
    model_config = ConfigDict(defer_build=True)

    simulated: SimulatedStore = Field(default_factory=lambda: SimulatedStore(known={}, records={}))


@dataclass
class CollectionInfo:
    """One typed collection of a synthesized service: its record model and the tools on it."""

    name: str
    noun: str  # singular, for ids, messages and response keys (``issue``)
    record: type[BaseModel]
    fields: dict[str, dict[str, Any]]  # JSON property name -> schema (``id`` excluded)
    refs: dict[str, str]  # id-like field -> referenced collection
    tools: dict[str, str] = field(default_factory=dict)  # tool name -> op
    integer_ids: bool = False  # ids are JSON integers (1, 2, ...), not strings (``issue_1``)

    def new_id(self, records: dict[Any, Any]) -> str | int:
        """A fresh id for a record of this collection (`records`: its live records), deterministic."""
        return next_int_id(records) if self.integer_ids else next_id(self.noun, records)


def integer_ids(collection: str, shapes: list[Shape]) -> bool:
    """Whether `collection` has integer ids, as `classify` decided (`Shape.id_type` of its tools;
    shapes planned elsewhere, e.g. by an LLM, keep string ids)."""
    return any(s.collection == collection and s.id_type == "integer" for s in shapes)


def dump_record(record: BaseModel) -> dict[str, Any]:
    """A record as JSON-able data with its JSON property names (aliases)."""
    return plain_dump(record, True)


def texts(value: Any) -> list[str]:
    """Every string inside a JSON value (lists and objects walked)."""
    if isinstance(value, str):
        return [value]
    if not isinstance(value, (list, dict)):
        return []
    found: list[str] = []
    for item in value.values() if isinstance(value, dict) else value:
        if type(item) is str:
            found.append(item)
        elif isinstance(item, (str, list, dict)):
            found.extend(texts(item))
    return found
