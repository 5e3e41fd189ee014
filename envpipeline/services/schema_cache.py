"""One process-wide cache of tool schemas and tool listings, handed out as fresh copies.

Building a tool's OpenAI-style function schema runs pydantic's ``model_json_schema`` on its
arguments model (about 0.5 ms); the meta-tools (``describe_tool``, ``list_tools``), the exported
``envtool``, the trainers' episodes (all through `MetaToolbox`), the MCP server and the service
contract ask for the same schemas again and again. `tool_schema` builds each one once, and
`tool_schema_text` / `tool_listing_text` keep an answer's serialized text (a str, immutable).

Keys and invalidation:

- a schema is keyed on the tool definition (`ToolDef` is frozen and compares by value: name,
  description, arguments model, implementation, writes, simulated) and the namespace it is shown
  under, so a service whose tool is replaced or redefined gets a new entry; the entry also keeps
  the arguments model's validator, which pydantic replaces when the model is rebuilt
  (``model_rebuild``), and is rebuilt when that changed;
- a listing (`tool_listing`) is keyed on the namespace and the service class, and kept with the exact
  ``(name, ToolDef)`` pairs it was built from: a tool added, removed or replaced in the service's
  ``tools`` rebuilds it.

Every answer is a fresh copy (parsed from the cached JSON, or deep-copied where JSON would not
give back an equal value), so a caller that edits what it got never changes a later answer.
Only pydantic is used (this module is vendored into task exports, which ship no orjson).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel
from pydantic_core import from_json, to_json


class ToolDef(Protocol):
    """What the cache needs of `envpipeline.services.base.ToolDef` (which imports this module)."""

    @property
    def description(self) -> str: ...

    @property
    def args_model(self) -> type[BaseModel]: ...

    def build_json_schema(self, namespace: str) -> dict[str, Any]: ...

    def __hash__(self) -> int: ...


@dataclass(frozen=True)
class _Frozen:
    """One cached JSON value: its JSON bytes when they parse back equal, else the value itself."""

    blob: bytes | None
    value: Any

    @classmethod
    def of(cls, value: Any) -> _Frozen:
        try:
            blob = to_json(value)
        except ValueError:  # pydantic_core's error for what JSON cannot carry
            return cls(None, copy.deepcopy(value))
        if from_json(blob) == value and to_json(from_json(blob)) == blob:
            return cls(blob, None)
        return cls(None, copy.deepcopy(value))  # e.g. NaN, or a tuple JSON would turn into a list

    def copy(self) -> Any:
        """A fresh, equal copy of the cached value."""
        return from_json(self.blob) if self.blob is not None else copy.deepcopy(self.value)


@dataclass(frozen=True)
class _Entry:
    """A cached value, what it was built from (`source`) and its renderings by render function."""

    source: object
    value: _Frozen
    renderings: dict[Callable[[Any], str], str]

    def render(self, render: Callable[[Any], str]) -> str:
        text = self.renderings.get(render)
        if text is None:
            text = self.renderings[render] = render(self.value.copy())
        return text


_schemas: dict[tuple[ToolDef, str], _Entry] = {}
_listings: dict[tuple[str, type], _Entry] = {}


def _schema_entry(tool_def: ToolDef, namespace: str) -> _Entry:
    key = (tool_def, namespace)
    entry = _schemas.get(key)
    if entry is None or entry.source is not tool_def.args_model.__dict__.get("__pydantic_validator__"):
        schema = tool_def.build_json_schema(namespace)
        # read after building: building completes a deferred model (its mock validator is replaced)
        validator = tool_def.args_model.__dict__.get("__pydantic_validator__")
        entry = _schemas[key] = _Entry(validator, _Frozen.of(schema), {})
    return entry


def tool_schema(tool_def: ToolDef, namespace: str) -> dict[str, Any]:
    """`ToolDef.build_json_schema`, built once per tool definition and namespace (a fresh copy)."""
    return _schema_entry(tool_def, namespace).value.copy()


def tool_schema_text(tool_def: ToolDef, namespace: str, render: Callable[[dict[str, Any]], str]) -> str:
    """``render(schema)``, rendered once per cached schema (`render`: a module-level function)."""
    return _schema_entry(tool_def, namespace).render(render)


def build_tool_listing(namespace: str, tools: Mapping[str, ToolDef]) -> list[dict[str, Any]]:
    """``list_tools``' answer data built afresh: each tool's namespaced name and description."""
    return [{"name": f"{namespace}.{name}", "description": t.description} for name, t in tools.items()]


def _listing_entry(namespace: str, service: Any) -> _Entry:
    key = (namespace, service if isinstance(service, type) else type(service))
    tools: Mapping[str, ToolDef] = service.tools
    current = tuple(tools.items())
    entry = _listings.get(key)
    if entry is None or entry.source != current:
        entry = _listings[key] = _Entry(current, _Frozen.of(build_tool_listing(namespace, tools)), {})
    return entry


def tool_listing(namespace: str, service: Any) -> list[dict[str, Any]]:
    """`build_tool_listing` of a service (class or instance), rebuilt when its tools changed (a copy)."""
    return _listing_entry(namespace, service).value.copy()


def tool_listing_text(namespace: str, service: Any, render: Callable[[list[dict[str, Any]]], str]) -> str:
    """``render(listing)``, rendered once per cached listing (`render`: a module-level function)."""
    return _listing_entry(namespace, service).render(render)


def clear() -> None:
    """Forget every cached schema and listing (the next answers are built afresh)."""
    _schemas.clear()
    _listings.clear()
