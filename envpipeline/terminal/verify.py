"""Gold verification of a bundle: the oracle scores 1 (twice, identically) and doing nothing scores 0.

Each trial opens a fresh sandbox session: the agent phase uploads ``solution/`` (oracle or a
variant) and runs ``solve.sh``, or does nothing (nop); the verifier phase uploads ``tests/``,
runs ``test.sh`` and reads ``/logs/verifier/reward.json`` (wins) or ``reward.txt``.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from envpipeline.models.bundle import Bundle
from envpipeline.sandbox.base import EnvironmentBuildError, ExecResult, Limits, Sandbox, SandboxSession
from envpipeline.terminal.bundle import read_bundle

VERIFIER_VERSION = "gold-verify-1"
MAX_AGENT_TIMEOUT_SEC = 600.0

TrialVerdict = Literal[
    "ok", "build_failed", "agent_timeout", "verifier_timeout", "missing_reward", "malformed_reward"
]
Verdict = Literal[
    "verified",
    "oracle_failed",
    "nop_passed",
    "nondeterministic",
    "build_failed",
    "timeout",
    "missing_reward",
    "malformed_reward",
]

#: The bundle verdict when a trial fails before a reward could be judged.
_TRIAL_FAILURE: dict[TrialVerdict, Verdict] = {
    "build_failed": "build_failed",
    "agent_timeout": "timeout",
    "verifier_timeout": "timeout",
    "missing_reward": "missing_reward",
    "malformed_reward": "malformed_reward",
}


class TrialResult(BaseModel):
    """One agent + verifier run in one sandbox session."""

    model_config = ConfigDict(extra="forbid")

    agent: Annotated[str, Field(description="oracle, nop or a solution variant name")]
    backend: str
    verdict: TrialVerdict
    reward: float | None = None
    reason: str = ""
    agent_exec: ExecResult | None = None
    verifier_exec: ExecResult | None = None
    durations: Annotated[dict[str, float], Field(description="setup/agent/verifier/total seconds")] = {}


class VerificationResult(BaseModel):
    """The gold-verification verdict of one bundle with every trial."""

    model_config = ConfigDict(extra="forbid")

    bundle: str
    path: str
    backend: str
    verdict: Verdict
    reasons: list[str] = []
    oracle_rewards: list[float | None] = []
    nop_reward: float | None = None
    nondeterministic: bool = False
    fingerprint: Annotated[str, Field(description="content hash of the bundle's files")]
    verifier_version: str = VERIFIER_VERSION
    trials: list[TrialResult] = []

    @property
    def passed(self) -> bool:
        """Whether the bundle is gold-verified."""
        return self.verdict == "verified"


def bundle_fingerprint(root: str | Path) -> str:
    """sha256 over every file's relative path, mode and bytes (symlinks by target)."""
    root = Path(root)
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() or p.is_symlink()):
        relative = path.relative_to(root).as_posix()
        digest.update(relative.encode() + b"\0")
        if path.is_symlink():
            digest.update(b"L" + os.readlink(path).encode())
        else:
            digest.update(oct(path.stat().st_mode & 0o777).encode() + path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def parse_reward(json_bytes: bytes | None, txt_bytes: bytes | None) -> tuple[float | None, str]:
    """The reward from reward.json (a number, or a flat map: its "reward" key or the mean) or reward.txt."""
    if json_bytes is not None:
        try:
            data = json.loads(json_bytes)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None, "reward.json is not valid JSON"
        if isinstance(data, dict):
            if not data or not all(
                isinstance(v, int | float) and not isinstance(v, bool) for v in data.values()
            ):
                return None, "reward.json must be a number or a flat map of numbers"
            value = data.get("reward", sum(data.values()) / len(data))
        elif isinstance(data, int | float) and not isinstance(data, bool):
            value = data
        else:
            return None, "reward.json must be a number or a flat map of numbers"
    elif txt_bytes is not None:
        try:
            value = float(txt_bytes.decode().strip())
        except (ValueError, UnicodeDecodeError):
            return None, f"reward.txt is not one number: {txt_bytes[:40]!r}"
    else:
        return None, "the verifier wrote no /logs/verifier/reward.txt or reward.json"
    if not math.isfinite(float(value)):
        return None, "the reward is not finite"
    return float(value), ""


def run_trial(
    sandbox: Sandbox, bundle: Bundle, agent: str, limits: Limits, solution_dir: Path | None = None
) -> TrialResult:
    """Run one agent (``oracle``/variant via `solution_dir`, or ``nop``) and then the verifier."""
    started = time.perf_counter()
    try:
        session = sandbox.open(bundle, limits)
    except EnvironmentBuildError as e:
        return TrialResult(
            agent=agent,
            backend=sandbox.backend,
            verdict="build_failed",
            reason=str(e),
            durations={"setup": time.perf_counter() - started},
        )
    with session:
        return _run_phases(session, sandbox.backend, bundle, agent, solution_dir, started)


def _run_phases(
    session: SandboxSession,
    backend: str,
    bundle: Bundle,
    agent: str,
    solution_dir: Path | None,
    started: float,
) -> TrialResult:
    durations = {"setup": time.perf_counter() - started}
    agent_exec = None
    if agent != "nop":
        session.upload(solution_dir or bundle.paths.solution, "/solution")
        timeout = min(bundle.config.agent.timeout_sec, MAX_AGENT_TIMEOUT_SEC)
        mark = time.perf_counter()
        agent_exec = session.exec("bash /solution/solve.sh", timeout_sec=timeout)
        durations["agent"] = time.perf_counter() - mark
        if agent_exec.timed_out:
            durations["total"] = time.perf_counter() - started
            return TrialResult(
                agent=agent,
                backend=backend,
                verdict="agent_timeout",
                agent_exec=agent_exec,
                reason=f"solve.sh ran past {timeout:.0f}s",
                durations=durations,
            )
    session.upload(bundle.paths.tests, "/tests")
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
    reward, problem = parse_reward(
        session.read_file("/logs/verifier/reward.json"), session.read_file("/logs/verifier/reward.txt")
    )
    if reward is None:
        verdict = "missing_reward" if "wrote no" in problem else "malformed_reward"
        return TrialResult(**common, verdict=verdict, reason=problem)
    return TrialResult(**common, verdict="ok", reward=reward)


def verify_bundle(path: str | Path, sandbox: Sandbox, limits: Limits | None = None) -> VerificationResult:
    """Oracle twice (must be 1 both times), nop once (must be 0); a clear verdict with reasons."""
    bundle = read_bundle(path)
    limits = limits or Limits(
        cpus=bundle.config.environment.cpus, memory_mb=bundle.config.environment.memory_mb
    )
    trials = [run_trial(sandbox, bundle, "oracle", limits)]
    if trials[0].verdict != "build_failed":
        trials.append(run_trial(sandbox, bundle, "oracle", limits))
        trials.append(run_trial(sandbox, bundle, "nop", limits))
    return _judge(bundle, sandbox.backend, trials)


def _judge(bundle: Bundle, backend: str, trials: list[TrialResult]) -> VerificationResult:
    oracle = [t for t in trials if t.agent == "oracle"]
    nop = next((t for t in trials if t.agent == "nop"), None)
    rewards = [t.reward for t in oracle]
    nondeterministic = len({r for r in rewards}) > 1 or len({t.verdict for t in oracle}) > 1
    reasons: list[str] = []
    verdict: Verdict = "verified"
    failed = next((t for t in trials if t.verdict != "ok"), None)
    if failed is not None:
        verdict = _TRIAL_FAILURE[failed.verdict]
        reasons.append(f"{failed.agent}: {failed.reason}")
    elif any(r is None or r < 1.0 for r in rewards):
        verdict = "oracle_failed"
        reasons.append(f"oracle rewards {rewards}, expected 1.0")
    elif nondeterministic:
        verdict = "nondeterministic"
    elif nop is not None and (nop.reward or 0.0) > 0.0:
        verdict = "nop_passed"
        reasons.append(f"doing nothing scored {nop.reward}, expected 0.0")
    if nondeterministic:
        reasons.append(f"oracle runs disagree: rewards {rewards}, verdicts {[t.verdict for t in oracle]}")
        if verdict == "verified":
            verdict = "nondeterministic"
    return VerificationResult(
        bundle=bundle.name,
        path=str(bundle.paths.root),
        backend=backend,
        verdict=verdict,
        reasons=reasons,
        oracle_rewards=rewards,
        nop_reward=nop.reward if nop else None,
        nondeterministic=nondeterministic,
        fingerprint=bundle_fingerprint(bundle.paths.root),
        trials=trials,
    )


def score_variant(
    path: str | Path, sandbox: Sandbox, variant_dir: Path, limits: Limits | None = None
) -> TrialResult:
    """Run one solution variant (a folder laid out like ``solution/``) through the verifier."""
    bundle = read_bundle(path)
    return run_trial(
        sandbox, bundle, f"variant:{variant_dir.name}", limits or Limits(), solution_dir=variant_dir
    )
