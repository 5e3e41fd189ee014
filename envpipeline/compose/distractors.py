"""Confusable distractors: near-twins of the records a task needs, so a first plausible match fails.

After a hop or an action plants the record the agent must find by a known value (the *key*), a
twin of that record is planted beside it, listed first in its collection: every field is the same
except the key (every field holding it, as a one-day leave's start and end), which gets a
near-miss value (same first name and another surname, same day in another month, same prefix and
other digits, same topic and another word...), and, for a hop, the value it reveals, which gets
another value of its type. Only the key tells the twins apart, so a policy that takes the first
record that looks right, or guesses, reads or changes the wrong one.

The twin is generic: it works on any state whose collections are dicts of records with an ``id``.
Soundness is kept by the composer's gates (a twin that makes a lookup ambiguous fails
``unique_hops``; the reference must still pass).
"""

from __future__ import annotations

import random
import re
from typing import Any

from pydantic import BaseModel

from envpipeline.services import vocab

_CODE = re.compile(r"^(?P<prefix>[A-Za-z]+-?)(?P<digits>\d+)$")


def near_miss(value: str, value_type: str, rng: random.Random) -> str:
    """A value of `value_type` that shares most of `value` but is not it (never equal, any case)."""
    for _ in range(50):
        candidate = _draw_near(value, value_type, rng)
        if candidate.lower() != value.lower():
            return candidate
    raise ValueError(f"no near miss of {value_type} '{value}'")


def _draw_near(value: str, value_type: str, rng: random.Random) -> str:
    if value_type == "person" and " " in value:
        return f"{value.split(' ', 1)[0]} {rng.choice(vocab.LAST_NAMES)}"
    if value_type == "email" and "@" in value:
        return f"{value.split('@', 1)[0]}@{rng.choice(vocab.DOMAINS)}"
    if value_type == "date" and len(value) == 10 and value[5:7].isdigit():
        # a later month (an earlier one when there is none): a twin's date range never covers the key
        month = int(value[5:7])
        other = rng.randint(month + 1, 12) if month < 12 else rng.randint(1, 11)
        return f"{value[:5]}{other:02d}{value[7:]}"
    match = _CODE.match(value)
    if match:
        width = len(match["digits"])
        return f"{match['prefix']}{rng.randint(10 ** (width - 1), 10**width - 1)}"
    if value_type == "title" and " " in value:
        return f"{value.rsplit(' ', 1)[0]} {rng.choice(vocab.WORDS).capitalize()}"
    return vocab.sample_value(value_type, rng) if value_type in _SAMPLED else f"{value} 2"


_SAMPLED = frozenset({"person", "email", "city", "date", "code", "title"})


def _collections(state: BaseModel) -> list[dict[str, Any]]:
    return [
        v
        for v in state.__dict__.values()
        if isinstance(v, dict) and v and all(isinstance(r, BaseModel) for r in v.values())
    ]


def _scalar_fields(record: BaseModel) -> dict[str, str]:
    return {k: v for k, v in record.__dict__.items() if isinstance(v, str)}


def _first_id(rid: str | int, collection: dict[Any, Any]) -> str | int:
    """A free id of the same shape that sorts before the others (``flt_03`` before ``flt_1``; in an
    integer-id collection, one below the smallest).

    Environments list records in key order (`canonical_order`), so the twin comes first.
    """
    if isinstance(rid, int):
        return min(collection) - 1
    prefix = rid.rsplit("_", 1)[0] if "_" in rid else rid
    n = 1
    while f"{prefix}_0{n}" in collection:
        n += 1
    return f"{prefix}_0{n}"


def plant_twin(
    state: BaseModel,
    key: str,
    key_type: str,
    rng: random.Random,
    output: str | None = None,
    output_type: str | None = None,
) -> dict[str, str] | None:
    """Plant a near-twin of the one record holding `key` (and `output`, if given); None if none fits.

    Returns what differs: field -> the twin's value (the key field, and the output field for a hop).
    """
    for collection in _collections(state):
        hits = []
        for rid, record in collection.items():
            fields = _scalar_fields(record)
            # every field holding the key (a one-day leave's start and end date)
            key_fields = [f for f, v in fields.items() if v.lower() == key.lower() and f != "id"]
            out_field = None
            if output is not None and key_fields:
                out_field = next(
                    (f for f, v in fields.items() if v == output and f not in ("id", key_fields[0])), None
                )
            if key_fields and (output is None or out_field):
                hits.append((rid, record, key_fields, out_field))
        if len(hits) != 1:
            continue
        rid, record, key_fields, out_field = hits[0]
        if "id" not in record.__dict__:
            return None
        taken = {
            str(v).lower() for r in collection.values() for v in r.__dict__.values() if isinstance(v, str)
        }
        # the key's fields move together: a twin that moved only one would be malformed (a leave
        # that ends before it starts) or still cover the key
        changes = dict.fromkeys(key_fields, near_miss(key, key_type, rng))
        if out_field and output is not None and output_type is not None:
            changes[out_field] = near_miss(output, output_type, rng)
        if any(v.lower() in taken for v in changes.values()):
            return None
        new_id = _first_id(rid, collection)
        twin = record.model_copy(update={**changes, "id": new_id}, deep=True)
        reordered = {new_id: twin, **collection}
        collection.clear()
        collection.update(reordered)
        return changes
    return None
