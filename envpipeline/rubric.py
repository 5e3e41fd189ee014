"""Executable rubric checks on the final joint state and the recorded outputs.

Stdlib and pydantic only (the Harbor runtime vendors this module): states may be live pydantic
models or their JSON dumps, and both evaluate the same.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from typing import Any, NamedTuple

from pydantic import BaseModel

from envpipeline.models import value_pools
from envpipeline.models.criteria import ValueKind
from envpipeline.models.task import Condition, Criterion
from envpipeline.services.base import is_id_field
from envpipeline.value_mentions import addresses_in, code_key, dates_in, same_date

#: criteria checked on the final reply alone (every other kind reads the state)
TEXT_KINDS = ("output_contains", "final_answer")
#: the longest final reply a final_answer criterion accepts by default (one value and a sentence)
DEFAULT_ANSWER_CHARS = 200
#: The state field of an imported service that holds its simulated tools' store (known ids and
#: recorded calls, `envpipeline.services.mcp_store`). ``state_preserved`` keeps it per recorded
#: call (``records/<family>/<n>``), so a task allows the one call it asks for and no other.
SIMULATED_FIELD = "simulated"
#: Criteria read one family's recorded calls as the collection ``simulated.records.<family>``
#: (each call a record: ``tool``, ``arguments``, ``response``).
SIMULATED_CALLS = "simulated.records."
_TRAILING = " \t\n.,;:!?\"'"
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def condition_holds(actual: Any, condition: Condition) -> bool:
    """Whether one field value satisfies one condition."""
    expected = condition.value
    if condition.op == "eq":
        return actual == expected
    if condition.op == "ne":
        return actual != expected
    if condition.op == "addresses":
        return addresses_in(actual) == addresses_in(expected)
    if condition.op == "contains":
        try:
            return expected in actual
        except TypeError:
            return False
    needle = normalize_text(str(expected))
    if isinstance(actual, list):
        return any(needle in normalize_text(str(item)) for item in actual)
    return needle in normalize_text(str(actual))


def normalize_text(text: str) -> str:
    """Free text as criteria compare it: lower case, single spaces, no trailing punctuation."""
    return " ".join(text.lower().split()).strip(_TRAILING)


def record_field(record: Any, name: str) -> Any:
    """A record's field; in a JSON record, ``a.b`` reads field ``b`` inside field ``a`` where the
    record has no field named ``a.b`` (a recorded call's ``arguments.symbol``)."""
    if not isinstance(record, dict):
        return getattr(record, name, None)
    if name in record:
        return record[name]
    head, dot, rest = name.partition(".")
    return record_field(record[head], rest) if dot and isinstance(record.get(head), dict) else None


def record_matches(record: Any, match: Mapping[str, Condition]) -> bool:
    """Whether a record satisfies every condition; unrelated fields are ignored."""
    for name, cond in match.items():
        actual = record_field(record, name)
        if cond.op == "eq":
            if actual != cond.value:
                return False
        elif not condition_holds(actual, cond):
            return False
    return True


def _records(state: Any, collection: str) -> list[Any]:
    if collection.startswith(SIMULATED_CALLS):  # a simulated tool family's recorded calls
        store = _plain(state_fields(state).get(SIMULATED_FIELD))
        calls = store.get("records", {}) if isinstance(store, dict) else {}
        return list(calls.get(collection.removeprefix(SIMULATED_CALLS), []))
    items = state.get(collection) if isinstance(state, dict) else getattr(state, collection, None)
    if items is None:
        return []
    if isinstance(items, dict):
        return list(items.values())
    return list(items)


def matching_records(criterion: Criterion, states: Mapping[str, BaseModel | dict]) -> list[Any]:
    """The records of a record criterion's collection that satisfy all its conditions, as stored."""
    state = states.get(criterion.service or "")
    if state is None:
        return []
    return [r for r in _records(state, criterion.collection or "") if record_matches(r, criterion.match)]


def evaluate_criterion(
    criterion: Criterion, states: Mapping[str, BaseModel | dict], output: str = ""
) -> bool:
    """Whether one criterion passes on the joint state (service -> state) and final output."""
    if criterion.kind == "output_contains":
        expected = str(criterion.match["text"].value).lower()
        return expected in output.lower()
    if criterion.kind == "final_answer":
        return answer_is(
            output, str(criterion.match["text"].value), criterion.value_kind, criterion.max_chars
        )
    if criterion.kind == "state_preserved":
        return state_preserved(
            states,
            criterion.preserved,
            criterion.allowed,
            criterion.allowed_fields,
            criterion.created,
            criterion.created_options,
        )
    state = states.get(criterion.service or "")
    if state is None:
        return False
    found = any(record_matches(r, criterion.match) for r in _records(state, criterion.collection or ""))
    return found if criterion.kind == "record_exists" else not found


def pass_vector(
    criteria: list[Criterion], states: Mapping[str, BaseModel | dict], output: str = ""
) -> list[bool]:
    """The per-criterion pass vector of one final state."""
    return [evaluate_criterion(c, states, output) for c in criteria]


def collateral_narrowed(criteria: list[Criterion], services: Collection[str]) -> list[Criterion]:
    """`criteria` with each collateral check (`state_preserved`) narrowed to the fields of
    `services`. Where every other service is in the state of a run known to pass the checks (the
    reference's), the narrowed criteria give the same pass vector without hashing those services'
    records again."""
    return [
        c.model_copy(
            update={"preserved": {k: v for k, v in c.preserved.items() if k.partition(".")[0] in services}}
        )
        if c.kind == "state_preserved"
        else c
        for c in criteria
    ]


def held_at_start(criteria: list[Criterion], initial_states: Mapping[str, BaseModel | dict]) -> list[bool]:
    """Which criteria the initial state already meets, with no reply: what a rollout that does
    nothing passes, which earns no partial credit (`envpipeline.rewards.held_at_start`)."""
    return pass_vector(criteria, initial_states, "")


#: Kinds whose values are codes (`value_mentions.code_key`: 'REF 9251' is REF-9251).
CODE_KINDS: frozenset[ValueKind] = frozenset(
    {
        "code",
        "booking_code",
        "ticket_code",
        "order_number",
        "sku",
        "advisory_code",
        "employee_code",
        "flight_number",
    }
)
#: An e-mail address as a reply (or an argument) may write it.
EMAIL_PATTERN = r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
#: A code as a reply may write it: any case with a hyphen, or upper case with a space.
_CODE = r"\b[A-Za-z][A-Za-z0-9]{1,5}-\d{3,6}\b|(?-i:\b[A-Z][A-Z0-9]{1,5} \d{3,6}\b)"


@functools.cache
def _mention_pattern(kind: ValueKind) -> re.Pattern[str]:
    """Every way a value of `kind` can be written in a reply (built from the value pools)."""

    def alternatives(values: Iterable[str]) -> str:
        return "|".join(re.escape(v) for v in sorted(set(values), key=len, reverse=True))

    patterns: dict[ValueKind, str] = {
        "person": rf"\b(?:{alternatives(value_pools.FIRST_NAMES)})\s+(?:{alternatives(value_pools.LAST_NAMES)})\b",
        "email": EMAIL_PATTERN,
        "city": rf"\b(?:{alternatives(c[0] for c in value_pools.CITIES)})\b",
        "date": r"\b\d{4}-\d{2}-\d{2}\b",
        **{code: _CODE for code in CODE_KINDS if code != "flight_number"},
        "flight_number": r"\b[A-Za-z]{2}\d{3,4}\b|(?-i:\b[A-Z]{2} \d{3,4}\b)",
        "title": rf"\b(?:{alternatives(value_pools.TOPICS)})\s+(?:{alternatives(value_pools.CAPITALIZED_WORDS)})\b",
    }
    return re.compile(patterns[kind], re.IGNORECASE)


@functools.cache
def _surname_first() -> re.Pattern[str]:
    """A pool person written surname first ('Mensah, Umar')."""
    last = "|".join(re.escape(v) for v in sorted(set(value_pools.LAST_NAMES), key=len, reverse=True))
    first = "|".join(re.escape(v) for v in sorted(set(value_pools.FIRST_NAMES), key=len, reverse=True))
    return re.compile(rf"\b(?P<last>{last}),\s*(?P<first>{first})\b", re.IGNORECASE)


def persons_in(text: str) -> set[str]:
    """The pool persons a text names ('first last', normalized), also written surname first
    ('Mensah, Umar') where that is not the tail of a name and the head of the next ('Umar Mensah,
    Noor's colleague')."""
    plain = list(_mention_pattern("person").finditer(text))
    named = {normalize_text(m.group(0)) for m in plain}
    for match in _surname_first().finditer(text):
        if not any(m.start() < match.end() and match.start() < m.end() for m in plain):
            named.add(normalize_text(f"{match.group('first')} {match.group('last')}"))
    return named


def mentions(text: str, kind: ValueKind) -> set[str]:
    """The distinct values of `kind` a text names (normalized)."""
    return {normalize_text(m.group(0)) for m in _mention_pattern(kind).finditer(text)}


def answer_is(reply: str, expected: str, kind: ValueKind | None, max_chars: int | None) -> bool:
    """Whether a reply gives `expected` as its one answer.

    It must be short (`max_chars`), name the value (after normalizing case, spaces and trailing
    punctuation), and name no other value of the same kind: a reply that lists candidates fails.
    A date or a code may be spelled as people write it, and so may every other candidate it names:
    'June 15, 2026' gives 2026-06-15, '2026-06-15 or June 16' names two dates, 'REF 9251' is
    REF-9251 (`value_mentions.dates_in`, `code_key`), and a person may come surname first
    ('Mensah, Umar'; `persons_in`).
    """
    if len(reply) > (max_chars or DEFAULT_ANSWER_CHARS):
        return False
    if kind == "date" and _DAY.fullmatch(expected.strip()):
        named = dates_in(reply)
        return bool(named) and all(
            any(same_date(r, expected.strip()) for r in readings) for readings in named
        )
    if kind in CODE_KINDS and mentions(expected, kind):
        keys = {code_key(m.group(0)) for m in _mention_pattern(kind).finditer(reply)}
        return keys == {code_key(expected)}
    if kind == "person" and mentions(expected, kind):
        return persons_in(reply) == {normalize_text(expected)}
    wanted = normalize_text(expected)
    if not wanted or wanted not in normalize_text(reply):
        return False
    if kind is None:
        return True
    named = mentions(reply, kind)
    if mentions(expected, kind) == {wanted} and wanted not in named:
        return False  # only inside a longer word ("Lima" in "Limassol")
    return named <= {wanted}


def _plain(value: Any) -> Any:
    return value.model_dump(mode="json") if isinstance(value, BaseModel) else value


def state_fields(state: Any) -> dict[str, Any]:
    """A service state's top-level fields (a pydantic state or its JSON dump)."""
    if isinstance(state, BaseModel):
        return dict(state.__dict__)
    return dict(state) if isinstance(state, Mapping) else {}


def record_map(value: Any) -> dict[str, Any]:
    """One state field as records by key: a dict by its keys, a list by position, else one record.

    A nested model (an imported service's simulated store) reads as its JSON dump, a dict by its
    fields, so a live state and its dump give the same records (they once gave one opaque record
    and two, and every task allowed the whole store to change).
    """
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return {str(i): _plain(v) for i, v in enumerate(value)}
    return {"": _plain(value)}


def field_records(field: str, value: Any) -> dict[str, Any]:
    """One state field's records as ``state_preserved`` keys them: `record_map`, except that the
    simulated store gives one record per recorded call (``records/<family>/<n>``) beside ``known``."""
    records = record_map(value)
    calls = records.get("records") if field == SIMULATED_FIELD else None
    if not isinstance(calls, Mapping):
        return records
    del records["records"]
    for family, made in calls.items():
        for n, call in enumerate(made if isinstance(made, list) else []):
            records[f"records/{family}/{n}"] = call
    return records


#: What of an edited record's fields may change (`Criterion.allowed_fields`): field -> None (all
#: of it) or the items of a list or the keys of an object that may change.
FieldAllowance = Mapping[str, list[Any] | None]
#: What a created record's text reads as in its digest: the agent words a title or a description
#: its own way (the write criteria check the asked ones), everything else is pinned.
_TEXT = "<text>"


def _digest(data: Any) -> str:
    payload = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def untouched_digest(
    value: Any,
    allowed: Iterable[str] = (),
    field: str = "",
    fields: Mapping[str, FieldAllowance] | None = None,
) -> str:
    """A short hash of a state field's records outside `allowed` (key order does not matter).

    An allowed record named in `fields` (record key -> its `FieldAllowance`) is hashed too, without
    what may change: editing it elsewhere, or deleting it, changes the digest.
    In the simulated store an allowed ``records`` covers every recorded call (how tasks made before
    the store was kept per call allowed it), so those tasks verify as they did.
    """
    skip = set(allowed)
    records = field_records(field, value)
    kept = {
        k: v
        for k, v in records.items()
        if k not in skip and not (field == SIMULATED_FIELD and k.partition("/")[0] in skip)
    }
    for key, allowance in (fields or {}).items():
        if key in records:
            kept[key] = _pinned_part(records[key], allowance)
    return _digest(kept)


def _pinned_part(record: Any, allowance: FieldAllowance) -> Any:
    """What of an edited record may not change: its fields outside `allowance`, and of a field
    allowed item by item, its other items (a list's other members in order, an object's other keys)."""
    if not isinstance(record, Mapping):
        return record
    pinned: dict[str, Any] = {}
    for name, value in record.items():
        if name not in allowance:
            pinned[name] = value
            continue
        items = allowance[name]
        if items is None:
            continue
        if isinstance(value, list):
            pinned[name] = [item for item in value if _member_key(item) not in items]
        elif isinstance(value, Mapping):
            pinned[name] = {k: v for k, v in value.items() if k not in items}
        else:
            pinned[name] = value  # no longer a list or an object: a change outside the allowance
    return pinned


def created_digest(record: Any, field: str = "", options: Collection[str] = ()) -> str:
    """A short hash of what of a created record is pinned (`created_part`; a simulated tool's
    recorded call, `_call_part`)."""
    part = _call_part(record, options) if field == SIMULATED_FIELD else created_part(record, options)
    return _digest(part)


def created_part(record: Any, options: Collection[str] = ()) -> Any:
    """What of a created record is pinned: every field and key, each flag, number and empty list,
    and a list's members (in any order, text in any case); a text field only as being text, but
    a field named in `options` (a priority, a status) as its value in any case.

    A field left null reads as text too (an optional description an agent may fill, as a
    simulated call's null and text arguments are both left out), except an id (a link nobody
    asked for: an assignee, a parent) and an option. A record that is a plain value (a subscribed
    city) is pinned as a list member is.
    """
    if isinstance(record, Mapping):
        return {
            str(k): _TEXT
            if v is None and k not in options and not is_id_field(str(k))
            else _created_value(v, member=k in options)
            for k, v in record.items()
        }
    return _created_value(record, member=True)


def _call_part(call: Any, options: Collection[str] = ()) -> Any:
    """What of a simulated tool's recorded call is pinned: its tool and its arguments that are
    neither text nor null, or that take an option, as `created_part` pins them (the response is
    the world model's)."""
    if not isinstance(call, Mapping):
        return created_part(call)
    arguments = call.get("arguments")
    given = arguments if isinstance(arguments, Mapping) else {}
    return {
        "tool": call.get("tool"),
        "arguments": {
            k: _created_value(v, member=k in options)
            for k, v in given.items()
            if v is not None and (k in options or not isinstance(v, str))
        },
    }


def _created_value(value: Any, member: bool = False) -> Any:
    if isinstance(value, str):
        return value.strip().casefold() if member else _TEXT
    if isinstance(value, Mapping):
        return {str(k): _created_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        members = [_created_value(v, member=True) for v in value]
        return sorted(members, key=lambda v: json.dumps(v, sort_keys=True, default=str))
    return value


def _differing_keys(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """The keys added, removed or holding another value (records of a field, fields of a record,
    keys of an object), sorted."""
    missing = object()
    return sorted(k for k in old.keys() | new.keys() if old.get(k, missing) != new.get(k, missing))


def state_preserved(
    states: Mapping[str, BaseModel | dict],
    preserved: Mapping[str, str],
    allowed: Mapping[str, list[str]],
    allowed_fields: Mapping[str, Mapping[str, FieldAllowance]] | None = None,
    created: Mapping[str, Mapping[str, str]] | None = None,
    created_options: Mapping[str, Collection[str]] | None = None,
) -> bool:
    """Whether every '<service>.<field>' still hashes to its digest outside the allowed records
    (in a record the task edits, outside the fields it may change; a record it creates, but for
    its text)."""
    for key, digest in preserved.items():
        service, _, field = key.partition(".")
        if service not in states:
            return False
        value = state_fields(states[service]).get(field)
        fields = (allowed_fields or {}).get(key)
        if untouched_digest(value, allowed.get(key, ()), field, fields) != digest:
            return False
        pins = (created or {}).get(key)
        options = (created_options or {}).get(key, ())
        if pins and not _created_as_pinned(field_records(field, value), field, pins, options):
            return False
    return True


def _created_as_pinned(
    records: Mapping[str, Any], field: str, pins: Mapping[str, str], options: Collection[str]
) -> bool:
    """Whether each created record that is there is as one of the pinned ones, each pin taken once
    (one that is not there is the write criteria's to miss: nothing else changed). Which key holds
    which is left open: two records created in the other order swap their ids."""
    found = Counter(created_digest(records[key], field, options) for key in pins if key in records)
    return not found - Counter(pins.values())


class Preservation(NamedTuple):
    """A `state_preserved` criterion's fields (`Criterion`'s names): what makes one change the only
    accepted one."""

    preserved: dict[str, str]
    allowed: dict[str, list[str]]
    allowed_fields: dict[str, dict[str, dict[str, list[Any] | None]]]
    created: dict[str, dict[str, str]]
    created_options: dict[str, list[str]]


def preservation_of(
    before: Mapping[str, BaseModel | dict],
    after: Mapping[str, BaseModel | dict],
    options: Mapping[str, Collection[str]] | None = None,
) -> Preservation:
    """The digests, allowed record keys, allowed fields and created records that make `after` the
    only accepted change of `before`.

    Every field of every service is covered; the allowed keys are the records that differ. A
    record that exists before and after as a record with fields (an edit) may change only where it
    differs (`_edits`); a record added is pinned but for its text (`created_part`; a simulated
    tool's recorded call, by its tool and non-text arguments), and for the fields (arguments) of
    its service that `options` names (service -> names: a priority, a status) held as values; a
    record removed is allowed whole.
    """
    made = Preservation({}, {}, {}, {}, {})
    for service in sorted(after):
        old_fields = state_fields(before.get(service, {}))
        for field, value in sorted(state_fields(after[service]).items()):
            key = f"{service}.{field}"
            old, new = field_records(field, old_fields.get(field)), field_records(field, value)
            changed = _differing_keys(old, new)
            simulated = field == SIMULATED_FIELD
            edited = {
                record: _edits(old[record], new[record])
                for record in changed
                if not simulated
                and isinstance(old.get(record), Mapping)
                and isinstance(new.get(record), Mapping)
            }
            created = [r for r in changed if r not in old and r in new]
            if changed:
                made.allowed[key] = changed
            if edited:
                made.allowed_fields[key] = edited
            if created:
                held = sorted(
                    _option_fields([new[r] for r in created], field, (options or {}).get(service, ()))
                )
                made.created[key] = {record: created_digest(new[record], field, held) for record in created}
                if held:
                    made.created_options[key] = held
            made.preserved[key] = untouched_digest(value, changed, field, edited)
    return made


def _option_fields(records: list[Any], field: str, options: Collection[str]) -> set[str]:
    """The fields of created records (a simulated call's arguments) that `options` names."""
    names: set[str] = set()
    for record in records:
        fields = (
            record.get("arguments") if field == SIMULATED_FIELD and isinstance(record, Mapping) else record
        )
        if isinstance(fields, Mapping):
            names.update(k for k in fields if k in options)
    return names


_SCALARS = (str, int, float, bool, type(None))
#: What a list allowed item by item holds: plain values or objects.
_MEMBERS = (*_SCALARS, Mapping)


def _member_key(member: Any) -> Any:
    """How a list member is named in an allowance: a plain value as itself, an object (a list's
    column, a reaction) as its canonical JSON text."""
    if isinstance(member, _SCALARS):
        return member
    return json.dumps(member, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _edits(first: Mapping[str, Any], last: Mapping[str, Any]) -> dict[str, list[Any] | None]:
    """Where one record differs: field -> the items that differ, for a list whose members changed
    (values or objects added or removed: an attendee invited, a tag added, a column added; an
    object named by `_member_key`) and for an object (the keys whose values differ: one column of
    a list item set); None for any other field."""
    edits: dict[str, list[Any] | None] = {}
    for name in _differing_keys(first, last):
        old, new = first.get(name), last.get(name)
        edits[name] = None
        if (
            isinstance(old, list)
            and isinstance(new, list)
            and all(isinstance(v, _MEMBERS) for v in old + new)
        ):
            before, after = [_member_key(v) for v in old], [_member_key(v) for v in new]
            items = [v for v in dict.fromkeys(before + after) if before.count(v) != after.count(v)]
            edits[name] = _sorted_items(items) if items else None  # a reorder alone: the whole list
        elif isinstance(old, Mapping) and isinstance(new, Mapping):
            edits[name] = _differing_keys(old, new)
    return edits


def _sorted_items(items: list[Any]) -> list[Any]:
    """Items in a stable order (by type name, then value), so the criterion is deterministic."""
    return sorted(items, key=lambda v: (type(v).__name__, str(v)))
