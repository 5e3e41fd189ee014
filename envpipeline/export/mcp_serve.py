"""An MCP server (official `mcp` SDK 2.x) over one accepted composed task's environment.

Every service tool of the task's environment (planted services and distractors) is one MCP tool
with its namespaced name (``calendar.update_event``) and the service's own argument schema as the
input schema. A call runs the real service on the server's live state: a successful observation
comes back as one JSON object (text content plus ``structured_content``: ``{"success": true,
"data": ...}``); a failed one (400 invalid, 404 unknown, 409 conflict) as an MCP tool error
(``is_error=True``) whose text and structured content are the JSON error observation. Arguments
that do not fit the schema at all (a required one missing) are refused by the SDK before the
service runs: a tool error whose text starts ``Error executing tool``. The task's instruction is the
server's ``instructions``. Transports: in memory (``mcp.Client(server)``), stdio (`run_stdio`) or
streamable HTTP on 127.0.0.1 (`serve_http`, path ``/mcp``).
"""

from __future__ import annotations

import inspect
import json
import logging
from pathlib import Path
from typing import Any

from pydantic_core import PydanticUndefined

from envpipeline.agents.environment import ComposedEnvironment
from envpipeline.errors import MissingExtraError
from envpipeline.models.task import TaskRecord
from envpipeline.services.base import ToolDef

try:
    from mcp.server.mcpserver import MCPServer
    from mcp.types import CallToolResult, TextContent
except ImportError as missing:
    raise MissingExtraError("mcp", missing, needed_by=__name__) from missing


def _signature(tool_def: ToolDef) -> inspect.Signature:
    """A keyword-only signature mirroring the tool's argument model (so the SDK can validate)."""
    params = []
    for name, field in tool_def.args_model.model_fields.items():
        default = inspect.Parameter.empty
        if not field.is_required():
            default = None if field.default is PydanticUndefined else field.default
        params.append(
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=Any, default=default)
        )
    return inspect.Signature(params, return_annotation=dict[str, Any])


def _handler(env: ComposedEnvironment, namespaced: str, tool_def: ToolDef) -> Any:
    fields = tool_def.args_model.model_fields

    def run(**arguments: Any) -> dict[str, Any] | CallToolResult:
        # optional arguments the caller left out are not forwarded: the service applies its defaults
        given = {
            k: v for k, v in arguments.items() if k in fields and (v is not None or fields[k].is_required())
        }
        observation = env.call(namespaced, given)
        if not observation.get("success"):  # the error observation itself, flagged as a tool error
            text = json.dumps(observation, sort_keys=True, ensure_ascii=False)
            return CallToolResult(
                content=[TextContent(type="text", text=text)], structured_content=observation, is_error=True
            )
        return observation

    run.__signature__ = _signature(tool_def)  # type: ignore[attr-defined]
    run.__name__ = namespaced.replace(".", "__")
    return run


def create_task_server(task: TaskRecord, env: ComposedEnvironment | None = None) -> MCPServer:
    """An MCPServer exposing every tool of `task`'s environment (a fresh copy of its initial state)."""
    env = env or ComposedEnvironment.from_task_environment(task.environment)
    root = logging.getLogger()
    saved = root.level, list(root.handlers)
    server = MCPServer(
        name=f"envpipeline-{task.task_id}",
        instructions=task.instruction,
        log_level="WARNING",
    )
    # MCPServer calls logging.basicConfig; keep the host's logging as it was
    root.setLevel(saved[0])
    root.handlers[:] = saved[1]
    for service_name, service in sorted(env.services.items()):
        for local, tool_def in service.tools.items():
            namespaced = f"{service_name}.{local}"
            server.add_tool(
                _handler(env, namespaced, tool_def),
                name=namespaced,
                description=tool_def.description,
                structured_output=True,
            )
            registered = server._tool_manager.get_tool(namespaced)
            if registered is not None:  # publish the service's own schema (descriptions, enums, required)
                registered.parameters = tool_def.json_schema(service_name)["function"]["parameters"]
    return server


def load_task(task_id: str, home: str | Path | None = None) -> TaskRecord:
    """The accepted composed task `task_id` from the lake under `home` (``verified_composed_tasks``)."""
    from envpipeline.export.envs import load_accepted_task

    return load_accepted_task(task_id, home)


def run_stdio(task: TaskRecord) -> None:
    """Serve the task over stdio until the client closes the stream."""
    create_task_server(task).run(transport="stdio")


def run_http(task: TaskRecord, host: str = "127.0.0.1", port: int = 8000) -> None:
    """Serve the task over streamable HTTP (``http://HOST:PORT/mcp``) until interrupted."""
    create_task_server(task).run(transport="streamable-http", host=host, port=port)


def serve_http(task: TaskRecord, host: str = "127.0.0.1", port: int = 0) -> Any:
    """Start the server in the background over streamable HTTP; ``<server.url>/mcp`` is the endpoint."""
    from envpipeline.worlds.interfaces._serving import BackgroundServer

    app = create_task_server(task).streamable_http_app(streamable_http_path="/mcp", host=host)
    server = BackgroundServer(app, host, port, name=f"task-mcp-{task.task_id}")
    server.start()
    return server
