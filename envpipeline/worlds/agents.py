"""Scripted agents that really act on a world day through its three interfaces.

An agent interprets a task's scripted solution (`WorldTask.solution`) step by step on a working
copy of the task's W0:

- **MCP** through the official client, in memory, against `interfaces.mcp_server`;
- **web** over HTTP (httpx) against the storefront/webmail/calendar/bank served on a free 127.0.0.1 port;
- **CLI** through `WorldShell` (the local sandbox); only when no sandbox is available does it fall
  back to a *direct subprocess* in the home copy, and the rollout records ``cli_backend`` saying so.

Skill levels set a per-step error rate (`SKILLS`); unhinted agents add `UNHINTED_EXTRA` and must
discover where things are (list channels / threads / folders and read until the pattern
matches) while hinted agents go straight to the hinted source. A mistake is a skipped step, a wrong
value (a distractor or a corrupted value) or a wrong interface (the write lands somewhere else).
Every call is recorded as an OpenAI-format tool call named by interface (``mcp.dm_send``,
``web.POST /cart/add``, ``cli.exec``); the actions themselves live in `agent_actions`, the session
they act through (shell, trajectory, memory) in `agent_session`.
"""

from __future__ import annotations

import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envpipeline.errors import MissingExtraError
from envpipeline.models.world_task import Step, WorldTask
from envpipeline.sandbox.base import Sandbox
from envpipeline.worlds.agent_actions_life import ACTIONS
from envpipeline.worlds.agent_session import Session, Shell, corrupt_value, open_shell

try:
    import anyio
    import httpx
    from mcp import Client
except ImportError as missing:
    raise MissingExtraError("worlds", missing, needed_by=__name__) from missing

#: Per-step mistake probability by skill level (hinted); unhinted agents add UNHINTED_EXTRA.
SKILLS: dict[str, float] = {"expert": 0.03, "skilled": 0.08, "novice": 0.2}
UNHINTED_EXTRA = 0.08
MISTAKES = (("skip", 0.3), ("wrong_value", 0.45), ("wrong_interface", 0.25))
SYSTEM_PROMPT = (
    "You operate a personal computer through three interfaces: web (HTTP storefront, webmail, calendar "
    "and bank), cli (a bash shell in the home folder) and mcp (chat, direct-message, email, flights and "
    "accounts tools)."
)


@dataclass
class AgentResult:
    """What one rollout did."""

    trajectory: list[dict[str, Any]]
    mistakes: list[str]
    tool_calls: int
    cli_backend: str
    seconds: float
    variables: dict[str, str]


@dataclass(frozen=True)
class Slip:
    """One deliberate mistake, besides the agent's drawn ones (`worlds.careless`): the step it leaves
    out; a value it remembers wrong wherever it stores it, so that everything it writes from it is
    wrong; a value it gets wrong in one step only (a typo in one write); or a value it takes from
    the confusable record beside the right one (the step's distractor: the product of the other
    line, the other date). Wrong is `corrupt_value`: a digit shifted, else a letter dropped."""

    skip_step: int | None = None
    miscopy: str | None = None
    #: the value's name: the steps that store it store the step's first other distractor instead
    confuse: str | None = None
    #: (step, value name): the value is wrong while that step runs, right before and after it
    mistype: tuple[int, str] | None = None


