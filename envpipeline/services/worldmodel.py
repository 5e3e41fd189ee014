"""World models: the responses of tools that cannot be implemented reliably (CompoWorld).

When a service is synthesized from MCP tool specs, most tools map onto typed CRUD collections; the
rest (``summarize_thread``, ``convert_currency_live``, ``ocr_receipt``...) depend on the outside
world or on judgement and are *simulated*: the service validates their arguments (and any ids
they reference) against its real state, then asks a `WorldModel` for the response.

`OfflineWorldModel` is deterministic and needs nothing: the response is drawn from a
`random.Random` seeded by a hash of service, tool and canonical JSON arguments, so the same call
always gives the same response (tasks stay verifiable), and it conforms to the tool's
``outputSchema`` when one is given.

Note: an LLM-backed world model (the paper's simulator, prompted with the tool spec, the
arguments and the service state) is planned; it will implement the same `WorldModel` protocol
and must keep responses schema-conformant and cached per canonical call for determinism.
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any, ClassVar, Protocol, runtime_checkable

from envpipeline.services import mcp_values


@runtime_checkable
class WorldModel(Protocol):
    """Anything that answers a simulated tool call with a JSON object."""

    def simulate(
        self,
        service: str,
        tool: str,
        arguments: dict[str, Any],
        output_schema: dict[str, Any] | None,
        *,
        state: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The response of `service.tool(arguments)`, conforming to `output_schema` when given.

        `state` is the service's current state as dumped JSON (``state.model_dump(mode="json")``,
        including the simulated-tool store under ``simulated``) when the caller has one; a model may
        read it to answer consistently with earlier writes. It must not mutate it. A model that
        never reads it may say so with a class attribute ``reads_state = False``: callers then
        pass None and skip the dump.
        """
        ...


def canonical_json(arguments: dict[str, Any]) -> str:
    """Arguments as canonical JSON (sorted keys, no whitespace): the identity of a call.

    Stdlib `json`, not `envpipeline.canonical`: this module runs inside exported Harbor images
    (no orjson there), and these exact bytes seed the simulated responses planted in tasks.
    """
    return json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def call_seed(service: str, tool: str, arguments: dict[str, Any]) -> int:
    """A stable 64-bit seed for one call (sha256, not Python's salted `hash`)."""
    digest = hashlib.sha256(f"{service}\x00{tool}\x00{canonical_json(arguments)}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


class OfflineWorldModel:
    """Deterministic, schema-conformant simulated responses; no network, no model.

    With an ``outputSchema`` of type object the response is a sample of it (every declared
    property, realistic values chosen by property name). Without one, with an open object schema
    (no properties: Box's ``{"type": "object", "additionalProperties": true}``) or with a non-object
    schema, the response is ``{"result": <value>, "simulated": True}``, where the value is a
    reference-like string (or a sample of the non-object schema).
    """

    #: the answer depends on the call alone: callers need not dump the state for it
    reads_state: ClassVar[bool] = False

    def simulate(
        self,
        service: str,
        tool: str,
        arguments: dict[str, Any],
        output_schema: dict[str, Any] | None,
        *,
        state: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The deterministic response of one call; see the class docstring (`state` is unused here)."""
        rng = random.Random(call_seed(service, tool, arguments))
        prefix = "".join(w[0] for w in mcp_values.words(tool)).upper()[:3] or "SIM"
        return sampled_response(output_schema, rng, prefix)


def sampled_response(output_schema: dict[str, Any] | None, rng: random.Random, prefix: str) -> dict[str, Any]:
    """A response to `output_schema` shaped as `OfflineWorldModel` answers (see its docstring), drawn
    from `rng`; a reference-like result starts with `prefix`. The seeded history of a simulated
    tool (`mcp_import`) has this shape too, so a hop reads its value where the world model puts it."""
    if output_schema and mcp_values.schema_type(output_schema) == "object" and not open_object(output_schema):
        return mcp_values.sample(output_schema, rng)
    if output_schema and mcp_values.schema_type(output_schema) != "object":
        return {"result": mcp_values.sample(output_schema, rng, "result"), "simulated": True}
    return {"result": f"{prefix}-{rng.randint(1000, 9999)}", "simulated": True}


def open_object(schema: dict[str, Any]) -> bool:
    """Whether an object schema declares no properties and allows any, of any type (its shape is
    left open: a ``result`` string fits it)."""
    return not schema.get("properties") and schema.get("additionalProperties", True) in (True, {})


def first_string_path(schema: dict[str, Any] | None) -> tuple[str, ...] | None:
    """Where an `OfflineWorldModel` response to `schema` holds its first string that could be
    anything, if structurally sure.

    Follows object properties in declaration order (not arrays, whose length varies); formats count
    as strings. A string drawn from a few values is passed over (an enum, a constant, a status or a
    currency: `mcp_values.few_values`): a hop revealing MongoDB's ``disconnect`` outcome,
    ``removed`` or ``disconnected``, asks for a value an agent guesses without the call. None when
    the schema has no such string.
    """
    if not schema or mcp_values.schema_type(schema) != "object" or open_object(schema):
        simple = not schema or mcp_values.schema_type(schema) == "string" or open_object(schema)
        return ("result",) if simple and not (schema and mcp_values.few_values("result", schema)) else None
    for key, sub in schema.get("properties", {}).items():
        kind = mcp_values.schema_type(sub)
        if kind == "string" and not mcp_values.few_values(key, sub):
            return (key,)
        if kind == "object":
            inner = first_string_path(sub)
            if inner is not None and inner != ("result",):
                return (key, *inner)
    return None
