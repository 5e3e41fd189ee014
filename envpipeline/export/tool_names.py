"""Tool names every trainer and provider accepts: ``^[a-zA-Z0-9_-]{1,64}$`` (OpenAI, Anthropic).

Our names carry dots (``calendar.update_event``, ``cli.exec``) and world HTTP routes carry spaces and
slashes (``web.GET /mail``). `safe_tool_name` maps a name to a valid one deterministically and
readably: a valid name stays as it is; a dotted name whose parts are plain words becomes
``calendar__update_event`` (a dot becomes two underscores); anything else (spaces, slashes, a
double underscore already in the name, a name over 64 characters) becomes its sanitised form
plus ``-`` and six hex digits of the name's SHA-256, so two different names never collide.

The mapping is reversible: `original_tool_name` undoes the readable form, and `ToolNameMap` keeps
the table (safe -> original) that an export stores next to its rows for the hashed forms.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

VALID_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_WORD = re.compile(r"^[a-zA-Z0-9-]+(?:_[a-zA-Z0-9-]+)*$")  # no double or edge underscores
_INVALID = re.compile(r"[^a-zA-Z0-9_-]+")
_HASHED = re.compile(r"-[0-9a-f]{6}$")
_MAX = 64
_DOT = "__"


def _digest(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()[:6]


def safe_tool_name(name: str) -> str:
    """A name matching ``^[a-zA-Z0-9_-]{1,64}$`` that no other name maps to."""
    if not name:
        raise ValueError("a tool name cannot be empty")
    if VALID_TOOL_NAME.match(name) and _DOT not in name:
        return name
    parts = name.split(".")
    if all(_WORD.match(part) for part in parts):
        readable = _DOT.join(parts)
        if len(readable) <= _MAX:
            return readable
    stem = _INVALID.sub("_", name).strip("_") or "tool"
    return f"{stem[: _MAX - 7]}-{_digest(name)}"


def original_tool_name(safe: str) -> str | None:
    """The original of a readable safe name (``a__b`` -> ``a.b``); None for a hashed form."""
    if _HASHED.search(safe):
        return None
    return safe.replace(_DOT, ".")


class ToolNameMap:
    """Safe <-> original names of one tool set; `table` is what an export stores with its rows."""

    def __init__(self, names: Iterable[str]) -> None:
        self.table: dict[str, str] = {}
        for name in names:
            safe = safe_tool_name(name)
            known = self.table.get(safe)
            if known is not None and known != name:  # pragma: no cover - needs a SHA-256 prefix clash
                raise ValueError(f"tool names {known!r} and {name!r} map to the same safe name {safe!r}")
            self.table[safe] = name
        self._back = {original: safe for safe, original in self.table.items()}

    def safe(self, name: str) -> str:
        """The safe name of `name` (computed when `name` was not in the set)."""
        return self._back.get(name) or safe_tool_name(name)

    def original(self, safe: str) -> str:
        """The original name of a safe one; KeyError when it is neither in the table nor readable."""
        if safe in self.table:
            return self.table[safe]
        if safe in self._back:  # already an original name
            return safe
        found = original_tool_name(safe)
        if found is None:
            raise KeyError(f"unknown tool name {safe!r}")
        return found
