"""The agent-facing meta-tools: list_services, list_tools, describe_tool and call_tool.

The agent never sees hundreds of tool schemas up front: it discovers services, inspects a tool's
argument schema, then calls it (paper, appendix D). `MetaToolbox.dispatch` is the whole
agent-facing path: meta-arguments validated, the service tool's arguments validated by the
service, and the observation serialized to the JSON string an agent receives.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from envpipeline.agents.environment import ComposedEnvironment
from envpipeline.services.base import BAD_REQUEST, NOT_FOUND, ToolDef, error_observation
from envpipeline.services.schema_cache import tool_listing, tool_listing_text, tool_schema_text

META_TOOL_SCHEMAS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "list_services",
            "description": "List the services available in this environment.",
            "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "list_tools",
            "description": "List the tools of one service with a one-line description each.",
            "parameters": {
                "type": "object",
                "properties": {"service": {"type": "string", "description": "service name"}},
                "required": ["service"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "describe_tool",
            "description": "Show the argument schema of one tool, e.g. calendar.update_event.",
            "parameters": {
                "type": "object",
                "properties": {"tool": {"type": "string", "description": "namespaced tool name"}},
                "required": ["tool"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "call_tool",
            "description": "Call one tool with arguments matching its schema.",
            "parameters": {
                "type": "object",
                "properties": {
                    "tool": {"type": "string", "description": "namespaced tool name"},
                    "arguments": {"type": "object", "description": "the tool's arguments"},
                },
                "required": ["tool", "arguments"],
                "additionalProperties": False,
            },
        },
    },
]

SYSTEM_PROMPT = (
    "You can act in several services through four meta-tools. First list the services, then list "
    "the tools of the services you need, describe each tool before you first use it, and call it "
    "with arguments that match its schema. Errors come back as observations with a code "
    "(400 invalid argument, 404 unknown id, 409 conflict). When the task is done, reply with a "
    "short summary."
)

_json_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def _dumps(observation: dict[str, Any]) -> str:
    """Compact JSON, UTF-8 kept as is (orjson; the stdlib encoder for what orjson cannot encode)."""
    try:
        return orjson.dumps(observation, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        return _json_dumps(observation)


def _loads(text: str) -> Any:
    """Parse JSON arguments (orjson; the stdlib parser for what only it accepts, e.g. NaN)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def _unknown_service(service: str) -> dict[str, Any]:
    return error_observation(NOT_FOUND, f"unknown service '{service}'")


def _unknown_tool(tool: str) -> dict[str, Any]:
    return error_observation(NOT_FOUND, f"unknown tool '{tool}'")


def _listing_text(listing: list[dict[str, Any]]) -> str:
    """The serialized `list_tools` answer of one listing (rendered once per cached listing)."""
    return _dumps({"success": True, "data": {"tools": listing}})


def _describe_text(schema: dict[str, Any]) -> str:
    """The serialized `describe_tool` answer of one schema (rendered once per cached schema)."""
    return _dumps({"success": True, "data": schema["function"]})


class MetaToolbox:
    """Meta-tools over one composed environment."""

    def __init__(self, env: ComposedEnvironment) -> None:
        self.env = env

    def list_services(self) -> dict[str, Any]:
        """Names, titles and tool counts of the services."""
        services = [
            {"name": n, "title": s.title, "domain": s.domain, "tools": len(s.tools)}
            for n, s in sorted(self.env.services.items())
        ]
        return {"success": True, "data": {"services": services}}

    def list_tools(self, service: str) -> dict[str, Any]:
        """The tools of one service (from the listing cache, a fresh copy)."""
        svc = self.env.services.get(service)
        if svc is None:
            return _unknown_service(service)
        return {"success": True, "data": {"tools": tool_listing(service, svc)}}

    def describe_tool(self, tool: str) -> dict[str, Any]:
        """The JSON schema of one tool (from the schema cache, a fresh copy)."""
        tool_def = self._tool_def(tool)
        if tool_def is None:
            return _unknown_tool(tool)
        return {"success": True, "data": tool_def.json_schema(tool.partition(".")[0])["function"]}

    def _tool_def(self, tool: str) -> ToolDef | None:
        namespace, _, local = tool.partition(".")
        svc = self.env.services.get(namespace)
        return None if svc is None else svc.tools.get(local)

    def _list_tools_text(self, service: str) -> str:
        """`list_tools` serialized: the cached text of the service's listing."""
        svc = self.env.services.get(service)
        if svc is None:
            return _dumps(_unknown_service(service))
        return tool_listing_text(service, svc, _listing_text)

    def _describe_tool_text(self, tool: str) -> str:
        """`describe_tool` serialized: the cached text of the tool's schema."""
        tool_def = self._tool_def(tool)
        if tool_def is None:
            return _dumps(_unknown_tool(tool))
        return tool_schema_text(tool_def, tool.partition(".")[0], _describe_text)

    def call_tool(self, tool: object, arguments: Any) -> dict[str, Any]:
        """Call one service tool (`tool` as the agent sent it: a 400 unless it is a string)."""
        if not isinstance(tool, str):
            return error_observation(BAD_REQUEST, "'tool' must be a string")
        return self.env.call(tool, arguments)

    def dispatch(self, name: str, arguments: Any) -> str:
        """Run one meta-tool call as an agent issues it; returns the serialized observation."""
        if isinstance(arguments, str):
            try:
                arguments = _loads(arguments) if arguments else {}
            except json.JSONDecodeError:
                return _dumps(error_observation(BAD_REQUEST, "arguments are not valid JSON"))
        if not isinstance(arguments, dict):
            return _dumps(error_observation(BAD_REQUEST, "arguments must be a JSON object"))
        if name == "call_tool":
            observation = self.call_tool(arguments.get("tool"), arguments.get("arguments", {}))
        elif name == "list_services":
            observation = self.list_services()
        elif name == "list_tools":
            return self._list_tools_text(str(arguments.get("service", "")))
        elif name == "describe_tool":
            return self._describe_tool_text(str(arguments.get("tool", "")))
        else:
            observation = error_observation(NOT_FOUND, f"unknown meta-tool '{name}'")
        return _dumps(observation)
