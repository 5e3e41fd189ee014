"""Realistic values for fields known only by name and JSON schema (imported MCP services).

Shared by the offline world model, the synthesized services' state generators and their example
arguments: a field's *name* picks a realistic value (``assigneeEmail`` -> an email address,
``dueDate`` -> an ISO date), its *schema* keeps the value conformant (type, enum, bounds, format).
"""

from __future__ import annotations

import functools
import math
import random
import re
from collections.abc import Callable
from typing import Any

from envpipeline.services import vocab
from envpipeline.services.links import ValueType

#: name words -> composer value type (see `envpipeline.services.links.VALUE_TYPES`)
TYPE_WORDS: dict[str, frozenset[str]] = {
    "email": frozenset({"email", "mail"}),
    "date": frozenset({"date", "due", "deadline", "day"}),
    "city": frozenset({"city", "location", "destination", "origin"}),
    "person": frozenset(
        {
            "owner",
            "assignee",
            "author",
            "person",
            "reporter",
            "submitter",
            "approver",
            "employee",
            "traveler",
            "traveller",
        }
    ),
    "code": frozenset({"code", "ref", "reference", "sku", "key", "number", "symbol", "ticker"}),
    "title": frozenset({"title", "subject", "name"}),
}
TYPE_PRIORITY: tuple[ValueType, ...] = ("email", "date", "city", "person", "code", "title")
TEXT_WORDS = frozenset(
    {
        "description",
        "body",
        "notes",
        "note",
        "comment",
        "text",
        "content",
        "message",
        "reason",
        "summary",
        "details",
        "purpose",
    }
)
AMOUNT_WORDS = frozenset({"amount", "price", "cost", "total", "sum", "rate", "fee", "balance"})
COUNT_WORDS = frozenset(
    {
        *("number", "count", "page", "id", "index", "line", "size", "limit", "offset", "port"),
        *("period", "days", "hours", "minutes", "seconds", "quantity", "top", "skip", "depth"),
    }
)
CURRENCIES = ("EUR", "USD", "GBP", "JPY", "CHF", "CAD")
NULL = "null"
#: string kinds by a name's last word, where no value type, text, currency, URL or status claims it
#: (`_string_kind`): MailChimp's contact reads '12 Maple Street', '60612', not 'maple-723'
NAMED_KINDS: dict[str, frozenset[str]] = {
    "phone": frozenset({"phone", "mobile", "fax", "telephone"}),
    "postal": frozenset({"zip", "postcode", "postal", "zipcode"}),
    "street": frozenset({"address", "address1", "address2", "street"}),
    "first_name": frozenset({"firstname", "given"}),
    "last_name": frozenset({"lastname", "surname", "family"}),
    "company": frozenset({"company", "organization", "organisation", "employer"}),
    "domain": frozenset({"domain", "hostname", "host"}),
    "version": frozenset({"version"}),
    "hash": frozenset({"sha", "hash", "commit"}),
    "color": frozenset({"color", "colour"}),
    "branch": frozenset({"branch"}),
    "country": frozenset({"country"}),
    "timezone": frozenset({"timezone", "tz"}),
    "language": frozenset({"language", "locale", "lang"}),
    "interval": frozenset({"interval", "frequency"}),
    "datatype": frozenset({"datatype", "format"}),
    "month": frozenset({"month"}),
    "datetime": frozenset({"time", "timestamp", "datetime", "since", "until"}),
}
#: the kinds among them drawn from a few values
NAMED_FEW: dict[str, tuple[str, ...]] = {
    "country": (
        "Germany",
        "Japan",
        "Brazil",
        "Canada",
        "Kenya",
        "France",
        "India",
        "Portugal",
        "Chile",
        "Vietnam",
    ),
    "timezone": ("Europe/Berlin", "America/New_York", "Asia/Tokyo", "Africa/Nairobi", "America/Sao_Paulo"),
    "language": ("en", "de", "fr", "es", "pt", "ja"),
    "interval": ("1min", "5min", "15min", "30min", "60min", "daily", "weekly", "monthly"),
    "datatype": ("json", "csv"),
    "month": tuple(f"2026-{m:02d}" for m in range(1, 13)),
}
#: kinds an agent guesses in a few tries (`few_values`): the few above, and names from short lists
FEW_KINDS = frozenset({"status", "currency", "first_name", "last_name", "company", *NAMED_FEW})
#: a number range wider than this is a machine's bound, not a domain's: sampled as unbounded
UNBOUNDED = 1_000_000


