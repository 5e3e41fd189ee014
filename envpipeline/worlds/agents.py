"""Scripted agents that really act on a world day through its three interfaces.

An agent interprets a task's scripted solution (`WorldTask.solution`) step by step on a working
copy of the task's W0:

- **MCP** through the official client, in memory, against `interfaces.mcp_server`;
- **web** over HTTP (httpx) against the storefront/webmail served on a free 127.0.0.1 port;
- **CLI** through `WorldShell` (the local sandbox); only when no sandbox is available does it fall
  back to a *direct subprocess* in the home copy, and the rollout records ``cli_backend`` saying so.

Skill levels set a per-step error rate (`SKILLS`); unhinted agents add `UNHINTED_EXTRA` and must
discover where things are (list channels / threads / folders and read until the pattern
matches) while hinted agents go straight to the hinted source. A mistake is a skipped step, a wrong
value (a distractor or a corrupted value) or a wrong interface (the write lands somewhere else).
Every call is recorded as an OpenAI-format tool call named by interface (``mcp.dm_send``,
``web.POST /cart/add``, ``cli.exec``); the actions themselves live in `agent_actions`.
"""

from __future__ import annotations

import json
import random
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
from mcp import Client

from envpipeline.models.world_task import WorldTask

#: Per-step mistake probability by skill level (hinted); unhinted agents add UNHINTED_EXTRA.
SKILLS: dict[str, float] = {"expert": 0.03, "skilled": 0.08, "novice": 0.2}
UNHINTED_EXTRA = 0.08
MISTAKES = (("skip", 0.3), ("wrong_value", 0.45), ("wrong_interface", 0.25))
SYSTEM_PROMPT = (
    "You operate a personal computer through three interfaces: web (HTTP storefront and webmail), "
    "cli (a bash shell in the home folder) and mcp (chat, direct-message and email tools)."
)
DIRECT_BACKEND = "direct-subprocess (no sandbox available)"


@dataclass
class ShellResult:
    """What a CLI command returned."""

    stdout: str
    stderr: str
    exit_code: int


class DirectShell:
    """Fallback CLI when no sandbox exists: bash in the home copy, clearly labelled as such."""

    backend = DIRECT_BACKEND

    def __init__(self, day_dir: Path) -> None:
        self.home = Path(day_dir) / "home"

    def run(self, command: str, timeout_sec: float = 30.0) -> ShellResult:
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=self.home,
            capture_output=True,
            text=True,
            timeout=timeout_sec,
            env={"PATH": "/usr/bin:/bin", "HOME": str(self.home)},
        )
        return ShellResult(done.stdout, done.stderr, done.returncode)

    def close(self) -> None:
        """Nothing to release."""


def open_shell(day_dir: Path, sandbox: Any = None) -> Any:
    """A `WorldShell` in the sandbox (its `backend` names it), else a `DirectShell`."""
    from envpipeline.sandbox.local import LocalSandbox
    from envpipeline.worlds.interfaces.cli import WorldShell

    if sandbox is None and not LocalSandbox.available():
        return DirectShell(day_dir)
    shell = WorldShell(day_dir, sandbox=sandbox).open()
    shell.backend = f"sandbox:{type(shell.sandbox).__name__}"
    return shell


