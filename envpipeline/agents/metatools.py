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
from envpipeline.services.base import BAD_REQUEST, NOT_FOUND, error_observation

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
        """The tools of one service."""
        svc = self.env.services.get(service)
        if svc is None:
            return error_observation(NOT_FOUND, f"unknown service '{service}'")
        tools = [{"name": f"{service}.{n}", "description": t.description} for n, t in svc.tools.items()]
        return {"success": True, "data": {"tools": tools}}

    def describe_tool(self, tool: str) -> dict[str, Any]:
        """The JSON schema of one tool."""
        namespace, _, local = tool.partition(".")
        svc = self.env.services.get(namespace)
        if svc is None or local not in svc.tools:
            return error_observation(NOT_FOUND, f"unknown tool '{tool}'")
        return {"success": True, "data": svc.tools[local].json_schema(namespace)["function"]}

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
            observation = self.list_tools(str(arguments.get("service", "")))
        elif name == "describe_tool":
            observation = self.describe_tool(str(arguments.get("tool", "")))
        else:
            observation = error_observation(NOT_FOUND, f"unknown meta-tool '{name}'")
        return _dumps(observation)
