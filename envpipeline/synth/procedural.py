"""The procedural synthesizer: an action becomes knob moves of the seed's family (offline default).

It keeps the family, so the skill subgraph is preserved by construction, moves the knobs the
action names (see `envpipeline.forge.knobs`) and the edge cases with them (`move_edge_cases`),
regenerates instruction, fixtures, oracle, tests and Dockerfile together from a derived seed,
writes the bundle and validates it. A failed validation is retried with the next derived seed,
within `max_attempts`. It spends no tokens.

Edge cases are what a partial solver misses, so they carry the difficulty a rewrite moves. The
rewrite starts from the seed's own set (``edge_cases`` in its task.toml; drawn again from the
seed's generator seed and knobs for a bundle written before that was recorded):

================  ==========================================================================
increase          keeps them and adds one absent edge case of the action's axis (in_depth ->
                  ``depth``, in_breadth -> ``breadth``; of the other axis when none is absent)
reduce            removes one present edge case of the action's axis (other axis if none)
diversify         keeps the set
================  ==========================================================================

The added or removed edge case is recorded in the output metadata (``edge_case_added`` /
``edge_case_removed``) and the new set in the bundle's task.toml.
"""

from __future__ import annotations

import hashlib
import random
import shutil
from pathlib import Path
from typing import Any

from envpipeline.errors import ConfigError
from envpipeline.forge.knobs import move_knobs
from envpipeline.forge.variants import procedural_origin
from envpipeline.models.selection import Decision, Direction, Projection, SynthesisOutput
from envpipeline.synth.base import SynthesisAttempt, SynthesisResult, Validator
from envpipeline.synth.prompts import artifact_edit_mask, solver_payload, target_difficulty
from envpipeline.terminal.bundle import read_bundle
from envpipeline.terminal.families.base import GeneratedTask, TaskFamily, write_generated
from envpipeline.terminal.families.registry import get_family


def derived_seed(*parts: object) -> int:
    """A stable generator seed from the seed id, action and sample (no global state)."""
    return int(hashlib.sha256(":".join(map(str, parts)).encode()).hexdigest()[:8], 16)


def seed_edge_cases(family: TaskFamily[Any], origin: dict[str, Any]) -> frozenset[str]:
    """The edge cases a seed bundle contains: its recorded ``edge_cases``, else the ones its
    generator seed and knobs draw (bundles written before the set was recorded)."""
    recorded = origin.get("edge_cases")
    if recorded is not None:
        return frozenset(str(v) for v in recorded) & frozenset(family.variants)
    return family.draw_edge_cases(int(origin["seed"]), dict(origin["knobs"]))


def move_edge_cases(
    family: TaskFamily[Any],
    present: frozenset[str],
    projection: Projection,
    direction: Direction,
    rng: random.Random,
) -> tuple[frozenset[str], str | None, str | None]:
    """(edge cases after the action, the one added, the one removed); see the module docstring.

    An edge case whose family declares no axis belongs to neither axis (so only the "other axis"
    fallback reaches it). Nothing is added when every edge case is present, nothing removed when
    none is.
    """
    if projection == "diversify_frontier":
        return present, None, None
    axis = "depth" if direction == "in_depth" else "breadth"
    adding = projection == "increase_complexity"
    pool = sorted(set(family.variants) - present if adding else present)
    own = [v for v in pool if family.edge_case_axes.get(v) == axis]
    choices = own or pool
    if not choices:
        return present, None, None
    picked = rng.choice(choices)
    if adding:
        return present | {picked}, picked, None
    return present - {picked}, None, picked


def as_output(
    task: GeneratedTask, decision: Decision, moved: tuple[str | None, str | None] = (None, None)
) -> SynthesisOutput:
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
            "edge_cases": list(task.edge_cases),
            "edge_case_added": moved[0],
            "edge_case_removed": moved[1],
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
        edge_cases, added, removed = move_edge_cases(
            family, seed_edge_cases(family, origin), decision.projection, decision.direction, rng
        )
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
            task = family.generate(seed, family.knob_model(**knobs), preset, edge_cases=edge_cases)
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
            result.output = as_output(task, decision, (added, removed))
            break
        return result