@functools.lru_cache(maxsize=4096)
def _words(name: str) -> tuple[str, ...]:
    """Cached tuple behind `words`."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return tuple(w.lower() for w in re.split(r"[\s_\-.]+", spaced) if w)


def words(name: str) -> list[str]:
    """Lowercase words of an identifier: ``dueDate``/``due_date``/``due-date`` -> [due, date]."""
    return list(_words(name))


@functools.lru_cache(maxsize=4096)
def field_value_type(name: str) -> ValueType | None:
    """The composer value type a field name suggests, or None.

    The last word decides (``employeeNumber`` is a code) except that a trailing ``name`` after a
    person word is a person (``reporterName``); otherwise the first matching type in
    `TYPE_PRIORITY` among all words.
    """
    parts = _words(name)
    if not parts:
        return None
    last = parts[-1]
    if last == "name" and any(w in TYPE_WORDS["person"] for w in parts[:-1]):
        return "person"
    for value_type in TYPE_PRIORITY:
        if last in TYPE_WORDS[value_type]:
            return value_type
    for value_type in TYPE_PRIORITY:
        if any(w in TYPE_WORDS[value_type] for w in parts):
            return value_type
    return None


def schema_type(schema: dict[str, Any]) -> str | None:
    """The single non-null JSON type of a property schema (``["string", "null"]`` -> string)."""
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != NULL]
        return kinds[0] if len(kinds) == 1 else None
    if kind is None and "properties" in schema:
        return "object"
    return kind


def scalar(schema: dict[str, Any]) -> bool:
    """Whether a property is a plain scalar (a list filter compares those; objects differ per tool)."""
    return schema_type(schema) in ("string", "integer", "number", "boolean") or bool(schema.get("enum"))


@functools.lru_cache(maxsize=4096)
def _string_kind(name: str) -> tuple[str, str]:
    """How `_named_string` fills a field called `name` (cached: the name alone decides)."""
    value_type = field_value_type(name)
    if value_type == "code":
        prefix = "".join(w[0] for w in _words(name)).upper()[:3] or "REF"
        return "code", prefix if len(prefix) > 1 else "REF"
    if value_type is not None:
        return "typed", value_type
    parts = set(_words(name))
    if parts & TEXT_WORDS:
        return "text", ""
    if "currency" in parts:
        return "currency", ""
    if parts & {"url", "link", "uri"}:
        return "url", ""
    if "status" in parts:
        return "status", ""
    if "ip" in parts:  # an ip_address is no street
        return "ip", ""
    last = _words(name)[-1] if _words(name) else ""
    for kind, names in NAMED_KINDS.items():
        if last in names:
            return kind, ""
    return "word", ""


def _named_string(name: str, rng: random.Random) -> str:
    kind, arg = _string_kind(name)
    if kind == "code":
        return vocab.code(rng, arg)
    if kind == "typed":
        return vocab.sample_value(arg, rng)
    if kind == "text":
        return vocab.sentence(rng)
    if kind == "currency":
        return rng.choice(CURRENCIES)
    if kind == "url":
        return f"https://files.example.com/{rng.choice(vocab.WORDS)}-{rng.randint(100, 999)}"
    if kind == "status":
        return rng.choice(("open", "pending", "done"))
    if kind in NAMED_FEW:
        return rng.choice(NAMED_FEW[kind])
    return _NAMED_MAKERS.get(kind, _word)(rng)


def _word(rng: random.Random) -> str:
    return f"{rng.choice(vocab.WORDS)}-{rng.randint(100, 999)}"


_NAMED_MAKERS: dict[str, Callable[[random.Random], str]] = {
    "phone": lambda rng: f"+1 555 {rng.randint(100, 999)} {rng.randint(1000, 9999)}",
    "postal": lambda rng: f"{rng.randint(10000, 99999)}",
    "street": lambda rng: f"{rng.randint(1, 999)} {rng.choice(vocab.WORDS).title()} Street",
    "first_name": lambda rng: rng.choice(vocab.FIRST_NAMES),
    "last_name": lambda rng: rng.choice(vocab.LAST_NAMES),
    "company": lambda rng: f"{rng.choice(vocab.WORDS).title()} {rng.choice(('Labs', 'Ltd', 'Group', 'Inc'))}",
    "domain": lambda rng: f"{rng.choice(vocab.WORDS)}-{rng.randint(10, 99)}.example.com",
    "version": lambda rng: f"{rng.randint(1, 5)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}",
    "hash": lambda rng: f"{rng.getrandbits(40):010x}",
    "color": lambda rng: f"#{rng.getrandbits(24):06x}",
    "branch": lambda rng: f"feature/{rng.choice(vocab.WORDS)}-{rng.randint(10, 99)}",
    "datetime": lambda rng: f"{vocab.date(rng)}T{rng.randint(8, 18):02d}:{rng.choice(('00', '30'))}:00Z",
    "ip": lambda rng: f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
}


def few_values(name: str, schema: dict[str, Any]) -> bool:
    """Whether `sample` fills a string property with one of a few values an agent can guess (an
    enum, a constant, a status, a currency, a country, a first name: `FEW_KINDS`) rather than one
    of thousands."""
    if "const" in schema or schema.get("enum"):
        return True
    return not schema.get("format") and _string_kind(name)[0] in FEW_KINDS


def _string(name: str, schema: dict[str, Any], rng: random.Random) -> str:
    fmt = schema.get("format")
    if fmt == "date":
        value = vocab.date(rng)
    elif fmt == "date-time":
        value = f"{vocab.date(rng)}T{rng.randint(8, 18):02d}:00:00Z"
    elif fmt == "email":
        value = vocab.sample_value("email", rng)
    elif fmt in ("uri", "url"):
        value = f"https://files.example.com/{rng.choice(vocab.WORDS)}"
    else:
        value = _named_string(name, rng)
    low, high = schema.get("minLength", 0), schema.get("maxLength")
    if len(value) < low:
        value = value + "x" * (low - len(value))
    if high is not None:
        value = value[:high]
    return value


@functools.lru_cache(maxsize=4096)
def _is_count(name: str) -> bool:
    """Whether a ``number`` field is a whole number by its name (``pullNumber``, ``page``, ``count``)."""
    parts = _words(name)
    return bool(parts) and parts[-1] in COUNT_WORDS


@functools.lru_cache(maxsize=4096)
def _is_amount(name: str) -> bool:
    return bool(set(_words(name)) & AMOUNT_WORDS)


def _number(name: str, schema: dict[str, Any], rng: random.Random, integer: bool) -> int | float:
    is_amount = _is_amount(name)
    low = schema.get("minimum", schema.get("exclusiveMinimum", 1 if is_amount else 0))
    high = schema.get("maximum", schema.get("exclusiveMaximum", 500 if is_amount else 10))
    if "exclusiveMinimum" in schema:
        low = low + (1 if integer else 0.01)
    if "exclusiveMaximum" in schema:
        high = high - (1 if integer else 0.01)
    if high - low > UNBOUNDED:  # a machine bound (zod's 2**53 - 1, an int32's), not a domain's
        high = low + (500 if is_amount else 10)
    high = max(high, low)
    if integer or _is_count(name):
        first, last = math.ceil(low), math.floor(high)
        return rng.randint(first, last) if last >= first else first
    return round(rng.uniform(low, high), 2)


def sample(schema: dict[str, Any], rng: random.Random, name: str = "", depth: int = 0) -> Any:
    """A value conforming to `schema` (objects, arrays, strings, numbers, booleans, enums).

    Object values carry every declared property; arrays hold one to three items (within
    ``minItems``/``maxItems``). Beyond depth 6 objects and arrays are left empty.
    """
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        values = [v for v in schema["enum"] if v is not None]
        return rng.choice(values) if values else None
    if "anyOf" in schema:  # a normalized union: its first non-null option
        options = [o for o in schema["anyOf"] if o.get("type") != NULL] or [{"type": NULL}]
        return sample(options[0], rng, name, depth)
    kind = schema_type(schema)
    if kind == "object":
        props = schema.get("properties", {}) if depth < 6 else {}
        if not props and schema.get("additionalProperties") is not False and depth < 6:
            extra = schema.get("additionalProperties")
            value = sample(extra, rng, "value", depth + 1) if isinstance(extra, dict) and extra else None
            return {rng.choice(vocab.WORDS): value if value is not None else _named_string("value", rng)}
        return {key: sample(sub, rng, key, depth + 1) for key, sub in props.items()}
    if kind == "array":
        low = schema.get("minItems", 1)
        high = max(low, min(schema.get("maxItems", 3), 3))
        count = rng.randint(low, high) if depth < 6 else 0
        item = schema.get("items", {"type": "string"})
        singular = name[:-1] if name.endswith("s") else name
        return [sample(item, rng, singular, depth + 1) for _ in range(count)]
    if kind == "integer":
        return _number(name, schema, rng, integer=True)
    if kind == "number":
        return _number(name, schema, rng, integer=False)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == NULL:
        return None
    return _string(name, schema, rng)  # strings, and untyped ``{}`` values


def lean(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` cut to what a request states: objects keep their required properties (all of them
    where none is required), arrays hold one item (or their minimum); unions are cut alike."""
    if "anyOf" in schema:
        return {**schema, "anyOf": [lean(option) for option in schema["anyOf"]]}
    kind = schema_type(schema)
    if kind == "object" and schema.get("properties"):
        props = schema["properties"]
        required = [p for p in schema.get("required", []) if p in props]
        return {
            **schema,
            "properties": {p: lean(sub) for p, sub in props.items() if not required or p in required},
        }
    if kind == "array":
        items = schema.get("items", {"type": "string"})
        return {**schema, "maxItems": max(schema.get("minItems", 1), 1), "items": lean(items)}
    return schema


