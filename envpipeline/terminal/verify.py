"""Gold verification of a bundle: the oracle scores 1 (twice, identically), doing nothing scores 0,
and no red-team policy scores 1.

Each trial (`envpipeline.terminal.trial`) opens a fresh sandbox session: the agent phase uploads
``solution/`` (oracle or a variant) and runs ``solve.sh``, does nothing (nop), or lets a red-team
policy act; the fresh verifier phase kills the agent's processes, empties ``/tests`` and
``/logs/verifier``, uploads ``tests/``, runs ``test.sh`` and reads the one reward it wrote.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from envpipeline import versions
from envpipeline.errors import ConfigError
from envpipeline.models.bundle import Bundle, BundlePaths
from envpipeline.redteam.base import TerminalPolicyOutcome
from envpipeline.redteam.terminal import red_team, red_team_gate
from envpipeline.sandbox.base import Limits, Sandbox
from envpipeline.sandbox.ceiling import clamp_limits
from envpipeline.terminal.bundle import read_bundle
from envpipeline.terminal.checks import check_path_safety
from envpipeline.terminal.images import resolve_bundle_images
from envpipeline.terminal.import_report import Substitution
from envpipeline.terminal.reason_text import sanitised
from envpipeline.terminal.trial import (
    MAX_AGENT_TIMEOUT_SEC,
    TrialResult,
    TrialVerdict,
    parse_reward,
    run_trial,
)

__all__ = [
    "MAX_AGENT_TIMEOUT_SEC",
    "VERIFIER_VERSION",
    "TrialResult",
    "VerificationResult",
    "bundle_fingerprint",
    "parse_reward",
    "run_trial",
    "score_variant",
    "verify_bundle",
]

#: gold-verify-4: fresh verifier phase, read-only /tests, runtime guard, plain-decimal rewards in
#: [0, 1], path check first, a verdict for every failure (sandbox_error, limit_exceeded)
VERIFIER_VERSION = versions.VERIFIER

Verdict = Literal[
    "verified",
    "oracle_failed",
    "nop_passed",
    "nondeterministic",
    "build_failed",
    "timeout",
    "missing_reward",
    "malformed_reward",
    "red_team_broken",
    "tampered",
    "no_solution",
    "invalid_bundle",
    "needs_image",
    "sandbox_error",
    "limit_exceeded",
]
#: Characters of each output kept in a report's tails.
TAIL_CHARS = 2000
#: Characters of the output line quoted in an `oracle_failed` reason.
REASON_LINE_CHARS = 160

#: The bundle verdict when a trial fails before a reward could be judged.
_TRIAL_FAILURE: dict[TrialVerdict, Verdict] = {
    "build_failed": "build_failed",
    "agent_timeout": "timeout",
    "verifier_timeout": "timeout",
    "missing_reward": "missing_reward",
    "malformed_reward": "malformed_reward",
    "tampered": "tampered",
    "sandbox_error": "sandbox_error",
    "limit_exceeded": "limit_exceeded",
}
#: Trial verdicts after which the bundle's other trials are not run (they would fail the same way).
_STOPS_VERIFICATION: frozenset[TrialVerdict] = frozenset({"build_failed", "limit_exceeded", "sandbox_error"})


class VerificationResult(BaseModel):
    """The gold-verification verdict of one bundle with every trial."""

    model_config = ConfigDict(extra="forbid")

    bundle: str
    path: str
    backend: str
    verdict: Verdict
    reasons: Annotated[
        list[Annotated[str, AfterValidator(sanitised)]],
        Field(description="why the verdict (printable, each capped: `reason_text.sanitised`)"),
    ] = []
    oracle_rewards: list[float | None] = []
    nop_reward: float | None = None
    nondeterministic: bool = False
    fingerprint: Annotated[str, Field(description="content hash of the bundle's files")]
    verifier_version: str = VERIFIER_VERSION
    trials: list[TrialResult] = []
    red_team: Annotated[
        list[TerminalPolicyOutcome],
        Field(description="each red-team policy's outcome (empty when the oracle/nop trials failed first)"),
    ] = []
    substitutions: Annotated[
        list[Substitution],
        Field(description="base images swapped for the local base image, with what differs"),
    ] = []

    @property
    def passed(self) -> bool:
        """Whether the bundle is gold-verified."""
        return self.verdict == "verified"

    def tails(self) -> dict[str, str]:
        """The last `TAIL_CHARS` of the solution's and the tests' stdout/stderr, from the trial that
        decided the verdict (the first that failed, else the first oracle trial)."""
        trial = next((t for t in self.trials if t.verdict != "ok"), None)
        trial = trial or next((t for t in self.trials if t.agent == "oracle"), None)
        if trial is None:
            return {}
        out = {}
        for name, result in (("solution", trial.agent_exec), ("tests", trial.verifier_exec)):
            for stream in ("stdout", "stderr"):
                text = getattr(result, stream) if result is not None else ""
                out[f"{name}_{stream}"] = text[-TAIL_CHARS:]
        return {"trial": trial.agent, **out}


def unverifiable(path: str | Path, backend: str, verdict: Verdict, reason: str) -> VerificationResult:
    """The result of a bundle that could not be run at all (unreadable, or no solution)."""
    root = Path(path)
    return VerificationResult(
        bundle=root.name,
        path=str(root),
        backend=backend,
        verdict=verdict,
        reasons=[reason],
        fingerprint=bundle_fingerprint(root) if root.is_dir() else "",
    )


def path_problem(path: str | Path) -> str:
    """Why the bundle at `path` fails the path check ("" when it passes): run before anything of
    the bundle is read, copied into a sandbox or executed."""
    paths = BundlePaths(Path(path))
    try:
        safety = check_path_safety(paths)
    except OSError as e:
        return f"path check: cannot walk the bundle: {e}"
    return "" if safety.passed else f"path check: {safety.reason}"


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


def verify_bundle(
    path: str | Path, sandbox: Sandbox, limits: Limits | None = None, with_red_team: bool = True
) -> VerificationResult:
    """Oracle twice (must be 1 both times), nop once (must be 0), then every terminal red-team
    policy (none may score 1); a clear verdict with reasons.

    A bundle that fails the path check (`checks.check_path_safety`: a linked ``solution/``,
    ``tests/`` or ``environment/``, a link leaving the bundle, a device file) or cannot be read is
    ``invalid_bundle``, and one without ``solution/solve.sh`` is ``no_solution`` (each with a
    reason), never an exception; nothing of such a bundle is copied or run. Base images are then
    resolved (`envpipeline.terminal.images`): substitutions are listed on the result, and a bundle
    naming an image nothing here stands in for is ``needs_image`` (reasons: which image and how to
    provide it) and is not run."""
    unsafe = path_problem(path)
    if unsafe:
        return unverifiable(path, sandbox.backend, "invalid_bundle", unsafe)
    try:
        bundle = read_bundle(path)
    except ConfigError as e:
        return unverifiable(path, sandbox.backend, "invalid_bundle", str(e))
    if not bundle.paths.solve_sh.is_file():
        return unverifiable(
            path,
            sandbox.backend,
            "no_solution",
            f"{bundle.paths.solve_sh} does not exist: gold verification needs an oracle solution",
        )
    images = resolve_bundle_images(bundle, provided=sandbox.provides_image)
    substitutions = images.substitutions()
    if images.needs_image():
        result = unverifiable(path, sandbox.backend, "needs_image", "")
        reasons = [f"needs_image: {flag.message}" for flag in images.needs_image_flags()]
        return result.model_copy(update={"reasons": reasons, "substitutions": substitutions})
    bundle = dataclasses.replace(bundle, dockerfile_text=images.dockerfile_text)
    capped: list[str] = []
    if limits is None:  # the bundle's own limits, capped at the operator's ceiling
        limits, caps = clamp_limits(bundle.config)
        capped = [cap.note() for cap in caps]
    trials = [run_trial(sandbox, bundle, "oracle", limits)]
    if trials[0].verdict not in _STOPS_VERIFICATION:
        trials.append(run_trial(sandbox, bundle, "oracle", limits))
        trials.append(run_trial(sandbox, bundle, "nop", limits))
    result = _judge(bundle, sandbox.backend, trials)
    result = result.model_copy(update={"substitutions": substitutions, "reasons": [*result.reasons, *capped]})
    if not with_red_team or not result.passed:
        return result
    outcomes = red_team(bundle, sandbox, limits, known={"nop": trials[-1]})
    gate = red_team_gate(outcomes)
    update: dict[str, object] = {"red_team": outcomes}
    if not gate.passed:
        rewards = {o.policy: o.reward for o in outcomes if o.broke}
        update |= {
            "verdict": "red_team_broken",
            "reasons": [*result.reasons, f"red team: {gate.reason} (rewards {rewards}, expected 0)"],
        }
    return VerificationResult.model_validate({**dict(result), **update})  # validated: reasons sanitised


def _last_output_line(trials: list[TrialResult]) -> str:
    """ "; tests said: ..." with the last line the first failed trial's tests printed (else its
    solution's stderr), short and printable, so an `oracle_failed` reason says why; "" if silent."""
    trial = next((t for t in trials if t.reward is None or t.reward < 1.0), None)
    if trial is None:
        return ""
    tests, solution = trial.verifier_exec, trial.agent_exec
    for source, text in (
        ("tests", f"{tests.stdout}\n{tests.stderr}" if tests else ""),
        ("solution", solution.stderr if solution else ""),
    ):
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        if lines:
            line = "".join(c if c.isprintable() else "?" for c in lines[-1])
            return f"; {source} said: {line[:REASON_LINE_CHARS]}"
    return ""


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
        reasons.append(f"oracle rewards {rewards}, expected 1.0{_last_output_line(oracle)}")
    elif nondeterministic:
        verdict = "nondeterministic"
    elif nop is not None and (nop.reward or 0.0) > 0.0:
        verdict = "nop_passed"
        reasons.append(f"doing nothing scored {nop.reward}, expected 0.0")
    if nondeterministic:
        reasons.append(f"oracle runs disagree: rewards {rewards}, verdicts {[t.verdict for t in oracle]}")
        if verdict == "verified":
            verdict = "nondeterministic"
    reasons += dict.fromkeys(notice for trial in trials for notice in trial.notices)
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
    images = resolve_bundle_images(bundle, provided=sandbox.provides_image)
    bundle = dataclasses.replace(bundle, dockerfile_text=images.dockerfile_text)
    return run_trial(
        sandbox, bundle, f"variant:{variant_dir.name}", limits or Limits(), solution_dir=variant_dir
    )
