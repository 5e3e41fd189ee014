"""Tool schemas flat enough for verl, and tool schemas inferred from recorded trajectories.

verl's tool schema model (``OpenAIFunctionPropertySchema``) keeps only ``type``, ``description``
and ``enum`` per property: nested ``items``, ``properties``, ``$ref``, ``anyOf`` ... are silently
dropped. `flatten_schema` makes that loss explicit and lossless for a reader:

* every property keeps ``type`` (a list type such as ``["string", "null"]`` becomes its first
  non-null member; a missing type becomes ``"string"``), ``description`` and ``enum``;
* whatever verl would drop (nested ``items``/``properties``/``$ref``/``anyOf``/``required``/...) is
  collapsed into the description as compact JSON (``... Schema: {...}``), so a model still sees it;
* with ``nested_as_string=True`` an object/array property also becomes ``"type": "string"`` with
  "(a JSON-encoded object/array)" in its description, for trainers that cannot pass nested values;
* the parameters object keeps only ``type``, ``properties`` and ``required``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

KEPT_PROPERTY_KEYS = ("type", "description", "enum")
JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", dict: "object", list: "array"}


def _flat_type(schema: dict[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if not isinstance(kind, str):
        return "string"
    return kind


def flatten_property(schema: dict[str, Any], nested_as_string: bool = False) -> dict[str, Any]:
    """One property reduced to ``type``/``description``/``enum``, the rest folded into the description."""
    kind = _flat_type(schema)
    description = str(schema.get("description", "")).strip()
    dropped = {k: v for k, v in schema.items() if k not in KEPT_PROPERTY_KEYS and k != "title"}
    if isinstance(schema.get("type"), list) or "type" not in schema:
        dropped["type"] = schema.get("type", "any")
    if nested_as_string and kind in ("object", "array"):
        description = f"{description} (a JSON-encoded {kind})".strip()
        kind = "string"
    if dropped:
        encoded = json.dumps(dropped, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        description = f"{description} Schema: {encoded}".strip()
    flat: dict[str, Any] = {"type": kind, "description": description}
    if isinstance(schema.get("enum"), list):
        flat["enum"] = list(schema["enum"])
    return flat


def flatten_schema(tool: dict[str, Any], nested_as_string: bool = False) -> dict[str, Any]:
    """An OpenAI function tool schema made flat enough for verl (see the module docstring).

    Args:
        tool: ``{"type": "function", "function": {"name", "description", "parameters"}}`` or the bare
            function object.
        nested_as_string: also turn object/array properties into JSON-string properties.

    Returns:
        ``{"type": "function", "function": {"name", "description", "parameters": {"type": "object",
        "properties": {...flat...}, "required": [...]}}}``.
    """
    function = tool.get("function", tool)
    parameters = function.get("parameters") or {}
    properties = parameters.get("properties") or {}
    flat_properties = {
        name: flatten_property(prop if isinstance(prop, dict) else {}, nested_as_string)
        for name, prop in properties.items()
    }
    required = [name for name in parameters.get("required", []) if name in flat_properties]
    return {
        "type": "function",
        "function": {
            "name": str(function["name"]),
            "description": str(function.get("description", "")),
            "parameters": {"type": "object", "properties": flat_properties, "required": required},
        },
    }


def schemas_from_messages(messages: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Flat tool schemas for every function an OpenAI-format trajectory calls, sorted by name.

    Property types are inferred from the recorded argument values (a name seen with two types
    becomes ``string``); a property is required when every call passed it.
    """
    seen: dict[str, list[dict[str, Any]]] = {}
    for message in messages:
        for call in message.get("tool_calls") or []:
            function = call["function"]
            arguments = function.get("arguments") or {}
            if isinstance(arguments, str):
                arguments = json.loads(arguments) if arguments.strip() else {}
            seen.setdefault(function["name"], []).append(arguments)
    return [_inferred_schema(name, calls) for name, calls in sorted(seen.items())]


def _inferred_schema(name: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
    types: dict[str, set[str]] = {}
    for arguments in calls:
        for key, value in arguments.items():
            types.setdefault(key, set()).add(JSON_TYPES.get(type(value), "string"))
    properties = {
        key: {
            "type": next(iter(kinds)) if len(kinds) == 1 else "string",
            "description": f"the {key} argument",
        }
        for key, kinds in sorted(types.items())
    }
    required = sorted(k for k in properties if all(k in arguments for arguments in calls))
    return flatten_schema(
        {
            "name": name,
            "description": f"recorded tool {name}",
            "parameters": {"type": "object", "properties": properties, "required": required},
        }
    )
