"""The acceptance loop: synthesize per decision until exactly N bundles pass every gate.

Each synthesis call may make several attempts (repairs); an output is accepted only when the
static checks pass and gold verification says ``verified`` (oracle = 1 twice, nop = 0). The loop
stops at exactly `target` accepted bundles or when the attempt or token budget runs out, and
accounts for the work it took (paper, section 4: records, task directories, attempts, tokens).
Decisions are taken round-robin over action variants, then seeds (`interleave`), so a target
smaller than the selection exports a mix of actions rather than the first seeds' ones.
"""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from envpipeline.errors import ConfigError
from envpipeline.models.selection import Decision
from envpipeline.sandbox.base import Sandbox
from envpipeline.select.actions import ACTIONS
from envpipeline.synth.base import Synthesizer
from envpipeline.terminal.checks import check_bundle
from envpipeline.terminal.reason_text import sanitised
from envpipeline.terminal.verify import VerificationResult, verify_bundle

#: Characters of the failing verifier's output carried in a gold-failure reason (the repair prompt).
VERIFIER_TAIL_CHARS = 1500


class ForgeBudget(BaseModel):
    """When the loop gives up."""

    model_config = ConfigDict(extra="forbid")

    max_attempts: int | None = Field(
        default=None, ge=1, description="synthesis attempts (default 4 x target)"
    )
    max_tokens: int | None = Field(
        default=None, ge=1, description="prompt + completion tokens (LLM synthesis)"
    )


class AcceptedBundle(BaseModel):
    """One exported environment."""

    model_config = ConfigDict(extra="forbid")

    task_name: str
    seed_id: str
    action_variant: str
    bundle_path: str
    attempts: int
    tokens: int
    recipe: str = Field(default="milp", description="the recipe of its decision (forge.recipes)")
    parent: str | None = Field(
        default=None,
        description="the folder it was synthesized from: a seed, or a pool bundle (self-instruct)",
    )
    seed_pass_rate: float | None = Field(default=None, description="measured p of the seed")
    projected_pass_rate: float | None = Field(default=None, description="the selector's projected p")
    measured_pass_rate: float | None = Field(
        default=None, description="p measured on the bundle with the seed's policy and K (None: not measured)"
    )


class ForgeReport(BaseModel):
    """What it took to export the accepted bundles."""

    model_config = ConfigDict(extra="forbid")

    target: int
    accepted: list[AcceptedBundle] = []
    records: int = 0
    task_directories: int = 0
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = Field(
        default=0, description="tokens of answers served from the LLM cache (not spent)"
    )
    rejection_reasons: dict[str, int] = {}
    budget_exhausted: bool = False

    @property
    def attempts_per_accepted(self) -> float | None:
        """Synthesis attempts per accepted bundle."""
        return self.attempts / len(self.accepted) if self.accepted else None

    @property
    def tokens_per_accepted(self) -> float | None:
        """Prompt + completion tokens per accepted bundle."""
        return (self.prompt_tokens + self.completion_tokens) / len(self.accepted) if self.accepted else None

    def summary(self) -> dict[str, Any]:
        """The accounting as plain data (what the CLI and assets print)."""
        return {
            "target": self.target,
            "accepted": len(self.accepted),
            "records": self.records,
            "task_directories": self.task_directories,
            "attempts": self.attempts,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cached_tokens": self.cached_tokens,
            "attempts_per_accepted": self.attempts_per_accepted,
            "tokens_per_accepted": self.tokens_per_accepted,
            "rejection_reasons": self.rejection_reasons,
            "budget_exhausted": self.budget_exhausted,
        }


def gold_check(
    bundle_dir: Path, sandbox: Sandbox, heldout: list[str] | None = None
) -> tuple[list[str], VerificationResult | None]:
    """Static check failures, then gold verification (red_team gate included): (reasons, result).

    The reasons are empty when the bundle is accepted; the result is None when a static check failed.
    """
    report = check_bundle(bundle_dir, heldout=heldout)
    failures = [f"static:{c.name}: {c.reason}" for c in report.checks if not c.passed]
    if failures:
        return failures, None
    result = verify_bundle(bundle_dir, sandbox)
    if result.passed:
        return [], result
    reason = f"gold:{result.verdict}: {'; '.join(result.reasons)}"
    if tail := verifier_output_tail(result):
        reason += f"\nverifier output (last {VERIFIER_TAIL_CHARS} characters at most):\n{tail}"
    return [reason], result


def verifier_output_tail(result: VerificationResult, limit: int = VERIFIER_TAIL_CHARS) -> str:
    """The end of what the first failing trial's tests printed (stdout, then stderr), printable
    and at most `limit` characters, so a repair prompt shows why the oracle failed; "" if silent."""
    trial = next((t for t in result.trials if t.reward is None or t.reward < 1.0), None)
    run = trial.verifier_exec if trial is not None else None
    if run is None:
        return ""
    text = "\n".join(part.strip() for part in (run.stdout, run.stderr) if part.strip())
    return sanitised(text[-limit:]) if text else ""


