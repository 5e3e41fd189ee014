"""World (WildAWM) episodes: the agent's web, CLI and MCP interfaces over a live copy of the task's W0.

The task's W0 comes from the spec: the inline ``world_snapshot`` (a .tar.gz of ``apps/`` and
``home/``), else the world day under ``worlds_root`` (or ``$ENVPIPELINE_WORLDS``) plus the
task's setup operations. The episode works on a copy in a temporary folder and keeps W0 to
score against.

Tools (safe names, `envpipeline.export.tool_names`):

- ``web__request`` (``web.request``): one HTTP request to the storefront/webmail (in process,
  redirects not followed); the observation is ``"<status> <location> <page text>"``, as the
  scripted agents record it;
- ``cli__exec`` (``cli.exec``): one bash command in the home folder (a `WorldShell` in the
  given sandbox, else the local one; a direct subprocess only where no sandbox exists,
  `agent_session.open_shell`);
- ``mcp__<tool>`` (``mcp.<tool>``): the world's MCP tools with their own schemas (chat, DMs, mail).

Every call is recorded under the interface name the criteria know (``web.POST /mail/send``,
``mcp.mail_send``, ``cli.exec``), so ``calls_through`` criteria are checked on the episode's own
trajectory. The criteria are the task's (`envpipeline.worlds.criteria.check_all`, W0 vs the live
folder); ``checklist`` mode is the task's weighted checklist credit.
"""

from __future__ import annotations

import asyncio
import base64
import io
import os
import shutil
import tarfile
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from envpipeline.errors import ConfigError, MissingExtraError
from envpipeline.export.tool_names import safe_tool_name
from envpipeline.models.env_spec import EnvSpec
from envpipeline.models.world import Operation
from envpipeline.models.world_task import WorldCriterion
from envpipeline.rewards.held_at_start import held_checklist
from envpipeline.sandbox.base import Sandbox
from envpipeline.scratch import scratch_folder, scratch_mkdtemp
from envpipeline.services.base import BAD_REQUEST
from envpipeline.trainers.episode import Episode, error_text, register_episode
from envpipeline.worlds.agent_session import Shell, Trajectory, open_shell, page_text
from envpipeline.worlds.allowance import called_through
from envpipeline.worlds.criteria import check_all
from envpipeline.worlds.delta import apply_ops
from envpipeline.worlds.state import day_path, pack_day
from envpipeline.worlds.verifier import held_at_start

try:
    import anyio
except ImportError as missing:
    raise MissingExtraError("worlds", missing, needed_by=__name__) from missing

T = TypeVar("T")
#: The parts of a day folder that make a task's W0 (as the Harbor world export ships them).
W0_PARTS = ("apps", "home", "manifest.json")
#: Page text kept per web observation.
PAGE_CHARS = 4000
WEB_TOOL = "web.request"
CLI_TOOL = "cli.exec"
WEB_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "method": {"type": "string", "enum": ["GET", "POST"], "description": "HTTP method"},
        "path": {"type": "string", "description": "the page, e.g. / or /mail?folder=inbox or /cart/add"},
        "form": {
            "type": "object",
            "additionalProperties": {"type": "string"},
            "description": 'form fields of a POST, e.g. {"sku": "SKU-1", "quantity": "1"}',
        },
    },
    "required": ["method", "path"],
    "additionalProperties": False,
}
CLI_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"command": {"type": "string", "description": "a bash command run in the home folder"}},
    "required": ["command"],
    "additionalProperties": False,
}


