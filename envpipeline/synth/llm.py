"""`LLMSynthesizer`: solver-conditioned bundle synthesis through the shared LLM client, with repairs.

One call generates the artifact JSON from the Envs-FORGE prompt (appendix C.2); the answer is parsed
and validated with pydantic, materialized in a staging folder, and checked by the caller's
validator. A failed attempt triggers a repair call (C.1 repair prompt) carrying its failure
summary, at most `max_repairs` times. Before the validator runs, the acceptance gates of
`envpipeline.synth.gates` reject a rewrite that drops the seed's required skill nodes, repeats an
accepted bundle (same files or a near-duplicate instruction; the ledger spans this synthesizer's
calls and any lake bundles added to it) or whose tests check a literal nothing states. Answers
served from the LLM cache are counted as cached tokens, not spent ones. Only an accepted bundle
reaches `out_dir`.
"""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path
from typing import Any

from envpipeline.errors import ConfigError
from envpipeline.llm.client import LLMResponse
from envpipeline.llm.protocol import LLM
from envpipeline.models.selection import Decision, SynthesisOutput
from envpipeline.synth.artifact import materialize_output, parse_output, static_check_failures
from envpipeline.synth.base import SynthesisAttempt, SynthesisResult, Validator
from envpipeline.synth.gates import (
    AcceptanceLedger,
    bundle_text_files,
    hidden_literal_failures,
    skill_failures,
)
from envpipeline.synth.prompts import (
    recipe_messages,
    recipe_repair_messages,
    skill_subgraph,
    solver_payload,
    target_difficulty,
)
from envpipeline.terminal.bundle import BundleFormatError, load_task_config

GENERATOR_VERSION = "1"
JSON_MODE = {"type": "json_object"}