def gold_validator(sandbox: Sandbox, heldout: list[str] | None = None) -> Callable[[Path], list[str]]:
    """A validate callback: static check failures, then gold-verification reasons (empty = accept)."""

    def validate(bundle_dir: Path) -> list[str]:
        return gold_check(bundle_dir, sandbox, heldout)[0]

    return validate


class _HasVariant(Protocol):
    @property
    def action_variant(self) -> str: ...


_T = TypeVar("_T", bound=_HasVariant)


def interleave(items: list[_T]) -> list[_T]:
    """Round-robin over the action variants (in `ACTIONS` order), each variant's items (decisions
    or accepted bundles) in the given (seed) order: increase, reduce, diversify, increase, ..."""
    order = {f"{p}/{d}": k for k, (p, d) in enumerate(ACTIONS)}
    groups: dict[str, list[_T]] = {}
    for item in sorted(items, key=lambda i: order.get(i.action_variant, len(order))):
        groups.setdefault(item.action_variant, []).append(item)
    queues = list(groups.values())
    return [q[k] for k in range(max(map(len, queues), default=0)) for q in queues if k < len(q)]


def bundle_name(decision: Decision, sample: int) -> str:
    """`<seed>--<increase-depth | recipe>-s<sample>`: unique per seed and sample."""
    tag = f"{decision.projection.split('_')[0]}-{decision.direction[3:]}"
    return f"{decision.seed_id}--{tag if decision.recipe == 'milp' else decision.recipe}-s{sample}"


def run_forge(
    decisions: list[Decision],
    seed_dirs: dict[str, Path],
    synthesizer: Synthesizer,
    validate: Callable[[Path], list[str]],
    target: int,
    out_dir: Path,
    budget: ForgeBudget | None = None,
    on_progress: Callable[[ForgeReport], None] | None = None,
    first_sample: int = 0,
    grow_pool: bool = False,
) -> ForgeReport:
    """Cycle over the decisions (interleaved by action variant), synthesizing until `target`
    bundles are accepted or the budget ends. Sample indices of each seed start at `first_sample`
    (a top-up after samples 0..k-1 were synthesized elsewhere starts at k, not at a duplicate).
    With `grow_pool` (Self-Instruct) every accepted bundle joins the cycle as a source: later
    tasks are synthesized from earlier accepted ones, with the decision that produced them."""
    if target < 1:
        raise ConfigError("the target must be at least 1 accepted bundle")
    if not decisions:
        raise ConfigError("no decisions to synthesize from")
    pool: list[tuple[Decision, Path | None]] = [(d, None) for d in interleave(decisions)]
    budget = budget or ForgeBudget()
    max_attempts = budget.max_attempts or 4 * target
    report = ForgeReport(target=target)
    reasons: Counter[str] = Counter()
    samples: Counter[str] = Counter()
    work = out_dir / ".work"
    index = 0
    while len(report.accepted) < target:
        if report.attempts >= max_attempts or (
            budget.max_tokens is not None
            and report.prompt_tokens + report.completion_tokens >= budget.max_tokens
        ):
            report.budget_exhausted = True
            break
        decision, source = pool[index % len(pool)]
        source = source or seed_dirs[decision.seed_id]
        index += 1
        sample = first_sample + samples[decision.seed_id]
        samples[decision.seed_id] += 1
        name = bundle_name(decision, sample)
        result = synthesizer.synthesize(
            source, decision, out_dir=work / name, sample_index=sample, validate=validate
        )
        report.records += 1
        report.attempts += len(result.attempts)
        report.task_directories += sum(a.failure_stage in (None, "validate") for a in result.attempts)
        report.prompt_tokens += result.prompt_tokens
        report.completion_tokens += result.completion_tokens
        report.cached_tokens += result.cached_tokens
        for attempt in result.attempts:
            for failure in attempt.failures:
                # e.g. "validate:static:leak" or "validate:gold:oracle_failed"
                reasons[":".join([attempt.failure_stage or "ok", *failure.split(":")[:2]])] += 1
        if result.bundle_dir is None:
            continue
        final = out_dir / name
        shutil.rmtree(final, ignore_errors=True)
        shutil.move(str(result.bundle_dir), final)
        report.accepted.append(
            AcceptedBundle(
                task_name=name,
                seed_id=decision.seed_id,
                action_variant=decision.action_variant,
                bundle_path=str(final),
                attempts=len(result.attempts),
                tokens=result.total_tokens,
                recipe=decision.recipe,
                parent=source.name,
                seed_pass_rate=decision.pass_rate,
                projected_pass_rate=decision.projected_pass_rate,
            )
        )
        if grow_pool:
            pool.append((decision, final))
        if on_progress is not None:
            on_progress(report)
    report.rejection_reasons = dict(reasons.most_common())
    shutil.rmtree(work, ignore_errors=True)
    return report
