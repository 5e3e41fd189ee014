"""The one canonical serialization and hash of JSON-like values (states, rows, task payloads).

Keys are sorted, non-string keys are stringified, unknown objects go through `str`. Every replay
gate and every lineage fingerprint hashes through `canonical_hash`, so two values that compare
equal as data always hash equal, whatever their key order.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


def canonical_bytes(payload: Any) -> bytes:
    """The canonical JSON bytes of `payload` (sorted keys, compact, UTF-8)."""
    return orjson.dumps(payload, default=str, option=_OPTIONS)


def canonical_hash(payload: Any) -> str:
    """sha256 hex of the canonical JSON of `payload`."""
    return hashlib.sha256(canonical_bytes(payload)).hexdigest()
