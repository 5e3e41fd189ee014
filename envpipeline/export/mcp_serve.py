"""An MCP server (official `mcp` SDK 2.x) over one accepted composed task's environment.

Every service tool of the task's environment (planted services and distractors) is one MCP tool
named by `safe_tool_name` (``calendar.update_event`` -> ``calendar__update_event``: the
``^[a-zA-Z0-9_-]{1,64}$`` rule of OpenAI and Anthropic tool names) with the service's own argument
schema as the input schema. Two more tools drive an episode: ``reset`` (the session's state back to
the task's initial state) and ``score`` (the task's criteria on the session's state and an
optional final ``answer``: ``{"checklist": share passed, "binary": 0|1, "criteria": {id: bool}}``; the
share counts the criteria the initial state does not already meet, `rewards.held_at_start`).

Each client session has its own state, made from the task's initial state on its first call: a
second client never sees the first one's writes. A call runs the real service on that state: a
successful observation comes back as one JSON object (text content plus ``structured_content``:
``{"success": true, "data": ...}``); a failed one (400 invalid, 404 unknown, 409 conflict) as an
MCP tool error (``is_error=True``) whose text and structured content are the JSON error
observation. Arguments are validated by the service, not the SDK, so a missing or mistyped
argument is the same ``{"success": false, "error": {"code": 400, ...}}`` observation the SFT data
teaches. The task's instruction is the server's ``instructions``. Transports: in memory
(``mcp.Client(server)``), stdio (`run_stdio`) or streamable HTTP on 127.0.0.1 (`serve_http`,
path ``/mcp``).
"""

from __future__ import annotations

import inspect
import json
import logging
import threading
import weakref
from pathlib import Path
from typing import Any

from envpipeline.agents.environment import ComposedEnvironment
from envpipeline.errors import MissingExtraError
from envpipeline.export.tool_names import safe_tool_name
from envpipeline.models.task import TaskRecord
from envpipeline.rewards.held_at_start import held_rewards
from envpipeline.rewards.modes import get_reward_mode
from envpipeline.rubric import held_at_start, pass_vector
from envpipeline.services.base import ToolDef

try:
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.types import CallToolResult, TextContent
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
except ImportError as missing:
    raise MissingExtraError("mcp", missing, needed_by=__name__) from missing

#: The episode tools every task server adds beside the service tools.
RESET_TOOL, SCORE_TOOL = "reset", "score"


#: The header naming a streamable-HTTP session of the handshake-era protocol (2025 and before).
SESSION_HEADER = "mcp-session-id"
#: The request ``_meta`` key naming an episode explicitly (any protocol version).
EPISODE_META = "envpipeline/episode"
#: The episode of requests that name none under the stateless protocol (2026-07-28 and later).
DEFAULT_EPISODE = "default"


def session_key(ctx: Context) -> Any:
    """The episode a request belongs to; each one has its own state.

    In order: the ``envpipeline/episode`` key of the request's ``_meta`` (any client can set it:
    ``client.call_tool(name, args, meta={"envpipeline/episode": "e1"})``); the streamable-HTTP
    session (``mcp-session-id``) or the connection (stdio, in memory) of a handshake-era
    ("legacy") client. The stateless protocol (2026-07-28) has no session at all: its requests
    without an episode share the server's default episode (over stdio a server has one client).
    """
    meta = getattr(ctx.request_context, "meta", None) or {}
    episode = meta.get(EPISODE_META) if isinstance(meta, dict) else None
    if isinstance(episode, str) and episode:
        return f"episode:{episode}"
    session_id = (ctx.headers or {}).get(SESSION_HEADER)
    if session_id:
        return f"http:{session_id}"
    if ctx.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS:
        # the SDK wraps each request in a new ServerSession; the per-client Connection behind it
        # (mcp 2.x, mcp/server/connection.py) is what lives as long as the client's session
        return getattr(ctx.session, "_connection", None) or ctx.session
    return f"episode:{DEFAULT_EPISODE}"


class SessionStates:
    """One live environment per MCP session, built from the task's initial state on first use.

    A handshake-era connection (stdio, in memory) is keyed by its session object (its state is
    dropped with it); named episodes and HTTP sessions by a string (kept until the server stops).
    """

    def __init__(self, task: TaskRecord) -> None:
        self.task = task
        self._lock = threading.Lock()
        self._by_object: weakref.WeakKeyDictionary[Any, ComposedEnvironment] = weakref.WeakKeyDictionary()
        self._by_id: dict[str, ComposedEnvironment] = {}

    def _table(self, session: Any) -> Any:
        return self._by_id if isinstance(session, str) else self._by_object

    def fresh(self) -> ComposedEnvironment:
        """A new environment in the task's initial state."""
        return ComposedEnvironment.from_task_environment(self.task.environment)

    def get(self, session: Any) -> ComposedEnvironment:
        """The environment of `session` (created in the initial state when it has none yet)."""
        with self._lock:
            table = self._table(session)
            env = table.get(session)
            if env is None:
                env = table[session] = self.fresh()
            return env

    def reset(self, session: Any) -> ComposedEnvironment:
        """Put `session` back in the task's initial state."""
        with self._lock:
            env = self._table(session)[session] = self.fresh()
            return env

    def __len__(self) -> int:
        return len(self._by_object) + len(self._by_id)


