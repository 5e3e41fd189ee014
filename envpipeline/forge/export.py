"""Exactly N exported bundles from bundles accepted elsewhere (the per-seed Dagster assets).

The accepted bundles are taken round-robin over action variants (`interleave`); more than N are
trimmed to the first N of that order, fewer are topped up by the acceptance loop (`run_forge`)
over the selector's decisions with the caller's gold validator and a bounded attempt budget.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from envpipeline.forge.loop import AcceptedBundle, ForgeBudget, ForgeReport, interleave, run_forge
from envpipeline.models.selection import Decision
from envpipeline.synth.base import Synthesizer


def export_exactly(
    accepted: list[AcceptedBundle],
    target: int,
    out_dir: Path,
    *,
    decisions: list[Decision],
    seed_dirs: dict[str, Path],
    synthesizer: Synthesizer,
    validate: Callable[[Path], list[str]],
    budget: ForgeBudget | None = None,
    first_sample: int = 0,
) -> tuple[list[AcceptedBundle], ForgeReport | None]:
    """Fill `out_dir` (replaced) with exactly `target` bundles when the budget allows.

    Returns the exported bundles (copies of the kept ones, then the top-ups) and the top-up loop's
    report (None when nothing was missing or there were no decisions to synthesize from).
    """
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir(parents=True)
    kept = []
    for bundle in interleave(accepted)[:target]:
        copy = out_dir / Path(bundle.bundle_path).name
        shutil.copytree(bundle.bundle_path, copy)
        kept.append(bundle.model_copy(update={"task_name": copy.name, "bundle_path": str(copy)}))
    missing = target - len(kept)
    if missing <= 0 or not decisions:
        return kept, None
    report = run_forge(
        decisions, seed_dirs, synthesizer, validate, missing, out_dir, budget, first_sample=first_sample
    )
    return kept + report.accepted, report