@dataclass
class Trajectory:
    """OpenAI-format messages: system, user, then assistant tool calls and tool results."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    calls: int = 0

    def call(self, name: str, arguments: dict[str, Any], result: str) -> None:
        """One tool call and its (truncated) result."""
        self.calls += 1
        call_id = f"call_{self.calls}"
        self.messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
                    }
                ],
            }
        )
        self.messages.append({"role": "tool", "tool_call_id": call_id, "name": name, "content": result[:400]})


@dataclass
class AgentResult:
    """What one rollout did."""

    trajectory: list[dict[str, Any]]
    mistakes: list[str]
    tool_calls: int
    cli_backend: str
    seconds: float
    variables: dict[str, str]


class Session:
    """The live interfaces of one working day folder plus the agent's memory and trajectory."""

    def __init__(self, day_dir: Path, http: httpx.Client, shell: Any, mcp: Client, hinted: bool) -> None:
        self.day_dir, self.http, self.shell, self.mcp, self.hinted = day_dir, http, shell, mcp, hinted
        self.vars: dict[str, str] = {}
        self.guesses: dict[str, str] = {}
        self.trajectory = Trajectory()

    # -- interface primitives (each one recorded) ---------------------------------------------------
    async def tool(self, name: str, **arguments: Any) -> tuple[bool, Any]:
        """Call an MCP tool: (ok, parsed JSON or error text)."""
        result = await self.mcp.call_tool(name, arguments)
        text = "".join(getattr(block, "text", "") for block in result.content)
        self.trajectory.call(f"mcp.{name}", arguments, text)
        if result.is_error:
            return False, text
        try:
            return True, json.loads(text)
        except ValueError:
            return True, text

    def web(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """One HTTP request to the web app (redirects are not followed)."""
        response = self.http.request(method, path, **kwargs)
        args = {k: v for k, v in {**kwargs.get("params", {}), **kwargs.get("data", {})}.items()}
        self.trajectory.call(
            f"web.{method} {path}",
            args,
            f"{response.status_code} {response.headers.get('location', '')} {len(response.text)} bytes",
        )
        return response

    def cli(self, command: str) -> ShellResult:
        """One shell command in the home folder."""
        result = self.shell.run(command)
        self.trajectory.call(
            "cli.exec", {"command": command}, f"exit={result.exit_code}\n{result.stdout}{result.stderr}"
        )
        return result

    # -- memory -----------------------------------------------------------------------------------
    def fmt(self, template: str, corrupt: bool = False, rng: random.Random | None = None) -> str:
        """Fill ``{var}`` from memory (a guess, or 'unknown', when a read was skipped)."""
        values = {**self.guesses, **self.vars}

        class Memory(dict):
            def __missing__(self, key: str) -> str:
                return "unknown"

        if corrupt and rng is not None:
            used = [k for k in values if "{" + k + "}" in template]
            if used:
                key = rng.choice(used)
                values[key] = corrupt_value(values[key])
        return template.format_map(Memory(values))


def corrupt_value(value: str) -> str:
    """A plausible wrong value: the last digit shifted, else a dropped final character."""
    for i in range(len(value) - 1, -1, -1):
        if value[i].isdigit():
            return value[:i] + str((int(value[i]) + 1) % 10) + value[i + 1 :]
    return value[:-1] if len(value) > 1 else value + "x"


class ScriptedAgent:
    """A scripted agent of one skill level, hinted or not; deterministic per seed."""

    def __init__(
        self, skill: str = "expert", hinted: bool = True, seed: str = "0", error_rate: float | None = None
    ) -> None:
        if skill not in SKILLS and error_rate is None:
            raise ValueError(f"unknown skill {skill!r}; choose one of {', '.join(SKILLS)}")
        self.skill, self.hinted = skill, hinted
        base = SKILLS.get(skill, 0.0) if error_rate is None else error_rate
        self.error_rate = base + (0.0 if hinted or error_rate is not None else UNHINTED_EXTRA)
        self.rng = random.Random(f"agent:{seed}:{skill}:{hinted}")

    def _mistake(self) -> str | None:
        if self.rng.random() >= self.error_rate:
            return None
        roll, acc = self.rng.random(), 0.0
        for name, share in MISTAKES:
            acc += share
            if roll < acc:
                return name
        return MISTAKES[-1][0]

    def run(self, task: WorldTask, day_dir: Path | str, sandbox: Any = None) -> AgentResult:
        """Act on `day_dir` (a working copy of W0) through web, MCP and CLI; return the record."""
        from envpipeline.worlds.interfaces.mcp_server import create_mcp_server
        from envpipeline.worlds.interfaces.web import serve_web

        day_dir = Path(day_dir)
        started = time.monotonic()
        server = serve_web(day_dir)
        shell = open_shell(day_dir, sandbox)
        mistakes: list[str] = []
        try:
            with httpx.Client(base_url=server.url, timeout=20, follow_redirects=False) as http:

                async def scenario() -> Session:
                    async with Client(create_mcp_server(day_dir)) as mcp:
                        session = Session(day_dir, http, shell, mcp, self.hinted)
                        await self._act(task, session, mistakes)
                        return session

                session = anyio.run(scenario)
        finally:
            shell.close()
            server.stop()
        return AgentResult(
            trajectory=session.trajectory.messages,
            mistakes=mistakes,
            tool_calls=session.trajectory.calls,
            cli_backend=getattr(shell, "backend", "sandbox"),
            seconds=round(time.monotonic() - started, 3),
            variables=dict(session.vars),
        )

    async def _act(self, task: WorldTask, session: Session, mistakes: list[str]) -> None:
        from envpipeline.worlds.agent_actions import ACTIONS

        user = task.instruction
        if self.hinted:
            user += "\n\nHints:\n" + "\n".join(f"{i + 1}. {h}" for i, h in enumerate(task.hints))
        session.trajectory.messages += [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": user},
        ]
        for number, step in enumerate(task.solution):
            mistake = self._mistake()
            if mistake:
                mistakes.append(f"step {number} {step.action}: {mistake}")
            if mistake == "skip":
                for var, options in step.args.get("distractors", {}).items():
                    session.guesses.setdefault(var, self.rng.choice(options))
                continue
            await ACTIONS[step.action](session, step.args, mistake, self.rng)
        if self._mistake() is None:  # a sloppy agent sometimes stops without a final answer
            found = ", ".join(f"{k}={v[:60]}" for k, v in sorted(session.vars.items()))
            session.trajectory.messages.append({"role": "assistant", "content": f"Done. {found}".strip()})
        else:
            mistakes.append("no final answer")