class LLMSynthesizer:
    """Envs-FORGE's LLM synthesizer (implements `envpipeline.synth.base.Synthesizer`)."""

    def __init__(
        self,
        client: LLM,
        *,
        model: str,
        max_repairs: int = 2,
        json_mode: bool = True,
        ledger: AcceptanceLedger | None = None,
    ) -> None:
        """Args:
        client: the shared LLM (its usage totals include these calls); `LLMClient` or `ScriptedLLM`.
        model: the model's name, part of the prompt and recorded in the name and provenance.
        max_repairs: repair calls allowed after the initial generation.
        json_mode: ask the endpoint for a JSON object (`response_format`); the answer is
            validated either way.
        ledger: the bundles a new one must not duplicate; accepted bundles are added to it.
            Defaults to an empty one (this run); add the lake's bundles with `add_bundles`.
        """
        if max_repairs < 0:
            raise ConfigError(f"max_repairs must be >= 0, got {max_repairs}")
        self.client = client
        self.model = model
        self.max_repairs = max_repairs
        self.response_format = JSON_MODE if json_mode else None
        self.ledger = ledger if ledger is not None else AcceptanceLedger()

    @property
    def name(self) -> str:
        """The synthesizer label recorded in results and provenance."""
        return f"llm:{self.model}"

    def synthesize(
        self,
        seed_dir: Path,
        decision: Decision,
        *,
        out_dir: Path,
        sample_index: int = 0,
        validate: Validator | None = None,
    ) -> SynthesisResult:
        """Generate, validate and repair one bundle for `decision` on the seed at `seed_dir`.

        Args:
            seed_dir: the seed bundle (read only).
            decision: the selected action.
            out_dir: where the accepted bundle is written (an existing folder is replaced).
            sample_index: sample number, part of the prompt (distinct samples, distinct cache keys).
            validate: failure reasons for a candidate bundle (static checks + gold verification);
                defaults to the static checks alone.

        Returns:
            The result with every attempt; `bundle_dir` is None when all attempts failed.

        Raises:
            LLMError: the endpoint failed after the client's retries (not a rejected candidate).
        """
        seed_dir, out_dir = Path(seed_dir), Path(out_dir)
        check = validate or static_check_failures
        model = self.model
        attempts: list[SynthesisAttempt] = []
        messages = recipe_messages(seed_dir, decision, sample_index=sample_index, model=model)
        for index in range(self.max_repairs + 1):
            response = self.client.complete(messages, response_format=self.response_format)
            attempt, output = self._attempt(index, response, seed_dir, decision, out_dir, sample_index, check)
            attempts.append(attempt)
            if attempt.passed:
                return self._result(decision, sample_index, out_dir, attempts, output)
            messages = recipe_repair_messages(
                seed_dir,
                decision,
                sample_index=sample_index,
                model=model,
                repair_index=index + 1,
                failure_summary=attempt.failure_summary,
                previous_artifact=response.content or "",
            )
        return self._result(decision, sample_index, None, attempts, None)

    def _attempt(
        self,
        index: int,
        response: LLMResponse,
        seed_dir: Path,
        decision: Decision,
        out_dir: Path,
        sample_index: int,
        check: Validator,
    ) -> tuple[SynthesisAttempt, SynthesisOutput | None]:
        """Parse, materialize in staging and validate one answer; move it to `out_dir` if accepted."""
        spent = not response.cached
        base = {
            "index": index,
            "kind": "initial" if index == 0 else "repair",
            "prompt_tokens": response.prompt_tokens if spent else 0,
            "completion_tokens": response.completion_tokens if spent else 0,
            "cached_prompt_tokens": 0 if spent else response.prompt_tokens,
            "cached_completion_tokens": 0 if spent else response.completion_tokens,
            "cost_usd": response.cost_usd if spent else None,
            "cached": response.cached,
            "latency_sec": response.latency_sec,
        }
        output, stage, failures = parse_output(response.content)
        if output is None:
            return SynthesisAttempt(**base, failure_stage=stage, failures=failures), None
        output = self._with_payload(output, decision)
        # same folder name as the final bundle, so the validator sees the name it will have
        holder = out_dir.parent / f".staging-{out_dir.name}-{index}"
        staging = holder / out_dir.name
        _remove(holder)
        provenance = self._provenance(seed_dir, decision, sample_index, index, output)
        difficulty = target_difficulty(decision.projected_pass_rate)
        try:
            nodes = output.metadata.get("skill_nodes")
            tags = [str(n) for n in nodes] if isinstance(nodes, list) else []
            if failures := materialize_output(
                output, staging, provenance=provenance, difficulty=difficulty, tags=tags
            ):
                return SynthesisAttempt(**base, failure_stage="materialize", failures=failures), None
            files = bundle_text_files(staging)
            if failures := self._gate_failures(staging, files, output, decision):
                return SynthesisAttempt(**base, failure_stage="gate", failures=failures), None
            if failures := list(check(staging)):
                return SynthesisAttempt(**base, failure_stage="validate", failures=failures), None
            _remove(out_dir)
            staging.rename(out_dir)
            self.ledger.add(out_dir.name, files)
        finally:
            _remove(holder)
        return SynthesisAttempt(**base), output

    def _gate_failures(
        self, staging: Path, files: dict[str, str], output: SynthesisOutput, decision: Decision
    ) -> list[str]:
        """Skill-preservation, duplicate and hidden-literal reasons (empty: go on to validation).

        A fixed recipe's prompt carries no skill subgraph, so only milp decisions are held to it."""
        subgraph = skill_subgraph(decision)
        preserved = [n for n in subgraph.preserve_nodes if n not in subgraph.allowed_removed_nodes]
        required = preserved if decision.recipe == "milp" else []
        return [
            *skill_failures(required, _declared_nodes(staging, output)),
            *self.ledger.duplicate_failures(files),
            *hidden_literal_failures(files),
        ]

    def _with_payload(self, output: SynthesisOutput, decision: Decision) -> SynthesisOutput:
        """The output with the true solver payload and target difficulty in its metadata."""
        metadata = {
            **output.metadata,
            "solver_payload": solver_payload(decision),
            "target_difficulty": target_difficulty(decision.projected_pass_rate),
        }
        return output.model_copy(update={"metadata": metadata})

    def _provenance(
        self, seed_dir: Path, decision: Decision, sample_index: int, attempt: int, output: SynthesisOutput
    ) -> dict[str, Any]:
        summary = output.metadata.get("projection_summary")
        return {
            "generator": "envs-forge-llm",
            "generator_version": GENERATOR_VERSION,
            "model": self.model,
            "parent": seed_dir.name,
            "seed_id": decision.seed_id,
            "action_variant": decision.action_variant,
            "sample_index": sample_index,
            "attempt": attempt,
            "task_name": output.task_name,
            "solver_payload": solver_payload(decision),
            "projection_summary": summary if isinstance(summary, str) else None,
            "skill_nodes": [str(n) for n in nodes]
            if isinstance(nodes := output.metadata.get("skill_nodes"), list)
            else None,
        }

    def _result(
        self,
        decision: Decision,
        sample_index: int,
        bundle_dir: Path | None,
        attempts: list[SynthesisAttempt],
        output: SynthesisOutput | None,
    ) -> SynthesisResult:
        return SynthesisResult(
            synthesizer=self.name,
            seed_id=decision.seed_id,
            action_variant=decision.action_variant,
            sample_index=sample_index,
            bundle_dir=bundle_dir,
            attempts=attempts,
            output=output,
        )


def _declared_nodes(bundle_dir: Path, output: SynthesisOutput) -> list[str]:
    """The skill nodes a bundle declares: its artifact's metadata.skill_nodes and task.toml tags."""
    nodes = output.metadata.get("skill_nodes")
    declared = [str(n) for n in nodes] if isinstance(nodes, list) else []
    with contextlib.suppress(BundleFormatError):
        declared += load_task_config(bundle_dir / "task.toml").metadata.tags
    return declared


def _remove(path: Path) -> None:
    """Delete a folder (or file) if present, never following links out of it."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)