class ScriptedAgent:
    """A scripted agent of one skill level, hinted or not; deterministic per seed."""

    def __init__(
        self,
        skill: str = "expert",
        hinted: bool = True,
        seed: str = "0",
        error_rate: float | None = None,
        slip: Slip | None = None,
    ) -> None:
        if skill not in SKILLS and error_rate is None:
            raise ValueError(f"unknown skill {skill!r}; choose one of {', '.join(SKILLS)}")
        self.skill, self.hinted, self.slip = skill, hinted, slip
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

    def run(self, task: WorldTask, day_dir: Path | str, sandbox: Sandbox | None = None) -> AgentResult:
        """Act on `day_dir` (a working copy of W0) through web, MCP and CLI; return the record.

        Inside `rollout_services.sharing(pool)` the interfaces come from a pool slot rebound to
        `day_dir` (the same apps over the same folder), else they are started for this run alone."""
        from envpipeline.worlds.rollout_services import active_pool

        day_dir = Path(day_dir)
        started = time.monotonic()
        mistakes: list[str] = []
        pool = active_pool()
        if pool is not None and pool.serves(sandbox):
            with pool.lease(day_dir) as services:
                shell = services.shell
                session = services.run_mcp(self._scenario(task, day_dir, services.http, shell, mistakes))
        else:
            from envpipeline.worlds.interfaces.mcp_server import create_mcp_server
            from envpipeline.worlds.interfaces.web import serve_web

            server = serve_web(day_dir)
            shell = open_shell(day_dir, sandbox)
            try:
                # plain HTTP to 127.0.0.1: the client skips loading CA certificates
                with httpx.Client(
                    base_url=server.url, timeout=20, follow_redirects=False, verify=False
                ) as http:
                    scenario = self._scenario(task, day_dir, http, shell, mistakes)

                    async def alone() -> Session:
                        async with Client(create_mcp_server(day_dir)) as mcp:
                            return await scenario(mcp)

                    session = anyio.run(alone)
            finally:
                shell.close()
                server.stop()
        return AgentResult(
            trajectory=session.trajectory.messages,
            mistakes=mistakes,
            tool_calls=session.trajectory.calls,
            cli_backend=shell.backend,
            seconds=round(time.monotonic() - started, 3),
            variables=dict(session.vars),
        )

    def _scenario(
        self, task: WorldTask, day_dir: Path, http: httpx.Client, shell: Shell, mistakes: list[str]
    ) -> Callable[[Client], Awaitable[Session]]:
        """The task's steps against the web app behind `http`, `shell` and an MCP client session."""

        async def scenario(mcp: Client) -> Session:
            session = Session(day_dir, http, shell, mcp, self.hinted)
            await self._act(task, session, mistakes)
            return session

        return scenario

    def _typo(
        self, number: int, memory: dict[str, str], mistakes: list[str], action: str
    ) -> tuple[str, str, str] | None:
        """Apply the slip's one-step typo when `number` is its step: (name, right value, typed value)."""
        if self.slip is None or self.slip.mistype is None or self.slip.mistype[0] != number:
            return None
        name = self.slip.mistype[1]
        if name not in memory:
            return None
        right, memory[name] = memory[name], corrupt_value(memory[name])
        mistakes.append(f"step {number} {action}: {name} mistyped (slip)")
        return name, right, memory[name]

    def _remember_wrong(
        self,
        number: int,
        step: Step,
        memory: dict[str, str],
        mistakes: list[str],
        miscopied: tuple[str, str] | None,
    ) -> tuple[str, str] | None:
        """After step `number`: the slip's miscopied or confused value replaces what it stored."""
        slip = self.slip
        if slip is not None and slip.miscopy is not None:
            before, miscopied = miscopied, _miscopy(memory, slip.miscopy, miscopied)
            if miscopied is not None and miscopied != before:
                mistakes.append(f"step {number} {step.action}: {slip.miscopy} miscopied (slip)")
        if slip is not None and slip.confuse is not None and slip.confuse in memory:
            options = step.args.get("distractors", {}).get(slip.confuse, [])
            other = next((o for o in options if o != memory[slip.confuse]), None)
            stored = slip.confuse in (step.args.get("vars") or []) or step.args.get("var") == slip.confuse
            if stored and other is not None:
                memory[slip.confuse] = other
                mistakes.append(f"step {number} {step.action}: {slip.confuse} confused with {other!r} (slip)")
        return miscopied

    async def _act(self, task: WorldTask, session: Session, mistakes: list[str]) -> None:
        user = task.instruction
        if self.hinted:
            user += "\n\nHints:\n" + "\n".join(f"{i + 1}. {h}" for i, h in enumerate(task.hints))
        session.trajectory.messages += [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": user},
        ]
        miscopied: tuple[str, str] | None = None  # (the value read, what the agent remembers)
        for number, step in enumerate(task.solution):
            mistake = self._mistake()
            if mistake:
                mistakes.append(f"step {number} {step.action}: {mistake}")
            if self.slip is not None and self.slip.skip_step == number and not mistake:
                mistake = "skip"
                mistakes.append(f"step {number} {step.action}: skip (slip)")
            if mistake == "skip":
                for var, options in step.args.get("distractors", {}).items():
                    session.guesses.setdefault(var, self.rng.choice(options))
                continue
            typo = self._typo(number, session.vars, mistakes, step.action)
            await ACTIONS[step.action](session, step.args, mistake, self.rng)
            if typo is not None and session.vars.get(typo[0]) == typo[2]:
                session.vars[typo[0]] = typo[1]  # only this step got it wrong
            if self.slip is not None:
                miscopied = self._remember_wrong(number, step, session.vars, mistakes, miscopied)
        if self._mistake() is None:  # a sloppy agent sometimes stops without a final answer
            found = ", ".join(f"{k}={v[:60]}" for k, v in sorted(session.vars.items()))
            session.trajectory.messages.append({"role": "assistant", "content": f"Done. {found}".strip()})
        else:
            mistakes.append("no final answer")


def _miscopy(memory: dict[str, str], var: str, done: tuple[str, str] | None) -> tuple[str, str] | None:
    """Remember `var` wrong: each value a step stores under it is replaced by its corruption."""
    value = memory.get(var)
    if value is None or (done is not None and value == done[1]):
        return done
    memory[var] = corrupt_value(value)
    return value, memory[var]
