"""What a scripted agent acts through: the CLI shell, its recorded trajectory and the live `Session`.

A `Session` holds the live interfaces of one working day folder (web over HTTP, MCP through the
official client, the CLI through a `Shell`), the agent's memory (``vars`` read so far, ``guesses``
made for skipped reads) and its OpenAI-format trajectory. The CLI is a `WorldShell` in the sandbox;
only when no sandbox is available is it a `DirectShell` (a direct subprocess in the home copy),
whose `backend` says so.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
from dataclasses import dataclass, field
from html import unescape
from pathlib import Path
from typing import Any, Protocol

from envpipeline.errors import MissingExtraError
from envpipeline.sandbox.base import Sandbox
from envpipeline.worlds.judge_view import CELL

try:
    import httpx
    from mcp import Client
except ImportError as missing:
    raise MissingExtraError("worlds", missing, needed_by=__name__) from missing

DIRECT_BACKEND = "direct-subprocess (no sandbox available)"
#: How much of each observation (tool result, page text) the trajectory keeps for the judges.
OBSERVATION_CHARS = 2000
_TAG = re.compile(r"<[^>]+>")
#: What a browser never shows: the head (its title repeats the page's heading) and style sheets.
_HIDDEN = re.compile(r"<(head|style|script)\b.*?</\1\s*>", re.S | re.I)
_CELL_END = re.compile(r"</t[dh]\s*>", re.I)
#: Elements a browser shows on lines of their own (a form inside a table cell stays in its row).
_BLOCK = re.compile(r"</?(?:p|h[1-6]|tr|table|thead|tbody|nav|div|li|ul|ol|br)\b[^>]*>", re.I)


def page_text(html: str) -> str:
    """What a person sees of a page, as a text browser shows it: no head or style sheet, one line
    per heading, paragraph and table row, a row's cells joined by `CELL`, whitespace collapsed."""
    text = _BLOCK.sub("\n", _CELL_END.sub("\x00", _HIDDEN.sub(" ", html)))
    lines = (re.sub(r"\s+", " ", line).strip() for line in unescape(_TAG.sub(" ", text)).split("\n"))
    rows = (CELL.join(c.strip() for c in line.split("\x00") if c.strip()) for line in lines)
    return "\n".join(row for row in rows if row)


class CommandOutput(Protocol):
    """What one shell command returned (a `ShellResult` or a sandbox's `ExecResult`)."""

    @property
    def stdout(self) -> str: ...

    @property
    def stderr(self) -> str: ...

    @property
    def exit_code(self) -> int | None: ...


class Shell(Protocol):
    """A CLI over a day folder's home/: `WorldShell` (sandboxed) or `DirectShell` (fallback)."""

    @property
    def backend(self) -> str:
        """What runs the commands (recorded on every rollout as ``cli_backend``)."""
        ...

    def run(self, command: str, timeout_sec: float = 30.0) -> CommandOutput:
        """Run one command in the home folder."""
        ...

    def rebind(self, day_dir: Path) -> None:
        """Act on another day folder's home/ from now on (a reused shell)."""
        ...

    def close(self) -> None:
        """Release the shell."""
        ...


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

    def rebind(self, day_dir: Path) -> None:
        """Run in another day folder's home/ from now on."""
        self.home = Path(day_dir) / "home"

    def close(self) -> None:
        """Nothing to release."""


def open_shell(day_dir: Path, sandbox: Sandbox | None = None) -> Shell:
    """A `WorldShell` in the sandbox (its `backend` names it), else a `DirectShell`."""
    from envpipeline.sandbox.local import LocalSandbox
    from envpipeline.worlds.interfaces.cli import WorldShell

    if sandbox is None and not LocalSandbox.available():
        return DirectShell(day_dir)
    return WorldShell(day_dir, sandbox=sandbox).open()


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
        self.messages.append(
            {"role": "tool", "tool_call_id": call_id, "name": name, "content": result[:OBSERVATION_CHARS]}
        )


class Session:
    """The live interfaces of one working day folder plus the agent's memory and trajectory."""

    def __init__(self, day_dir: Path, http: httpx.Client, shell: Shell, mcp: Client, hinted: bool) -> None:
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
            f"{response.status_code} {response.headers.get('location', '')} {page_text(response.text)}",
        )
        return response

    def cli(self, command: str) -> CommandOutput:
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
    """A plausible wrong value: the last digit shifted, else the last letter dropped (not a final
    full stop: "... last week's notes" says what "... last week's notes." says, and a judge rightly
    passes it), else a letter added."""
    for i in range(len(value) - 1, -1, -1):
        if value[i].isdigit():
            return value[:i] + str((int(value[i]) + 1) % 10) + value[i + 1 :]
    letters = [i for i, ch in enumerate(value) if ch.isalpha()]
    if len(letters) > 1:
        return value[: letters[-1]] + value[letters[-1] + 1 :]
    return value + "x"
