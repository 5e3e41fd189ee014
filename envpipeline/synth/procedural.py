"""The procedural synthesizer: an action becomes knob moves of the seed's family (offline default).

It keeps the family, so the skill subgraph is preserved by construction, moves the knobs the
action names (see `envpipeline.forge.knobs`), regenerates instruction, fixtures, oracle, tests and
Dockerfile together from a derived seed, writes the bundle and validates it. A failed validation
is retried with the next derived seed, within `max_attempts`. It spends no tokens.
"""

from __future__ import annotations

import hashlib
import random
import shutil
from pathlib import Path

from envpipeline.errors import ConfigError
from envpipeline.forge.knobs import move_knobs
from envpipeline.forge.variants import procedural_origin
from envpipeline.models.selection import Decision, SynthesisOutput
from envpipeline.synth.base import SynthesisAttempt, SynthesisResult, Validator
from envpipeline.synth.prompts import artifact_edit_mask, solver_payload, target_difficulty
from envpipeline.terminal.bundle import read_bundle
from envpipeline.terminal.families.base import GeneratedTask, write_generated
from envpipeline.terminal.families.registry import get_family


def derived_seed(*parts: object) -> int:
    """A stable generator seed from the seed id, action and sample (no global state)."""
    return int(hashlib.sha256(":".join(map(str, parts)).encode()).hexdigest()[:8], 16)


def as_output(task: GeneratedTask, decision: Decision) -> SynthesisOutput:
    """The generated task in the synthesis output contract {task_name, instruction_md, files, metadata}."""
    files = {f"environment/{k}": v for k, v in task.environment.items()}
    files |= {f"tests/{k}": v for k, v in task.tests.items()}
    files |= {f"solution/{k}": v for k, v in task.solutions["oracle"].items()}
    return SynthesisOutput(
        task_name=task.name,
        instruction_md=task.instruction,
        files=files,
        metadata={
            "solver_payload": solver_payload(decision),
            "edit_mask": artifact_edit_mask(decision.projection).model_dump(),
            "target_difficulty": target_difficulty(decision.projected_pass_rate),
            "knobs": task.knobs,
            "family": task.family,
        },
    )


class ProceduralSynthesizer:
    """Synthesize by moving a family's knobs; implements the `Synthesizer` protocol."""

    name = "procedural"

    def __init__(self, max_attempts: int = 3) -> None:
        if max_attempts < 1:
            raise ConfigError("max_attempts must be at least 1")
        self.max_attempts = max_attempts

    def synthesize(
        self,
        seed_dir: Path,
        decision: Decision,
        *,
        out_dir: Path,
        sample_index: int = 0,
        validate: Validator | None = None,
    ) -> SynthesisResult:
        """Move knobs per the action, regenerate the bundle, validate; retry with new seeds."""
        origin = procedural_origin(seed_dir)
        if origin is None:
            raise ConfigError(
                f"{seed_dir} has no family provenance: use the LLM synthesizer for imported seeds"
            )
        family = get_family(origin["family"])
        rng = random.Random(f"{decision.seed_id}:{decision.action_variant}:{sample_index}")
        knobs = move_knobs(family, dict(origin["knobs"]), decision.projection, decision.direction, rng)
        difficulty = read_bundle(seed_dir).config.metadata.difficulty
        preset = difficulty if difficulty in ("easy", "medium", "hard") else "medium"
        result = SynthesisResult(
            synthesizer=self.name,
            seed_id=decision.seed_id,
            action_variant=decision.action_variant,
            sample_index=sample_index,
            bundle_dir=None,
        )
        for attempt in range(self.max_attempts):
            seed = derived_seed(decision.seed_id, decision.action_variant, sample_index, attempt)
            task = family.generate(seed, family.knob_model(**knobs), preset)
            staging = out_dir.with_name(out_dir.name + ".staging")
            shutil.rmtree(staging, ignore_errors=True)
            write_generated(task, staging)
            failures = validate(staging) if validate is not None else []
            record = SynthesisAttempt(index=attempt, kind="initial" if attempt == 0 else "repair")
            if failures:
                record.failure_stage = "validate"
                record.failures = failures
                result.attempts.append(record)
                shutil.rmtree(staging, ignore_errors=True)
                continue
            result.attempts.append(record)
            shutil.rmtree(out_dir, ignore_errors=True)
            staging.rename(out_dir)
            result.bundle_dir = out_dir
            result.output = as_output(task, decision)
            break
        return result
