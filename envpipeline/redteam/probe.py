"""What an adversary can learn and touch in a composed environment without reading the task.

It lists every collection a service exposes (read tools that need no arguments), harvests the ids
and strings those listings show, and fills the arguments of write tools from them.
"""

from __future__ import annotations

import types
from collections import deque
from collections.abc import Iterator
from typing import Any, Literal, Union, get_args, get_origin

from envpipeline.agents.environment import ComposedEnvironment
from envpipeline.services.base import ToolDef, is_id_field
from envpipeline.services.registry import all_services

#: calls one policy may make on one write tool (the search space stays bounded)
MAX_CALLS_PER_TOOL = 40
#: write tools that destroy or retract (by the verb their name starts with)
DESTRUCTIVE_VERBS = (
    "delete",
    "archive",
    "cancel",
    "remove",
    "terminate",
    "close",
    "unsubscribe",
    "unshare",
    "lock",
)


def listings(env: ComposedEnvironment, service: str) -> list[dict[str, Any]]:
    """The data of every read tool of `service` that needs no arguments (what it lists)."""
    found = []
    for name, tool_def in sorted(env.services[service].tools.items()):
        required = [f for f, info in tool_def.args_model.model_fields.items() if info.is_required()]
        if tool_def.writes or required:
            continue
        observation = env.call(f"{service}.{name}", {})
        if observation.get("success"):
            found.append(observation["data"])
    return found


def ids_in(data: Any) -> list[str]:
    """Every id-like string value inside observation data, in order of appearance, once each."""
    seen: dict[str, None] = {}
    stack = deque([data])  # breadth first: a list's pop(0) made long listings quadratic
    while stack:
        item = stack.popleft()
        if isinstance(item, dict):
            for key, value in item.items():
                if isinstance(value, str) and is_id_field(key):
                    seen.setdefault(value, None)
                elif isinstance(value, dict | list):
                    stack.append(value)
        elif isinstance(item, list):
            stack.extend(item)
    return list(seen)


def strings_in(data: Any) -> list[str]:
    """Every string leaf of observation data, once each, in order."""
    seen: dict[str, None] = {}
    stack = deque([data])
    while stack:
        item = stack.popleft()
        if isinstance(item, str):
            seen.setdefault(item, None)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return list(seen)


def service_ids(env: ComposedEnvironment, service: str) -> list[str]:
    """The ids one service's listings show."""
    return [i for data in listings(env, service) for i in ids_in(data)]


def writes(tool: str, *, unknown: bool) -> bool:
    """Whether a namespaced library tool (``tickets.escalate_ticket``) writes; `unknown` for one
    the library lacks (a policy says which way is the safe guess for it)."""
    service, _, local = tool.partition(".")
    found = all_services().get(service)
    return unknown if found is None or local not in found.tools else found.tools[local].writes


def write_tools(env: ComposedEnvironment, service: str) -> list[tuple[str, ToolDef]]:
    """(namespaced name, definition) of every write tool of a service, by name."""
    tools = env.services[service].tools
    return [(f"{service}.{name}", d) for name, d in sorted(tools.items()) if d.writes]


def _filler(name: str, annotation: Any) -> Any:
    """A plausible value for a required non-id argument."""
    origin = get_origin(annotation)
    if origin is Literal:
        return get_args(annotation)[0]
    if origin in (Union, types.UnionType):
        options = [a for a in get_args(annotation) if a is not type(None)]
        return _filler(name, options[0]) if options else None
    if annotation is bool:
        return True
    if annotation in (int, float):
        return 1
    if "email" in name.lower():
        return "redteam@example.com"
    if "date" in name.lower() or name in ("start", "end"):
        return "2026-01-01"
    return "redteam"


def argument_sets(
    tool_def: ToolDef, ids: list[str], limit: int = MAX_CALLS_PER_TOOL
) -> Iterator[dict[str, Any]]:
    """Arguments that aim `tool_def` at each listed id in turn (every required argument filled)."""
    fields = {f: info for f, info in tool_def.args_model.model_fields.items() if info.is_required()}
    id_fields = [f for f in fields if is_id_field(f)]
    base = {f: _filler(f, info.annotation) for f, info in fields.items() if f not in id_fields}
    if not id_fields:
        yield base
        return
    for n, target in enumerate(ids[:limit]):
        arguments = dict(base)
        for k, field in enumerate(id_fields):
            arguments[field] = target if k == 0 else ids[(n + k) % len(ids)]
        yield arguments


def reference_ids(steps_arguments: list[dict[str, Any]]) -> set[str]:
    """Every string a set of reference calls passed (what the task mentions)."""
    return {v for arguments in steps_arguments for v in arguments.values() if isinstance(v, str)}
