"""Offline terminal policies: scripted agents of configurable skill scored by the real verifier.

A rollout picks what the agent submits — the oracle, one of the family's partial solution
variants (nearly right, missing an edge case) or nothing — and the bundle's own tests score it in
a sandbox. The chance of a full solution falls with the bundle's knob difficulty d in [0, 1]:
``p_full = skill ** (1 + 2 d)``; otherwise the agent submits a partial variant (or nothing when a
bundle has none, and with probability `give_up` anyway). Pass rates are therefore measured from
executions, never computed from the formula.
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from envpipeline.forge.knobs import difficulty_of
from envpipeline.forge.variants import procedural_origin, solution_variants, write_solution
from envpipeline.sandbox.base import Limits, Sandbox
from envpipeline.terminal.bundle import read_bundle
from envpipeline.terminal.families.registry import all_families
from envpipeline.terminal.verify import run_trial


class ScriptedTerminalPolicy(BaseModel):
    """A scripted terminal agent of configurable skill."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(default="scripted-v1", description="policy name recorded with every rollout")
    skill: float = Field(
        default=0.7, ge=0.0, le=1.0, description="chance of a full solution on the easiest bundle"
    )
    give_up: float = Field(
        default=0.15, ge=0.0, le=1.0, description="chance of submitting nothing when failing"
    )
    seed: int = Field(default=0, description="rollout randomness")

    def full_solution_probability(self, difficulty: float) -> float:
        """p_full = skill ** (1 + 2 d)."""
        return self.skill ** (1.0 + 2.0 * difficulty)

    def rollout(
        self, bundle_dir: Path, sandbox: Sandbox, index: int, limits: Limits | None = None
    ) -> dict[str, Any]:
        """One episode on a bundle: choose a submission, run it, score it with the bundle's tests."""
        bundle = read_bundle(bundle_dir)
        origin = procedural_origin(bundle_dir)
        difficulty = difficulty_of(all_families()[origin["family"]], origin["knobs"]) if origin else 0.5
        rng = random.Random(f"{self.name}:{self.seed}:{bundle.name}:{index}")
        partials = solution_variants(bundle_dir)
        if rng.random() < self.full_solution_probability(difficulty):
            choice = "oracle"
        elif partials and rng.random() >= self.give_up:
            choice = rng.choice(sorted(partials))
        else:
            choice = "nop"
        with tempfile.TemporaryDirectory(prefix="envpipeline-rollout-") as tmp:
            solution = (
                None if choice in ("oracle", "nop") else write_solution(partials[choice], Path(tmp) / choice)
            )
            trial = run_trial(sandbox, bundle, choice, limits or Limits(), solution_dir=solution)
        return {
            "rollout": index,
            "policy": self.name,
            "skill": self.skill,
            "submission": choice,
            "difficulty": round(difficulty, 4),
            "reward": trial.reward if trial.reward is not None else 0.0,
            "verdict": trial.verdict,
            "backend": trial.backend,
            "seconds": round(trial.durations.get("total", 0.0), 4),
        }