def stated_sample(schema: dict[str, Any], rng: random.Random, name: str = "") -> Any:
    """A value of `schema` short enough for a request to state: a `sample` of its `lean` cut
    (QuickBooks' invoice line states its amount and detail type, not its eleven fields)."""
    return sample(lean(schema), rng, name)


def harmonize(
    row: dict[str, Any],
    fixed: frozenset[str] | set[str] = frozenset(),
    secret: frozenset[str] | set[str] = frozenset(),
) -> dict[str, Any]:
    """Make sampled sibling fields consistent (fields in `fixed` are never changed).

    An email field sharing its leading words with a person field becomes that person's address
    (``travelerName``/``travelerEmail``, ``lead``/``leadEmail``); a ``start...``/``end...`` pair of
    dates is put in order. No address is made from a person field in `secret`: a request that
    states the other fields of a call whose person the agent must find would otherwise give the
    person away ("create a trip with its traveler name set to the holder of the account charged
    with REF-6295 (traveler email 'hana.silva@stark.test')").
    """
    people = {
        _person_key(k): v
        for k, v in row.items()
        if isinstance(v, str) and " " in v and field_value_type(k) == "person" and k not in secret
    }
    for key, value in row.items():
        if key in fixed or not isinstance(value, str) or field_value_type(key) != "email":
            continue
        name = people.get(_words(key)[:-1])
        if name:
            row[key] = _address(name)
    starts = [k for k in row if _words(k)[:1] == ("start",) and isinstance(row[k], str)]
    for start in starts:
        end = "end" + start[len("start") :]
        if (
            end in row
            and isinstance(row[end], str)
            and row[end] < row[start]
            and not ({start, end} & set(fixed))
        ):
            row[start], row[end] = row[end], row[start]
    return row


@functools.lru_cache(maxsize=4096)
def _person_key(name: str) -> tuple[str, ...]:
    return tuple(w for w in _words(name) if w != "name")


@functools.lru_cache(maxsize=65536)
def _address(name: str) -> str:
    """The address `harmonize` gives a person (deterministic per name, hence cached)."""
    return vocab.email_for(name, random.Random(name))
