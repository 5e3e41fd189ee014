"""Which argument of an imported tool carries the composer's value, and as what value type.

The curated rule (`carried_type`): a plain string argument of a simulated tool named like a value
type (``assigneeEmail`` -> email) or like an id (a ``code``), pointing at no collection.

Outside the curated services (`carrier`: simulated tools, and creates and updates whose record
has no typed field) an argument can carry more, read by its name:

- an id of a record in a collection with text ids (``file_id`` of Box's ``files``): a ``code``,
  the record planted with that id by the link, so the call names a record that exists;
- an identifier not spelled ``..._id`` (``tag_gid``, ``event_uuid``, ``caSlug``, a bare ``id``,
  Stripe's ``invoice``): a ``code``;
- free text a value can be written into (``message``, ``content``, ``query``, ``prompt``): a
  ``code`` (post that reference code, search for it);
- a value named in the plural (``symbols``, ``issue_keys``: a comma-separated string), as one;
- the name of a thing (``app``, ``repository``, ``project``, ``zone``): a ``title``;
- a user (``username``, ``user``): a ``person``;
- a required list of free strings (Spotify's ``track_ids``, Google Maps' ``origins``): one item,
  what the name made singular carries (`carried_template` makes the one-item list);
- for a simulated tool where no argument can, a property of a required object argument (Neon's
  ``params.projectId``: `carry`, `carry_template`).

A record's fields are typed by the same names where the curated rule types none of them
(`field_types`: free text is then a ``title``), so its get, list and search tools serve lookups.

Such an argument may accept other types besides text (``chat_id: integer | string``), and when
no required argument carries, an optional one may (Plane's ``cycle(action, cycle_id=...)``),
the required ones then stated as constants. URLs, paths, selectors, scripts, queries in a query
language and the program a tool runs (``execute_blender_code(code)``) carry nothing: a
reference code there would be nonsense.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from envpipeline.models.task import JSON_TEMPLATE, LIST_TEMPLATE
from envpipeline.services.links import ValueType
from envpipeline.services.mcp_spec import CollectionInfo, Shape, singular
from envpipeline.services.mcp_store import id_key
from envpipeline.services.mcp_values import TEXT_WORDS, field_value_type, schema_type, stated_sample, words

#: last words of arguments that identify something without being spelled ``..._id``
ID_WORDS = frozenset({"id", "gid", "uuid", "uid", "sid", "identifier", "slug", "ulid"})
#: last words of arguments that name one record of an API by its id (Stripe's ``invoice``: ``in_...``)
RECORD_ARGS = frozenset(
    {"invoice", "dispute", "subscription", "customer", "charge", "payment", "refund", "session", "order"}
)
#: last words of free-text arguments a value can be written into
TEXT_ARGS = TEXT_WORDS | frozenset(
    {
        "query",
        "q",
        "prompt",
        "search",
        "keyword",
        "keywords",
        "term",
        "about",
        "insight",
        "thought",
        "caption",
    }
)
#: last words of arguments naming a thing (the value is its name: a ``title``)
NAME_ARGS = frozenset(
    {
        "app",
        "project",
        "repository",
        "repo",
        "pipeline",
        "zone",
        "image",
        "tag",
        "channel",
        "team",
        "workspace",
        "database",
        "collection",
        "table",
        "branch",
        "space",
        "folder",
        "bucket",
        "domain",
        "label",
        "topic",
        "model",
        "template",
        "profile",
        "organization",
        "org",
        "group",
        "site",
        "board",
        "playlist",
        "album",
        "artist",
        "container",
        "namespace",
        "cluster",
        "deployment",
        "pod",
        "node",
        "wiki",
        "dataset",
        "queue",
        "campaign",
        "resource",
        "addon",
        "dyno",
    }
)
#: last words of arguments naming a user
USER_ARGS = frozenset({"user", "username", "login", "handle", "recipient"})
#: words that mark an argument as a locator or a program, never a carried value
NEVER_WORDS = frozenset(
    {"url", "uri", "link", "path", "filepath", "selector", "script", "sql", "jql", "pql", "regex", "pattern"}
)

#: words of tools that run what they are given (``execute_blender_code``, ``read_query``) and the
#: arguments that hold the program there: a reference code is no program
RUNNING_WORDS = frozenset({"execute", "exec", "run", "eval", "evaluate", "sql", "query"})
PROGRAM_ARGS = frozenset({"code", "command", "cmd", "expression", "statement", "query", "source"})


def _program(shape: Shape, arg: str) -> bool:
    """Whether `arg` holds the program a tool runs (Blender's ``execute_blender_code(code)``)."""
    last = words(arg)[-1:]
    return bool(last) and last[0] in PROGRAM_ARGS and bool(set(words(shape.spec.name)) & RUNNING_WORDS)


def carried_type(shape: Shape, arg: str) -> ValueType | None:
    """The curated rule: a plain string named like a value type (or like an id: a ``code``) that
    points at no collection."""
    schema = shape.spec.properties[arg]
    if arg in shape.refs or schema.get("enum") or schema_type(schema) != "string":
        return None
    return field_value_type(arg) or ("code" if id_key(arg) else None)


def constrained(schema: dict[str, Any]) -> bool:
    """Whether a string property restricts its text (a pattern, a length): a carried value may not fit."""
    return any(key in schema for key in ("pattern", "minLength", "maxLength"))


def takes_text(schema: dict[str, Any]) -> bool:
    """Whether a property accepts a free string: a string without enum or format, or a union with one."""
    if schema.get("enum") or schema.get("format") or schema.get("const") is not None or constrained(schema):
        return False
    if schema_type(schema) == "string":
        return True
    kinds = schema.get("type")
    options = schema.get("anyOf") or ([{"type": k} for k in kinds] if isinstance(kinds, list) else [])
    return any(o.get("type") == "string" and not o.get("enum") and not o.get("format") for o in options)


def _curated_rule(shape: Shape, arg: str) -> ValueType | None:
    """`carried_type` as the wider rule reads it: an id is a ``code`` whatever other words it has
    (``destination_folder_id`` names a folder, not a city), and a constrained string carries nothing."""
    found = carried_type(shape, arg)
    if found is None or constrained(shape.spec.properties[arg]) or _program(shape, arg):
        return None
    return "code" if id_key(arg) else found


def _named_type(shape: Shape, arg: str, infos: dict[str, CollectionInfo]) -> ValueType | None:
    """The wider rule of the module docstring for one argument (None: it carries nothing)."""
    parts = words(arg)
    if not parts or set(parts) & NEVER_WORDS:
        return None
    target = shape.refs.get(arg)
    if target is not None:
        info = infos.get(target)
        return "code" if info is not None and not info.integer_ids else None
    if not takes_text(shape.spec.properties[arg]) or _program(shape, arg):
        return None
    return _by_name(arg, text="code")


def _by_name(name: str, text: ValueType) -> ValueType | None:
    """The wider rule by name alone; free text carries `text` (an argument a code, a field a title)."""
    parts = words(name)
    last = parts[-1]
    if last in ID_WORDS or last in RECORD_ARGS:
        return "code"
    typed = field_value_type(name) or field_value_type(singular(last))  # ``symbols``: a symbol
    if typed is not None:
        return typed
    if last in TEXT_ARGS:
        return text
    if last in USER_ARGS:
        return "person"
    return "title" if last in NAME_ARGS else None


def list_of_text(schema: dict[str, Any]) -> bool:
    """Whether a property is an array of free strings (Spotify's ``track_ids``)."""
    return schema_type(schema) == "array" and takes_text(schema.get("items", {"type": "string"}))


def carried_template(shape: Shape, arg: str) -> str:
    """How the carried value fills `arg`: as itself, or as the one item of a list (`list_of_text`)."""
    return LIST_TEMPLATE if list_of_text(shape.spec.properties.get(arg, {})) else "{value}"


def _listed_type(shape: Shape, arg: str) -> ValueType | None:
    """What one item of an array of free strings carries, by its name made singular: Spotify's
    ``track_ids`` a code, Google Maps' ``origins`` a city, the memory graph's ``names`` a title;
    never a path, a URL or a selector."""
    parts = words(arg)
    if not parts or not list_of_text(shape.spec.properties[arg]):
        return None
    one = [*parts[:-1], singular(parts[-1])]
    if set(one) & NEVER_WORDS or set(parts) & NEVER_WORDS:
        return None
    return _by_name("_".join(one), text="code")


@dataclass(frozen=True)
class Carry:
    """Where a simulated tool takes the chain's value: an argument, or a property (`inner`) of an
    object argument, and the value's type."""

    arg: str
    value_type: ValueType
    inner: str | None = None


def carry(
    shape: Shape, infos: dict[str, CollectionInfo], scopes: frozenset[str] = frozenset()
) -> Carry | None:
    """The `carrier` of a simulated tool outside the curated services; where no argument carries, a
    property of a required object argument that does by the wider rule (Neon's tools take
    everything in one ``params`` object: ``params.projectId``, a code)."""
    found = carrier(shape, infos, scopes=scopes)
    if found is not None:
        return Carry(*found)
    for arg in shape.spec.required:
        schema = shape.spec.properties[arg]
        props = schema.get("properties") or {}
        if schema_type(schema) != "object" or not props:
            continue
        required = [p for p in schema.get("required", []) if p in props]
        for inner in [*required, *(p for p in props if p not in required)]:
            parts = words(inner)
            if not parts or set(parts) & NEVER_WORDS or not takes_text(props[inner]):
                continue
            value_type = _by_name(inner, text="code")
            if value_type is not None:
                return Carry(arg, value_type, inner)
    return None


def carry_template(shape: Shape, carried: Carry, rng: random.Random) -> tuple[str, dict[str, Any]]:
    """The binding template of a carrying argument (`carried_template`; an object: JSON around the
    value, its other required properties sampled) and those properties, which a request states."""
    if carried.inner is None:
        return carried_template(shape, carried.arg), {}
    sampled = stated_sample(shape.spec.properties[carried.arg], rng, carried.arg)
    inside = {k: v for k, v in sampled.items() if k != carried.inner} if isinstance(sampled, dict) else {}
    return JSON_TEMPLATE + json.dumps({**inside, carried.inner: "{value}"}), inside


def fields_typed(
    info: CollectionInfo,
    rule: Callable[[str, dict[str, Any]], ValueType | None],
    names: list[str] | None = None,
) -> dict[ValueType, str]:
    """Plain string fields of a record (no enum, not ids, not references) that `rule` types:
    type -> first such field, among `names` (default: every field)."""
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
        value_type = rule(prop, schema)
        if value_type and value_type not in found:
            found[value_type] = prop
    return found


def _wide_field_type(prop: str, schema: dict[str, Any]) -> ValueType | None:
    """The wider rule for a record's field: free text is a title, a code is left out."""
    parts = words(prop)
    if not parts or set(parts) & NEVER_WORDS or not takes_text(schema):
        return None
    found = _by_name(prop, text="title")
    return None if found == "code" else found


def field_types(info: CollectionInfo, names: list[str] | None = None) -> dict[ValueType, str]:
    """The fields of a record the wider rule types (type -> first field, among `names`), for a
    collection the curated rule types none of (Close's call activities: a ``note``, GitHub's gists:
    a ``description``, Heroku's apps: an ``app``). Free text is a ``title`` here: a record found by
    its note, a note read from a record. Ids and references are left out, as the curated rule does."""
    return fields_typed(info, _wide_field_type, names)


#: a scope argument is required by at least this many of a service's tools (and half of them)
SCOPE_MIN_TOOLS = 8


def scope_arguments(shapes: list[Shape]) -> frozenset[str]:
    """Arguments most of a service's tools require (GitHub's ``owner`` and ``repo``, Airtable's
    ``base_id``, Moneybird's ``administration_id``): where a call works, not a field of the record
    it makes or changes. Outside the curated services a create, an update or a simulated call
    carries a value in one only where nothing else can, and no field hop does (50 of GitHub's
    actions took the repository ``owner``, a person, as if a comment had an owner); a request
    states them as constants."""
    counts = Counter(arg for shape in shapes for arg in shape.spec.required)
    floor = max(SCOPE_MIN_TOOLS, len(shapes) / 2)
    return frozenset(arg for arg, count in counts.items() if count >= floor)


def carrier(
    shape: Shape,
    infos: dict[str, CollectionInfo],
    among: set[str] | None = None,
    scopes: frozenset[str] = frozenset(),
) -> tuple[str, ValueType] | None:
    """The argument that carries the value outside the curated services, and its type.

    First what the curated rule finds among the required arguments (`_curated_rule`), then a
    required argument by the wider rule, then (where `among` is not given) a required list of free
    strings, the value its one item (`_listed_type`, filled by `carried_template`), then an
    optional argument by either rule (one named after the tool's own record first). `among`: the
    arguments that may carry (all by default; a create or an update carries in a field of its
    record). The required arguments in the service's `scopes` (`scope_arguments`) come after the
    others, pass by pass.
    """
    spec = shape.spec
    allowed = set(spec.properties) if among is None else among
    required = [a for a in spec.required if a in allowed]
    # the tool's own arguments before the service's scopes (GitHub's message before its owner)
    for group in ([a for a in required if a not in scopes], [a for a in required if a in scopes]):
        for arg in group:
            found = _curated_rule(shape, arg)
            if found is not None:
                return arg, found
        for arg in group:
            found = _named_type(shape, arg, infos)
            if found is not None:
                return arg, found
        for arg in group if among is None else []:  # a tool's list, not a record's field
            found = _listed_type(shape, arg)
            if found is not None:
                return arg, found
    own = set(words(spec.name))
    optional = [a for a in spec.properties if a not in spec.required and a in allowed]
    # the tool's own record first: Plane's ``cycle`` carries ``cycle_id`` before ``project_id``
    for arg in sorted(optional, key=lambda a: not own & set(words(a)[:-1])):
        found = _curated_rule(shape, arg) or _named_type(shape, arg, infos)
        if found is not None:
            return arg, found
    return None
