"""Real JSON Schema from MCP servers, normalized into the small subset the importer builds on.

MCP ``tools/list`` schemas are written by hand or generated (zod, pydantic, Go structs), so they
use the whole of JSON Schema: ``anyOf``/``oneOf`` (the ``{"anyOf": [X, {"type": "null"}]}``
optional-argument idiom of pydantic), ``allOf``, ``$ref`` into ``$defs``/``definitions``, type
unions (``"type": ["string", "null"]``), ``const``, untyped ``{}`` properties and
``additionalProperties``. `normalize_schema` rewrites one tool schema into these node forms only:

- ``{"type": T, ...}`` with T one of `SUPPORTED_TYPES` or ``"null"``;
- ``{"type": [T, "null"], ...}``: a nullable T;
- ``{"anyOf": [node, node, ...]}``: a union of at least two non-null nodes (plus, when nullable,
  a last ``{"type": "null"}``);
- ``{"enum": [...]}`` / ``{"const": x}`` (with or without a type);
- ``{}`` (plus a description): any JSON value.

``$ref``s are inlined (local ``#/...`` pointers only; keywords beside a ``$ref`` override the
target's), ``oneOf`` becomes ``anyOf`` (exclusivity is not checked), ``allOf`` parts are merged,
constraint-only options (``{"required": [...]}``) are dropped, draft-4 boolean
``exclusiveMinimum``/``exclusiveMaximum`` become numbers. Everything that cannot be normalized
is a `SpecError` naming the tool and the schema path, e.g. ``tool 'create_issue':
inputSchema.properties.labels.items: $ref '#/$defs/X' does not resolve``. A recursive ``$ref``
(a tree of comments) is refused with the cycle spelled out, and the inlined schema may hold at
most `MAX_NODES` nodes (``$ref`` diamonds can grow exponentially).
"""

from __future__ import annotations

import json
from typing import Any

from envpipeline.errors import SpecError

SUPPORTED_TYPES = frozenset({"string", "integer", "number", "boolean", "array", "object"})
NULL = "null"
#: Most schema nodes one tool schema may expand to once its ``$ref``s are inlined.
MAX_NODES = 20_000
#: Keywords copied unchanged onto a normalized node.
KEPT = (
    "description",
    "default",
    "format",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
    "enum",
    "const",
)
#: Keywords that make an ``anyOf``/``oneOf`` option describe a value (not just add a constraint).
SHAPING = frozenset({"type", "properties", "items", "enum", "const", "$ref", "anyOf", "oneOf", "allOf"})


def is_null(node: dict[str, Any]) -> bool:
    """Whether a normalized node accepts only null."""
    return (
        node.get("type") == NULL
        or (node.get("enum") == [None])
        or ("const" in node and node["const"] is None)
    )


def nullable(node: dict[str, Any]) -> dict[str, Any]:
    """A copy of a normalized node that also accepts null."""
    node = dict(node)
    kind = node.get("type")
    if "anyOf" in node:
        if not any(is_null(o) for o in node["anyOf"]):
            node["anyOf"] = [*node["anyOf"], {"type": NULL}]
    elif "enum" in node:
        if None not in node["enum"]:
            node["enum"] = [*node["enum"], None]
        if isinstance(kind, str) and kind != NULL:
            node["type"] = [kind, NULL]
    elif "const" in node:
        const = node.pop("const")
        return {"anyOf": [{"const": const}, {"type": NULL}], **_notes(node)}
    elif isinstance(kind, str) and kind != NULL:
        node["type"] = [kind, NULL]
    return node


def _notes(node: dict[str, Any]) -> dict[str, Any]:
    return {k: node[k] for k in ("description", "default") if k in node}


