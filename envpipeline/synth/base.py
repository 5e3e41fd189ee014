"""The `Synthesizer` interface every Envs-FORGE synthesizer implements, and its result record.

A synthesizer turns one seed bundle plus one selected `Decision` into a new bundle written at
`out_dir`, checks it with the caller's `validate` callback (static checks, gold verification),
and may retry within its own bound. Rejected attempts are recorded, never raised.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from envpipeline.models.selection import Decision, SynthesisOutput

#: validate(bundle_dir) -> failure reasons; an empty list accepts the bundle.
Validator = Callable[[Path], list[str]]

AttemptKind = Literal["initial", "repair"]
#: "gate": rejected by `envpipeline.synth.gates` (skills, duplicate, hidden literal) before validation
FailureStage = Literal["llm", "parse", "contract", "materialize", "gate", "validate"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SynthesisAttempt(_Strict):
    """One generation or repair attempt and why it failed (if it did)."""

    index: Annotated[int, Field(ge=0, description="0 = initial generation, k = k-th repair")]
    kind: AttemptKind
    prompt_tokens: Annotated[int, Field(description="tokens spent on the request (0 when cached)")] = 0
    completion_tokens: Annotated[int, Field(description="tokens spent on the answer (0 when cached)")] = 0
    cached_prompt_tokens: Annotated[
        int, Field(description="prompt tokens of an answer served from the cache (not spent again)")
    ] = 0
    cached_completion_tokens: Annotated[
        int, Field(description="completion tokens of an answer served from the cache (not spent again)")
    ] = 0
    cost_usd: Annotated[float | None, Field(description="cost spent (None when cached or unpriced)")] = None
    cached: Annotated[bool, Field(description="the LLM answer came from the disk cache")] = False
    latency_sec: float = 0.0
    failure_stage: Annotated[FailureStage | None, Field(description="None = accepted")] = None
    failures: Annotated[list[str], Field(description="reasons the attempt was rejected")] = []

    @property
    def passed(self) -> bool:
        """True when this attempt produced the accepted bundle."""
        return self.failure_stage is None and not self.failures

    @property
    def failure_summary(self) -> str:
        """One line per reason, as fed to the repair prompt."""
        return "\n".join(f"- [{self.failure_stage}] {reason}" for reason in self.failures)


class SynthesisResult(_Strict):
    """What one `synthesize` call produced: the bundle (or None) and every attempt."""

    synthesizer: Annotated[str, Field(description="e.g. llm:openai/gpt-4o-mini or procedural")]
    seed_id: str
    action_variant: str
    sample_index: int = 0
    bundle_dir: Annotated[
        Path | None, Field(description="the accepted bundle; None when every attempt failed")
    ]
    attempts: list[SynthesisAttempt] = []
    output: Annotated[SynthesisOutput | None, Field(description="the accepted artifact JSON, if any")] = None

    @property
    def accepted(self) -> bool:
        """True when a bundle passed validation."""
        return self.bundle_dir is not None

    @property
    def prompt_tokens(self) -> int:
        """Prompt tokens over all attempts."""
        return sum(a.prompt_tokens for a in self.attempts)

    @property
    def completion_tokens(self) -> int:
        """Completion tokens over all attempts."""
        return sum(a.completion_tokens for a in self.attempts)

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens spent over all attempts (cache hits excluded)."""
        return self.prompt_tokens + self.completion_tokens

    @property
    def cached_tokens(self) -> int:
        """Prompt plus completion tokens of answers served from the cache (not spent)."""
        return sum(a.cached_prompt_tokens + a.cached_completion_tokens for a in self.attempts)


class Synthesizer(Protocol):
    """Materializes one selected action on one seed bundle."""

    def synthesize(
        self,
        seed_dir: Path,
        decision: Decision,
        *,
        out_dir: Path,
        sample_index: int = 0,
        validate: Validator | None = None,
    ) -> SynthesisResult:
        """Write the synthesized bundle to `out_dir` (replaced) if one is accepted.

        Args:
            seed_dir: the seed bundle (read only).
            decision: the selected action with its solver payload and skill nodes.
            out_dir: the bundle directory to create; left absent when nothing is accepted.
            sample_index: which sample of this (seed, action); varies the output deterministically.
            validate: returns failure reasons for a candidate bundle directory (empty = accept);
                None accepts any bundle that materializes.
        """
        ...