def score_state(task: TaskRecord, env: ComposedEnvironment, answer: str = "") -> dict[str, Any]:
    """The task's criteria on `env`'s state and the final `answer`: checklist share (of the criteria
    the initial state does not already meet, `rewards.held_at_start`) and binary."""
    criteria = list(task.criteria)
    vector = pass_vector(criteria, env.states, answer)
    held = held_at_start(criteria, ComposedEnvironment.from_task_environment(task.environment).states)
    checklist = (
        held_rewards(get_reward_mode("checklist"), [vector], None, held, 0.0, 1.0)[0] if vector else 0.0
    )
    return {
        "checklist": round(checklist, 6),
        "binary": int(bool(vector) and all(vector)),
        "criteria": {c.id: ok for c, ok in zip(task.criteria, vector)},
    }


def _signature(tool_def: ToolDef) -> inspect.Signature:
    """Every argument optional (the service, not the SDK, reports a missing one), plus the context."""
    params = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=Any, default=None)
        for name in tool_def.args_model.model_fields
    ]
    params.append(inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context))
    return inspect.Signature(params, return_annotation=dict[str, Any])


def _result(observation: dict[str, Any]) -> dict[str, Any] | CallToolResult:
    """A successful observation as is; a failed one as a tool error carrying the same JSON."""
    if observation.get("success"):
        return observation
    text = json.dumps(observation, sort_keys=True, ensure_ascii=False)
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=observation, is_error=True
    )


def _handler(states: SessionStates, namespaced: str, safe: str, tool_def: ToolDef) -> Any:
    fields = tool_def.args_model.model_fields

    def run(ctx: Context, **arguments: Any) -> dict[str, Any] | CallToolResult:
        # an argument left out (or null) is not forwarded: the service applies its default, or
        # answers 400 for a required one
        given = {k: v for k, v in arguments.items() if k in fields and v is not None}
        return _result(states.get(session_key(ctx)).call(namespaced, given))

    run.__signature__ = _signature(tool_def)  # type: ignore[attr-defined]
    run.__annotations__ = {"ctx": Context, **{name: Any for name in fields}, "return": dict[str, Any]}
    run.__name__ = safe
    return run


def _quiet_server(task: TaskRecord) -> MCPServer:
    root = logging.getLogger()
    saved = root.level, list(root.handlers)
    server = MCPServer(name=f"envpipeline-{task.task_id}", instructions=task.instruction, log_level="WARNING")
    # MCPServer calls logging.basicConfig; keep the host's logging as it was
    root.setLevel(saved[0])
    root.handlers[:] = saved[1]
    return server


def _add_episode_tools(server: MCPServer, states: SessionStates, scoring: bool) -> None:
    task = states.task

    def reset(ctx: Context) -> dict[str, Any]:
        """Put this session's environment back in the task's initial state."""
        env = states.reset(session_key(ctx))
        return {"success": True, "data": {"services": sorted(env.services)}}

    def score(ctx: Context, answer: str | None = None) -> dict[str, Any]:
        """Score this session: the task's criteria on its state and your final answer."""
        return {"success": True, "data": score_state(task, states.get(session_key(ctx)), answer or "")}

    server.add_tool(reset, name=RESET_TOOL, description=reset.__doc__, structured_output=True)
    if scoring:
        server.add_tool(score, name=SCORE_TOOL, description=score.__doc__, structured_output=True)


def create_task_server(
    task: TaskRecord, states: SessionStates | None = None, scoring: bool = True
) -> MCPServer:
    """An MCPServer exposing every tool of `task`'s environment (each session on its own state).

    `scoring=False` leaves out the ``score`` tool: it grades against the task's criteria, so a
    server an agent under evaluation talks to should not offer it (the harness scores instead).
    """
    states = states or SessionStates(task)
    server = _quiet_server(task)
    for service_name, service in sorted(states.fresh().services.items()):
        for local, tool_def in service.tools.items():
            namespaced = f"{service_name}.{local}"
            safe = safe_tool_name(namespaced)
            server.add_tool(
                _handler(states, namespaced, safe, tool_def),
                name=safe,
                description=tool_def.description,
                structured_output=True,
            )
            registered = server._tool_manager.get_tool(safe)
            if registered is not None:  # publish the service's own schema (descriptions, enums, required)
                registered.parameters = tool_def.json_schema(service_name)["function"]["parameters"]
    _add_episode_tools(server, states, scoring)
    return server


def load_task(task_id: str, home: str | Path | None = None) -> TaskRecord:
    """The accepted composed task `task_id` from the lake under `home` (``verified_composed_tasks``)."""
    from envpipeline.export.envs import load_accepted_task

    return load_accepted_task(task_id, home)


def run_stdio(task: TaskRecord, scoring: bool = True) -> None:
    """Serve the task over stdio until the client closes the stream."""
    create_task_server(task, scoring=scoring).run(transport="stdio")


def run_http(task: TaskRecord, host: str = "127.0.0.1", port: int = 8000, scoring: bool = True) -> None:
    """Serve the task over streamable HTTP (``http://HOST:PORT/mcp``) until interrupted."""
    create_task_server(task, scoring=scoring).run(transport="streamable-http", host=host, port=port)


def serve_http(task: TaskRecord, host: str = "127.0.0.1", port: int = 0) -> Any:
    """Start the server in the background over streamable HTTP; ``<server.url>/mcp`` is the endpoint."""
    from envpipeline.worlds.interfaces._serving import BackgroundServer

    app = create_task_server(task).streamable_http_app(streamable_http_path="/mcp", host=host)
    server = BackgroundServer(app, host, port, name=f"task-mcp-{task.task_id}")
    server.start()
    return server
