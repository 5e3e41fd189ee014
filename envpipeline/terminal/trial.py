"""One trial of a bundle: an agent phase, then a fresh verifier phase, in one sandbox session.

The agent phase runs ``solve.sh`` (the oracle or a solution variant), nothing (nop), or an
adversary's commands (a red-team policy). The verifier phase then starts as Harbor's does, from a
state the agent cannot have prepared: every process the agent left running is killed,
``/tests`` and ``/logs/verifier`` are emptied (links removed, not followed), ``tests/`` is
uploaded again from the bundle, and ``test.sh`` runs. Only what the verifier writes counts.

The reward rule (`parse_reward`): the verifier writes ``/logs/verifier/reward.txt`` (exactly one
number) and/or ``reward.json`` (a number, or a flat map of numbers holding it under ``"reward"``;
a one-key map is that key's value; other numeric keys are sidecar metrics). The reward must be
one plain decimal number in [0, 1] (`envpipeline.terminal.reward_value`: ``2``, ``-1``, ``1_0``,
``nan``, ``1e400`` or a 5,000-digit integer are ``malformed_reward`` with the reason, never a
crash). When both files are written they must agree, so the precedence question
never decides a reward: current Harbor reads ``reward.json`` when it exists and falls back to
``reward.txt`` (merging reward.txt's value in when reward.json has no ``"reward"`` key), see
``Verifier.verify`` / ``_parse_reward_json`` in ``src/harbor/verifier/verifier.py`` of Harbor
(read from the fork ``15735640198/harbor``); older Harbor copies (e.g. benchflow's internalized
verifier) read reward.txt first. A verifier writing two different rewards is ``malformed_reward``
here, never a pass, whichever rule the trainer later applies.

Tampering (`planted_files`): a reward file in ``/logs/verifier`` or any file under ``/tests``
that exists before the verifier phase is evidence. Present when the session opened, the image
pre-seeds it; present after the agent phase, the agent (oracle, variant or policy) wrote it. Both
give the trial verdict ``tampered``: the planted files are still thrown away and the verifier still
runs fresh (its score is kept as ``verifier_reward`` for the red-team gate, which asks whether the
verifier itself can be fooled), but the trial's ``reward`` is None, so a policy or rollout that
tampers scores 0 and an oracle that tampers fails gold verification.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from envpipeline.errors import SandboxError
from envpipeline.models.bundle import Bundle
from envpipeline.sandbox.base import EnvironmentBuildError, ExecResult, Limits, Sandbox, SandboxSession
from envpipeline.sandbox.checked import checked_exec
from envpipeline.terminal.host_limits import limit_problem, within_ceiling
from envpipeline.terminal.reason_text import sanitised
from envpipeline.terminal.reward_value import (
    MalformedReward,
    NumberText,
    load_json_numbers_as_text,
    quoted,
    reward_from_json_value,
    reward_from_text,
    sidecar_metric,
)
from envpipeline.terminal.runtime_guard import changed_runtime_files, session_clock

MAX_AGENT_TIMEOUT_SEC = 600.0
#: Folders emptied between the agent phase and the verifier phase.
VERIFIER_PATHS = ("/tests", "/logs/verifier")
REWARD_JSON = "/logs/verifier/reward.json"
REWARD_TXT = "/logs/verifier/reward.txt"

TrialVerdict = Literal[
    "ok",
    "build_failed",
    "agent_timeout",
    "verifier_timeout",
    "missing_reward",
    "malformed_reward",
    "tampered",
    "sandbox_error",
    "limit_exceeded",
]
#: What a sandbox backend raises when a session cannot go on (a failure of this bundle's trial,
#: reported as ``sandbox_error``, never an abort of the batch).
SESSION_ERRORS = (SandboxError, OSError, subprocess.SubprocessError)
#: Lists any reward* entry of /logs/verifier and anything under /tests.
_PLANTED_LISTING = (
    "find /logs/verifier -mindepth 1 -maxdepth 1 -name 'reward*' 2>/dev/null; "
    "find /tests -mindepth 1 ! -type d 2>/dev/null | head -n 20; true"
)
#: What sits in the verifier's folders: a reward file the verifier would read (``test -f`` follows
#: links as a read does: a /logs/verifier that is itself a link is not listed by ``find``), then
#: `_PLANTED_LISTING`. One process in the sandbox: on Docker an exec costs about 70 ms, and the
#: reward files used to be read one by one before the listing.
_PLANTED_PROBE = (
    f'for f in {REWARD_JSON} {REWARD_TXT}; do if test -f "$f"; then echo "$f"; fi; done; ' + _PLANTED_LISTING
)

#: What acts in the agent phase: given the live session, it returns its last command's result.
AgentPhase = Callable[[SandboxSession], ExecResult | None]


class TrialResult(BaseModel):
    """One agent + verifier run in one sandbox session."""

    model_config = ConfigDict(extra="forbid")

    agent: Annotated[str, Field(description="oracle, nop, a solution variant or a red-team policy")]
    backend: str
    verdict: TrialVerdict
    reward: float | None = None
    reason: Annotated[str, AfterValidator(sanitised)] = ""
    agent_exec: ExecResult | None = None
    verifier_exec: ExecResult | None = None
    verifier_reward: Annotated[
        float | None,
        Field(description="what the fresh verifier scored on a tampered trial (the trial's reward is None)"),
    ] = None
    planted: Annotated[
        list[str], Field(description="files found in /logs/verifier or /tests before the verifier ran")
    ] = []
    durations: Annotated[dict[str, float], Field(description="setup/agent/verifier/total seconds")] = {}
    notices: Annotated[
        list[str], Field(description="why the session may differ from the image (the sandbox's notices)")
    ] = []


def _json_reward(raw: bytes) -> float:
    """The reward of a reward.json: a number, or a flat map holding it (see the module docstring)."""
    data = load_json_numbers_as_text(raw, "reward.json")
    if not isinstance(data, dict):
        return reward_from_json_value(data, "reward.json")
    if not data:
        raise MalformedReward("reward.json is an empty map")
    for key, value in data.items():
        if key == "reward":
            continue
        if not isinstance(value, NumberText):
            raise MalformedReward(f"reward.json key {quoted(key)} is not a number (a flat map of numbers)")
        sidecar_metric(value, f"reward.json key {quoted(key)}")
    if "reward" in data:
        return reward_from_json_value(data["reward"], "reward.json")
    if len(data) == 1:
        key, value = next(iter(data.items()))
        return reward_from_json_value(value, f"reward.json key {quoted(key)}")
    return _no_reward_key(sorted(data))


def _no_reward_key(keys: list[str]) -> float:
    shown = ", ".join(quoted(k) for k in keys[:5]) + (" ..." if len(keys) > 5 else "")
    raise MalformedReward(f"reward.json has several keys ({shown}) and no 'reward'")


def _txt_reward(raw: bytes) -> float:
    try:
        text = raw.decode()
    except UnicodeDecodeError:
        raise MalformedReward(f"reward.txt is not text: {quoted(raw.decode(errors='replace'))}") from None
    return reward_from_text(text, "reward.txt")


def parse_reward(json_bytes: bytes | None, txt_bytes: bytes | None) -> tuple[float | None, str]:
    """The one reward the verifier wrote (see the module docstring), or None and why not.

    Each number is read by `reward_value.reward_from_text`: one plain decimal number in [0, 1]."""
    if json_bytes is None and txt_bytes is None:
        return None, "the verifier wrote no /logs/verifier/reward.txt or reward.json"
    readings: list[tuple[str, float]] = []
    for name, raw, parse in (
        ("reward.json", json_bytes, _json_reward),
        ("reward.txt", txt_bytes, _txt_reward),
    ):
        if raw is None:
            continue
        try:
            readings.append((name, parse(raw)))
        except MalformedReward as e:
            return None, str(e)
    if len({value for _, value in readings}) > 1:
        return None, "reward.json and reward.txt disagree: " + ", ".join(f"{n} {v:g}" for n, v in readings)
    return readings[0][1], ""


def solution_phase(bundle: Bundle, solution_dir: Path | None = None) -> AgentPhase:
    """The agent phase of the oracle (or a variant folder laid out like ``solution/``)."""

    def act(session: SandboxSession) -> ExecResult:
        upload_folder(session, solution_dir or bundle.paths.solution, "/solution")
        timeout = min(bundle.config.agent.timeout_sec, MAX_AGENT_TIMEOUT_SEC)
        return session.exec("bash /solution/solve.sh", timeout_sec=timeout)

    return act


def _read_reward_file(session: SandboxSession, path: str) -> tuple[bytes | None, str]:
    """(bytes, "") of a reward file, (None, "") when there is none, (None, why) when it exists but
    the sandbox user cannot read it (e.g. a link to ``/etc/shadow``)."""
    try:
        return session.read_file(path), ""
    except SandboxError as e:
        return None, f"{path.rsplit('/', 1)[-1]} cannot be read as the sandbox user: {e}"


def planted_files(session: SandboxSession) -> list[str]:
    """Reward files in ``/logs/verifier`` and files under ``/tests`` present right now (a reward
    file counts when it is a regular file as the sandbox user sees it, readable or not)."""
    listing = checked_exec(session, _PLANTED_PROBE, timeout_sec=30)
    return sorted({line.strip() for line in listing.stdout.splitlines() if line.strip().startswith("/")})


def _tamper_reason(agent: str, before: list[str], after: list[str], runtime: list[str]) -> str:
    if runtime:
        who = "the oracle solution" if agent == "oracle" else f"the agent phase ({agent})"
        return (
            f"{who} changed what the verifier runs: {', '.join(runtime)} (a Python start-up hook, a "
            "module shadowing one the tests import, or a changed program; see runtime_guard)"
        )
    if before:
        return (
            f"{', '.join(before)} existed before the agent phase: the environment image pre-seeds the "
            "verifier's folders (remove it from the Dockerfile; only test.sh may write rewards)"
        )
    who = "the oracle solution" if agent == "oracle" else f"the agent phase ({agent})"
    fix = " (an oracle that writes rewards is itself broken: solve.sh must solve the task only)"
    return f"{who} wrote {', '.join(after)} before the verifier ran" + (fix if agent == "oracle" else "")


def fresh_verifier_phase(session: SandboxSession, bundle: Bundle) -> None:
    """Kill what the agent left running, empty ``/tests`` and ``/logs/verifier``, upload ``tests/``
    and make ``/tests`` root-owned and read-only."""
    session.kill_all()
    for path in VERIFIER_PATHS:
        session.clear(path)
    upload_folder(session, bundle.paths.tests, "/tests")
    session.make_read_only("/tests")


def upload_folder(session: SandboxSession, folder: Path, destination: str) -> None:
    """Upload a bundle folder; a folder that is itself a link is refused (SandboxError), so the host
    folder it points at is never copied (`verify_bundle`'s path check stops such bundles first)."""
    if folder.is_symlink():
        raise SandboxError(f"{folder} is a symlink: refusing to copy what it points at into the sandbox")
    session.upload(folder, destination)


def run_trial(
    sandbox: Sandbox,
    bundle: Bundle,
    agent: str,
    limits: Limits,
    solution_dir: Path | None = None,
    act: AgentPhase | None = None,
) -> TrialResult:
    """Run one agent phase (`act`; else ``nop`` does nothing and any other name runs the solution),
    then the fresh verifier phase, in one new session.

    Timeouts past the operator's ceiling are capped (a notice each). Every failure of this bundle
    is a verdict with a reason, never an exception: limits the host cannot give are
    ``limit_exceeded`` (no session is opened), a build that fails is
    ``build_failed`` and a session that breaks (`SESSION_ERRORS`) is ``sandbox_error``."""
    started = time.perf_counter()

    def failed(verdict: TrialVerdict, reason: str) -> TrialResult:
        seconds = {"setup": time.perf_counter() - started}
        return TrialResult(
            agent=agent, backend=sandbox.backend, verdict=verdict, reason=reason, durations=seconds
        )

    bundle, capped = within_ceiling(bundle)
    too_much = limit_problem(bundle, limits, sandbox.backend)
    if too_much:
        return failed("limit_exceeded", too_much)
    try:
        session = sandbox.open(bundle, limits)
    except EnvironmentBuildError as e:
        return failed("build_failed", str(e))
    except SESSION_ERRORS as e:
        return failed("sandbox_error", f"the sandbox could not start: {e}")
    if act is None and agent != "nop":
        act = solution_phase(bundle, solution_dir)
    try:
        with session:
            result = _run_phases(session, sandbox.backend, bundle, agent, act, started)
    except SESSION_ERRORS as e:
        return failed("sandbox_error", f"the session failed: {type(e).__name__}: {e}")
    notices = [*capped, *session.notices]
    return result.model_copy(update={"notices": notices}) if notices else result


def _run_phases(
    session: SandboxSession,
    backend: str,
    bundle: Bundle,
    agent: str,
    act: AgentPhase | None,
    started: float,
) -> TrialResult:
    durations = {"setup": time.perf_counter() - started}
    agent_exec = None
    before = planted_files(session)
    since = session_clock(session) if act is not None else ""
    if act is not None:
        mark = time.perf_counter()
        agent_exec = act(session)
        durations["agent"] = time.perf_counter() - mark
        if agent_exec is not None and agent_exec.timed_out:
            durations["total"] = time.perf_counter() - started
            return TrialResult(
                agent=agent,
                backend=backend,
                verdict="agent_timeout",
                agent_exec=agent_exec,
                reason=f"the agent phase ran past its timeout ({agent_exec.duration_sec:.0f}s)",
                durations=durations,
            )
    return verify_after_agent(
        session, backend, bundle, agent, before, since, started, durations, agent_exec, act is not None
    )


def verify_after_agent(
    session: SandboxSession,
    backend: str,
    bundle: Bundle,
    agent: str,
    before: list[str],
    since: str,
    started: float,
    durations: dict[str, float] | None = None,
    agent_exec: ExecResult | None = None,
    agent_acted: bool = True,
) -> TrialResult:
    """The fresh verifier phase of a session whose agent phase is over, and the trial's result.

    `before`: `planted_files` when the session opened; `since`: `session_clock` before the agent
    acted; `agent_acted` False skips the tamper check of the agent phase (nop). Interactive
    episodes (`envpipeline.trainers`) call it once their agent is done.
    """
    durations = dict(durations or {})
    mark = time.perf_counter()
    session.kill_all()
    after = planted_files(session) if agent_acted else before
    runtime = changed_runtime_files(session, since) if agent_acted else []
    fresh_verifier_phase(session, bundle)
    durations["reset"] = time.perf_counter() - mark
    mark = time.perf_counter()
    verifier_exec = session.exec("bash /tests/test.sh", timeout_sec=bundle.config.verifier.timeout_sec)
    durations["verifier"] = time.perf_counter() - mark
    durations["total"] = time.perf_counter() - started
    common = {
        "agent": agent,
        "backend": backend,
        "agent_exec": agent_exec,
        "verifier_exec": verifier_exec,
        "durations": durations,
    }
    if verifier_exec.timed_out:
        return TrialResult(
            **common,
            verdict="verifier_timeout",
            reason=f"test.sh ran past {bundle.config.verifier.timeout_sec:.0f}s",
        )
    (json_bytes, json_problem), (txt_bytes, txt_problem) = (
        _read_reward_file(session, REWARD_JSON),
        _read_reward_file(session, REWARD_TXT),
    )
    reward, problem = parse_reward(json_bytes, txt_bytes)
    if json_problem or txt_problem:
        reward, problem = None, json_problem or txt_problem
    if before or after or runtime:
        scored = f"the verifier, run fresh, scored {reward:g}" if reward is not None else problem
        return TrialResult(
            **common,
            verdict="tampered",
            verifier_reward=reward,
            planted=sorted(set(before) | set(after) | set(runtime)),
            reason=f"{_tamper_reason(agent, before, after, runtime)}; {scored}",
        )
    if reward is None:
        verdict = "missing_reward" if "wrote no" in problem else "malformed_reward"
        return TrialResult(**common, verdict=verdict, reason=problem)
    return TrialResult(**common, verdict="ok", reward=reward)