def _function(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


def world_snapshot(day_dir: Path | str) -> str:
    """A day folder's W0 parts as the base64 .tar.gz an `EnvSpec` inlines: the same W0 gives the
    same bytes (`pack_day`; members keep their modes), so two exports of one lake are identical."""
    return base64.b64encode(pack_day(day_dir, W0_PARTS)).decode()


def materialize_w0(spec: EnvSpec, dest: Path, worlds_root: Path | str | None = None) -> Path:
    """Write the spec's W0 into `dest`: the inline snapshot, else the world day plus the setup ops."""
    dest.mkdir(parents=True, exist_ok=True)
    if spec.world_snapshot:
        with tarfile.open(fileobj=io.BytesIO(base64.b64decode(spec.world_snapshot)), mode="r:gz") as tar:
            tar.extractall(dest, filter="data")
        return dest
    root = worlds_root or os.environ.get("ENVPIPELINE_WORLDS")
    if not root:
        raise ConfigError(
            f"world task {spec.task_id}: the row has no inline W0 snapshot; give worlds_root or set "
            "ENVPIPELINE_WORLDS to the folder holding <persona>/day-dd"
        )
    day = day_path(Path(root) / spec.environment["persona_id"], int(spec.environment["day"]))
    if not (day / "apps").is_dir():
        raise ConfigError(f"world task {spec.task_id}: {day} is not a world day folder (no apps/)")
    for part in W0_PARTS:
        source = day / part
        if source.is_dir():
            shutil.copytree(source, dest / part)
        elif source.is_file():
            shutil.copy2(source, dest / part)
    if spec.world_setup:
        apply_ops(dest, [Operation.model_validate(op) for op in spec.world_setup])
    return dest


def inline_w0(spec: EnvSpec, worlds_root: Path | str) -> str:
    """The spec's W0 (world day under `worlds_root` plus setup) as the base64 snapshot to inline."""
    with scratch_folder("envpipeline-w0-") as work:
        return world_snapshot(materialize_w0(spec, Path(work) / "day", worlds_root))


def run_async(function: Callable[..., Awaitable[T]], *args: Any) -> T:
    """Run an async MCP call to completion from sync code, also when this thread runs an event loop
    (SkyRL steps environments from async code): then in a short-lived worker thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return anyio.run(function, *args)
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(anyio.run, function, *args).result()


@register_episode("world")
class WorldEpisode(Episode):
    """A world task's web, CLI and MCP interfaces over a live copy of its W0."""

    def __init__(
        self,
        spec: EnvSpec,
        worlds_root: Path | str | None = None,
        sandbox: Sandbox | None = None,
        **_options: Any,
    ) -> None:
        from starlette.testclient import TestClient

        from envpipeline.worlds.interfaces.mcp_server import create_mcp_server
        from envpipeline.worlds.interfaces.web import create_web_app

        super().__init__(spec)
        self._tmp = scratch_mkdtemp("envpipeline-world-")
        try:
            self.initial_dir = materialize_w0(spec, self._tmp / "initial" / "day", worlds_root)
            self.day_dir = self._tmp / "live" / "day"
            shutil.copytree(self.initial_dir, self.day_dir)
        except BaseException:  # a spec whose world cannot be built leaves no copy behind
            shutil.rmtree(self._tmp, ignore_errors=True)
            raise
        self.criteria = [WorldCriterion.model_validate(c) for c in spec.criteria]
        self.checklist: list[dict[str, Any]] = list(spec.environment.get("checklist", []))
        self.trajectory = Trajectory()
        self.web = TestClient(create_web_app(self.day_dir), follow_redirects=False)
        self.mcp = create_mcp_server(self.day_dir)
        self.sandbox = sandbox
        self._shell: Shell | None = None
        mcp_tools = run_async(self.mcp.list_tools)
        self._mcp_names = {safe_tool_name(f"mcp.{t.name}"): t.name for t in mcp_tools}
        self._tools = {
            safe_tool_name(WEB_TOOL): _function(
                safe_tool_name(WEB_TOOL),
                "Send one HTTP request to the web storefront and webmail.",
                WEB_SCHEMA,
            ),
            safe_tool_name(CLI_TOOL): _function(
                safe_tool_name(CLI_TOOL), "Run one bash command in the home folder.", CLI_SCHEMA
            ),
        }
        for tool in mcp_tools:
            name = safe_tool_name(f"mcp.{tool.name}")
            self._tools[name] = _function(name, tool.description or tool.name, dict(tool.input_schema))

    def agent_tools(self) -> dict[str, dict[str, Any]]:
        return self._tools

    def run_tool(self, tool: str, arguments: dict[str, Any]) -> str:
        if tool in self._mcp_names:
            return self._mcp(self._mcp_names[tool], arguments)
        if tool == safe_tool_name(CLI_TOOL):
            return self._cli(arguments)
        return self._web(arguments)

    def _mcp(self, name: str, arguments: dict[str, Any]) -> str:
        try:
            result = run_async(self.mcp.call_tool, name, arguments)
            text = "".join(getattr(block, "text", "") for block in getattr(result, "content", []))
            failed = bool(getattr(result, "is_error", False))
        except Exception as e:  # ToolError: unknown channel, missing or mistyped argument
            text, failed = error_text(BAD_REQUEST, str(e)), True
        self.trajectory.call(f"mcp.{name}", arguments, text if not failed else f"error: {text}")
        return text

    def _cli(self, arguments: dict[str, Any]) -> str:
        command = arguments.get("command")
        if not isinstance(command, str) or not command.strip():
            return error_text(BAD_REQUEST, "cli.exec needs 'command' as a non-empty string")
        if self._shell is None:
            self._shell = open_shell(self.day_dir, self.sandbox)
        try:
            result = self._shell.run(command)
            text = f"exit={result.exit_code}\n{result.stdout}{result.stderr}"
        except Exception as e:  # a timeout or a broken session is the agent's observation
            text = f"exit=-1\nerror: {type(e).__name__}: {e}"
        self.trajectory.call(CLI_TOOL, {"command": command}, text)
        return text

    def _web(self, arguments: dict[str, Any]) -> str:
        method, path, form = arguments.get("method"), arguments.get("path"), arguments.get("form") or {}
        if method not in ("GET", "POST") or not isinstance(path, str) or not path.startswith("/"):
            return error_text(
                BAD_REQUEST, "web.request needs 'method' GET or POST and 'path' starting with /"
            )
        if not isinstance(form, dict):
            return error_text(BAD_REQUEST, "'form' must be an object of field -> text")
        response = self.web.request(method, path, data={k: str(v) for k, v in form.items()} or None)
        text = f"{response.status_code} {response.headers.get('location', '')} {page_text(response.text)}"
        self.trajectory.call(f"web.{method} {path.split('?')[0]}", dict(form), text)
        return text[:PAGE_CHARS]

    def criterion_results(self) -> dict[str, bool]:
        """{criterion id: passed}: state criteria on W0 vs the live day, calls_through on the trajectory."""
        results = check_all(
            [c.model_dump(mode="json") for c in self.criteria], self.initial_dir, self.day_dir
        )
        for criterion in self.criteria:
            if criterion.kind == "calls_through":
                results[criterion.id] = called_through(criterion, self.trajectory.messages)
        return results

    def criteria_passed(self) -> list[bool]:
        results = self.criterion_results()
        return [results[c.id] for c in self.criteria]

    def held_at_start(self) -> list[bool]:
        held = set(held_at_start(self.criteria))
        return [c.id in held for c in self.criteria]

    def checklist_score(self) -> float:
        if not sum(float(item["weight"]) for item in self.checklist):
            return super().checklist_score()
        items = [(float(item["weight"]), list(item["criteria"])) for item in self.checklist]
        return held_checklist(items, self.criterion_results(), held_at_start(self.criteria))

    def close(self) -> None:
        if self._shell is not None:
            self._shell.close()
            self._shell = None
        self.web.close()
        shutil.rmtree(self._tmp, ignore_errors=True)
