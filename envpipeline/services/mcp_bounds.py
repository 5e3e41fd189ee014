"""Limits an imported MCP schema must respect before it becomes a service: depth, enums, sizes.

A ``tools/list`` payload comes from a server we do not control. Its schemas are walked
recursively (pydantic models, sampled values, world-model answers), sized by their own keywords
(``minLength`` decides how long a sampled string is) and hashed (``enum`` values become a
``Literal``). `check_schema_bounds` refuses, as a `SpecError` naming the tool and the property,
what would otherwise end in a RecursionError, a MemoryError or a TypeError later:

- nesting deeper than `MAX_SCHEMA_DEPTH` (``properties``/``items``/combinators all count);
- an ``enum`` that is not a non-empty list of at most `MAX_ENUM_VALUES` JSON scalars;
- a size keyword that is not a non-negative integer or exceeds its maximum (`SIZE_LIMITS`),
  and a minimum above its maximum;
- a numeric bound that is not a finite number.
"""

from __future__ import annotations

import math
from typing import Any

from envpipeline.errors import SpecError

#: Deepest nesting accepted; real MCP tool schemas stay within a handful of levels.
MAX_SCHEMA_DEPTH = 32
#: Most values one enum may list.
MAX_ENUM_VALUES = 1000
#: Size keyword -> the largest value accepted (a sampled value is at least this big).
SIZE_LIMITS: dict[str, int] = {
    "minLength": 65_536,
    "maxLength": 10**9,
    "minItems": 1_000,
    "maxItems": 10**9,
    "minProperties": 1_000,
    "maxProperties": 10**9,
}
#: Pairs whose minimum may not exceed the maximum.
SIZE_PAIRS = (("minLength", "maxLength"), ("minItems", "maxItems"), ("minProperties", "maxProperties"))
NUMERIC_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
#: Keywords holding one sub-schema, a name -> sub-schema map, or a list of sub-schemas.
SINGLE_CHILDREN = ("items", "additionalProperties", "not", "contains", "propertyNames")
MAPPED_CHILDREN = ("properties", "patternProperties", "$defs", "definitions")
LISTED_CHILDREN = ("anyOf", "oneOf", "allOf", "prefixItems")


def is_json_scalar(value: Any) -> bool:
    """Whether `value` is a JSON string, number, boolean or null (a finite number only)."""
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, (str, int, bool))


def _is_size(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _check_keywords(where: str, schema: dict[str, Any]) -> None:
    """The enum, size and numeric keywords of one schema node (not its children)."""
    if "enum" in schema:
        values = schema["enum"]
        if not isinstance(values, list) or not values:
            raise SpecError(f"{where} has an empty or invalid enum")
        if len(values) > MAX_ENUM_VALUES:
            raise SpecError(f"{where} has an enum of {len(values)} values (at most {MAX_ENUM_VALUES})")
        odd = next((v for v in values if not is_json_scalar(v)), None)
        if odd is not None:
            raise SpecError(
                f"{where} has an enum value that is not a string, number, boolean or null: "
                f"{type(odd).__name__} (only scalar enums are supported)"
            )
    for keyword, limit in SIZE_LIMITS.items():
        if keyword not in schema:
            continue
        value = schema[keyword]
        if not _is_size(value):
            raise SpecError(f"{where}: {keyword} must be a non-negative integer, not {value!r}")
        if value > limit:
            raise SpecError(f"{where}: {keyword} {value} is above the supported {limit}")
    for low, high in SIZE_PAIRS:
        if low in schema and high in schema and schema[low] > schema[high]:
            raise SpecError(f"{where}: {low} {schema[low]} is above {high} {schema[high]}")
    for keyword in NUMERIC_BOUNDS:
        value = schema.get(keyword)
        if keyword in schema and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise SpecError(f"{where}: {keyword} must be a number, not {value!r}")
        if isinstance(value, float) and not math.isfinite(value):
            raise SpecError(f"{where}: {keyword} must be finite, not {value!r}")


def _children(path: str, schema: dict[str, Any]) -> list[tuple[str, Any]]:
    """(path, sub-schema) of every schema nested directly in `schema`."""
    found: list[tuple[str, Any]] = []
    for keyword in SINGLE_CHILDREN:
        child = schema.get(keyword)
        if isinstance(child, dict):
            found.append((f"{path}[]" if keyword == "items" else f"{path}.<{keyword}>", child))
    for keyword in MAPPED_CHILDREN:
        mapping = schema.get(keyword)
        if isinstance(mapping, dict):
            found += [(f"{path}.{key}", sub) for key, sub in mapping.items()]
    for keyword in LISTED_CHILDREN:
        options = schema.get(keyword)
        if isinstance(options, list):
            found += [(f"{path}.<{keyword}:{n}>", sub) for n, sub in enumerate(options)]
    return found


def check_schema_bounds(tool: str, label: str, schema: Any) -> None:
    """Refuse a schema (an input or output schema of `tool`) beyond the limits above.

    Walks with an explicit stack, so a schema of any depth is refused without recursion.

    Raises:
        SpecError: naming the tool and the offending property path.
    """
    stack: list[tuple[str, Any, int]] = [(label, schema, 0)]
    while stack:
        path, node, depth = stack.pop()
        if not isinstance(node, dict):
            continue
        where = f"tool '{tool}': {path}"
        if depth > MAX_SCHEMA_DEPTH:
            raise SpecError(f"{where} is nested more than {MAX_SCHEMA_DEPTH} levels deep")
        _check_keywords(where, node)
        stack += [(child_path, child, depth + 1) for child_path, child in _children(path, node)]