class _Normalizer:
    """Normalizes one schema (and its ``$ref`` targets) of one tool; counts nodes."""

    def __init__(self, tool: str, root: dict[str, Any]) -> None:
        self.tool = tool
        self.root = root
        self.nodes = 0

    def fail(self, path: str, problem: str) -> SpecError:
        return SpecError(f"tool '{self.tool}': {path}: {problem}")

    def resolve(self, ref: str, path: str) -> Any:
        if not ref.startswith("#"):
            raise self.fail(path, f"$ref '{ref}' is not local (only '#/...' references are supported)")
        node: Any = self.root
        for raw in [p for p in ref[1:].split("/") if p]:
            part = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise self.fail(path, f"$ref '{ref}' does not resolve")
        return node

    def node(self, schema: Any, path: str, refs: tuple[str, ...] = ()) -> dict[str, Any]:
        """The normalized form of `schema` found at `path` (`refs`: the ``$ref``s being inlined)."""
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise self.fail(path, f"the schema expands to more than {MAX_NODES} nodes once $refs are inlined")
        if schema is True:
            return {}
        if not isinstance(schema, dict):
            raise self.fail(path, "must be a JSON schema object")
        if "$ref" in schema:
            ref = schema["$ref"]
            if not isinstance(ref, str):
                raise self.fail(path, f"$ref must be a string, not {json.dumps(ref)}")
            if ref in refs:
                cycle = " -> ".join((*refs[refs.index(ref) :], ref))
                raise self.fail(
                    path, f"$ref '{ref}' is recursive ({cycle}); recursive schemas are not supported"
                )
            target = self.resolve(ref, path)
            if target is True:
                target = {}
            if not isinstance(target, dict):
                raise self.fail(path, f"$ref '{ref}' does not point at a schema object")
            merged = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
            if "$ref" in target and "$ref" not in schema:
                merged["$ref"] = target["$ref"]
            return self.node(merged, path, (*refs, ref))
        return self._plain(schema, path, refs)

    def _plain(self, schema: dict[str, Any], path: str, refs: tuple[str, ...]) -> dict[str, Any]:
        base = {k: schema[k] for k in KEPT if k in schema}
        _draft4_bounds(base)
        if "allOf" in schema:
            parts = self._options(schema, "allOf", path, refs)
            rest = {k: v for k, v in schema.items() if k != "allOf"}
            return (
                self._merge([self._plain(rest, path, refs), *parts], path)
                if rest
                else self._merge(parts, path)
            )
        for key in ("anyOf", "oneOf"):
            if key in schema:
                options = self._options(schema, key, path, refs)
                rest = {k: v for k, v in schema.items() if k not in ("anyOf", "oneOf")}
                return self._union(options, rest, path, refs)
        kind = schema.get("type")
        if isinstance(kind, list):
            return self._type_list(schema, kind, path, refs)
        if kind is None:
            if "properties" in schema or "additionalProperties" in schema:
                kind = "object"
            elif "items" in schema:
                kind = "array"
            else:
                return base
        if kind == NULL:
            return {**base, "type": NULL}
        if kind not in SUPPORTED_TYPES:
            raise self.fail(path, f"unsupported type {json.dumps(kind)}")
        node = {**base, "type": kind}
        if kind == "object":
            node.update(self._object(schema, path, refs))
        elif kind == "array":
            items = schema.get("items", {})
            if isinstance(items, list):  # draft-4 tuple form: any of the listed item schemas
                items = {"anyOf": items} if items else {}
            node["items"] = self.node(items, f"{path}.items", refs)
        return node

    def _object(self, schema: dict[str, Any], path: str, refs: tuple[str, ...]) -> dict[str, Any]:
        props = schema.get("properties", {})
        if not isinstance(props, dict):
            raise self.fail(path, "properties must be an object")
        out: dict[str, Any] = {}
        if props:
            out["properties"] = {
                key: self.node(sub, f"{path}.properties.{key}", refs) for key, sub in props.items()
            }
        required = schema.get("required", [])
        if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
            raise self.fail(path, f"required must be a list of property names, not {json.dumps(required)}")
        ghosts = [r for r in required if r not in props]
        if ghosts:
            raise self.fail(path, f"required names unknown properties: {ghosts}")
        if required:
            out["required"] = list(dict.fromkeys(required))
        extra = schema.get("additionalProperties")
        if isinstance(extra, bool):
            out["additionalProperties"] = extra
        elif extra is not None:
            out["additionalProperties"] = self.node(extra, f"{path}.additionalProperties", refs)
        return out

    def _options(
        self, schema: dict[str, Any], key: str, path: str, refs: tuple[str, ...]
    ) -> list[dict[str, Any]]:
        options = schema[key]
        if not isinstance(options, list) or not options:
            raise self.fail(path, f"{key} must be a non-empty list of schemas")
        kept = []
        for index, option in enumerate(options):
            if isinstance(option, dict) and option and not (set(option) & SHAPING):
                continue  # a constraint-only option ({"required": [...]}) shapes no value
            kept.append(self.node(option, f"{path}.{key}[{index}]", refs))
        return kept

    def _union(
        self, options: list[dict[str, Any]], rest: dict[str, Any], path: str, refs: tuple[str, ...]
    ) -> dict[str, Any]:
        outer = self._plain(rest, path, refs) if set(rest) & SHAPING else {}
        notes = {k: rest[k] for k in ("description", "default") if k in rest}
        if not options:
            return {**outer, **notes}
        if any(o == {} for o in options):
            return {**notes}
        has_null = any(is_null(o) for o in options)
        values: list[dict[str, Any]] = []
        for option in options:
            if is_null(option):
                continue
            if outer.get("type") and "type" not in option and "anyOf" not in option:
                option = {**outer, **option}
            if option not in values:
                values.append(option)
        if not values:
            result: dict[str, Any] = {"type": NULL}
        elif len(values) == 1:
            result = {**values[0], **notes}
        else:
            result = {"anyOf": values, **notes}
        return nullable(result) if has_null else result

    def _type_list(
        self, schema: dict[str, Any], kinds: list[Any], path: str, refs: tuple[str, ...]
    ) -> dict[str, Any]:
        if not kinds or not all(isinstance(k, str) for k in kinds):
            raise self.fail(path, f"type must be a string or a list of strings, not {json.dumps(kinds)}")
        real = list(dict.fromkeys(k for k in kinds if k != NULL))
        if not real:
            return self._plain({**schema, "type": NULL}, path, refs)
        nodes = [self._plain({**schema, "type": k}, path, refs) for k in real]
        if len(nodes) == 1:
            result = nodes[0]
        else:
            result = {"anyOf": nodes, **_notes(nodes[0])}
            for node in nodes:
                node.pop("description", None)
                node.pop("default", None)
        return nullable(result) if NULL in kinds else result

    def _merge(self, parts: list[dict[str, Any]], path: str) -> dict[str, Any]:
        merged: dict[str, Any] = {}
        for part in parts:
            for key, value in part.items():
                if key == "properties":
                    merged.setdefault("properties", {}).update(value)
                elif key == "required":
                    merged["required"] = list(dict.fromkeys([*merged.get("required", []), *value]))
                elif key == "type" and "type" in merged and merged["type"] != value:
                    raise self.fail(path, f"allOf combines incompatible types {merged['type']} and {value}")
                else:
                    merged[key] = value
        if "properties" in merged:
            merged.setdefault("type", "object")
        return merged


def _draft4_bounds(node: dict[str, Any]) -> None:
    """Draft-4 ``exclusiveMinimum: true`` (with ``minimum``) becomes ``exclusiveMinimum: <minimum>``."""
    for exclusive, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        if isinstance(node.get(exclusive), bool):
            flag = node.pop(exclusive)
            if flag and bound in node:
                node[exclusive] = node.pop(bound)


def normalize_schema(tool: str, label: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The normalized form of one input or output schema of `tool` (see the module docstring).

    `label` (``inputSchema``/``outputSchema``) starts every path in an error message.

    Raises:
        SpecError: naming the tool and the schema path of the first problem.
    """
    return _Normalizer(tool, schema).node(schema, label)
