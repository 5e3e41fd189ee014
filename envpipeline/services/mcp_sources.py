"""Sources of synthesized services: simulated reads that take no argument start a chain.

A tool such as Alpaca's ``get_account_info`` or Affinity's ``get_current_user`` needs nothing the
agent knows, so no hop can carry a value into it; what it answers can still be where a task
starts ("the account id that get account info gives"). Outside the curated services, each
simulated read whose arguments are all optional (or that has none) and whose response holds a
plain string offers a `Source`: planting it makes the episode's world answer that call (with no
arguments) with a fresh reference code at that string, recorded in the simulated store like the
world's other earlier calls (`mcp_store`), so the agent's own call reads it. A read that takes
required arguments but no value a hop could carry is one as well, asked with constants the request
states, as simulated hops state theirs.
"""

from __future__ import annotations

import random
from typing import Any

from envpipeline.services import vocab
from envpipeline.services.base import ToolDef
from envpipeline.services.links import HopPlan, PathKey, PlannedCall, Source, spoken_title
from envpipeline.services.mcp_crud_links import say, tool_named
from envpipeline.services.mcp_list_links import stated, stated_constant
from envpipeline.services.mcp_simulated import simulated_answer
from envpipeline.services.mcp_spec import ImportedState, Shape
from envpipeline.services.mcp_store import record_write
from envpipeline.services.mcp_values import schema_type, words
from envpipeline.services.worldmodel import WorldModel, first_string_path

#: words of tools that answer with something other than a record of the world, though no write verb
#: marks them: a computation (a sum, a generated random value, a message echoed back:
#: everything-demo's ``get-sum``, ``echo``) or an interaction with a page (Puppeteer's ``click``
#: on a selector): no chain starts there
NOT_A_SOURCE = frozenset(
    {"echo", "sum", "random", "generate", "ping", "sample"}
    | {"click", "hover", "fill", "press", "drag", "drop", "scroll", "select", "navigate", "wait"}
)


def _schema_at(schema: dict[str, Any] | None, path: tuple[PathKey, ...]) -> dict[str, Any] | None:
    """The schema of the value at `path` of a response to `schema` (None: no schema says)."""
    for key in path:
        if not schema or schema_type(schema) != "object" or key not in schema.get("properties", {}):
            return None
        schema = schema["properties"][key]
    return schema


def _plain(schema: dict[str, Any] | None) -> bool:
    """Whether any string fits there: no schema, or a string with no format, pattern or length bound."""
    if schema is None:
        return True
    bounds = ("format", "pattern", "enum", "const", "maxLength", "minLength")
    return schema_type(schema) == "string" and not any(k in schema for k in bounds)


def _with(response: dict[str, Any], path: tuple[PathKey, ...], value: str) -> dict[str, Any]:
    """`response` with `value` at `path` (objects copied on the way, missing ones made)."""
    out = dict(response)
    head, rest = path[0], path[1:]
    if not rest:
        out[str(head)] = value
        return out
    inner = out.get(str(head))
    out[str(head)] = _with(inner if isinstance(inner, dict) else {}, rest, value)
    return out


def simulated_source(
    title: str,
    service: str,
    shape: Shape,
    tool: ToolDef,
    world_model: WorldModel,
    family: str,
    id_args: list[str],
    *,
    stating: bool = False,
) -> Source[ImportedState] | None:
    """The source of one simulated read, if it can start a chain (see the module docstring).
    `stating`: a read that takes required arguments is one too, asked with constants the request
    states (for a read no hop can carry a value into: Cloudflare Radar's ``get_ip_details`` for an
    address, Git's ``git_status`` for a repository path)."""
    spec = shape.spec
    if set(words(spec.name)) & NOT_A_SOURCE or (spec.required and not stating):
        return None
    if any("." in p for p in spec.required):
        return None
    path = first_string_path(spec.output_schema)
    if not path or not _plain(_schema_at(spec.output_schema, path)):
        return None
    field = say(str(path[-1]))
    where = f"use the {spoken_title(title).lower()} service's '{spec.name}' tool"

    def plant(state: ImportedState, rng: random.Random) -> HopPlan:
        fixed = {p: stated_constant(shape, p, state, rng) for p in spec.required}
        arguments = tool.args_model.model_validate(fixed).model_dump(mode="json", by_alias=True)
        answer = simulated_answer(service, state, shape, arguments, world_model, family, False, id_args)
        value = vocab.sample_value("code", rng)
        record_write(state.simulated, family, spec.name, arguments, _with(answer, path, value))
        asked = _asked(fixed, len(spec.properties))
        phrase = f"{where}{asked} and note the {field} it returns"
        relation = f"the {field} that {tool_named(spec.name)} gives{asked}"
        return HopPlan([PlannedCall(spec.name, fixed, reveals=path)], value, phrase, relation)

    return Source(f"{spec.name}_source", "code", plant)


def _asked(fixed: dict[str, Any], arguments: int) -> str:
    """How a request says the call is made: with the constants it states and no other argument
    (another argument is another question, answered otherwise)."""
    if not fixed:
        return " with no arguments" if arguments else ""
    return f" with {stated(fixed)}" + (" and no other argument" if arguments > len(fixed) else "")
