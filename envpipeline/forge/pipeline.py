"""The whole Envs-FORGE run: seeds -> pass rates -> MILP decisions -> synthesis -> gold-verified
export -> measured pass rates of the accepted bundles (appended to the transfer ledger, which
calibrates the next run's selector)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from envpipeline.forge.ledger import (
    LEDGER_NAME,
    append_ledger,
    calibrated_config,
    calibration_summary,
    read_ledger,
)
from envpipeline.forge.loop import ForgeBudget, gold_validator, run_forge
from envpipeline.forge.measure import difficulty_summary, measure_accepted
from envpipeline.forge.passrates import as_policy, estimate_pass_rate, seed_skills
from envpipeline.forge.policy import ScriptedTerminalPolicy
from envpipeline.forge.recipes import get_recipe, recipe_decisions
from envpipeline.forge.variants import procedural_origin
from envpipeline.models.selection import SeedPassRate
from envpipeline.policies.base import Policy
from envpipeline.sandbox.base import Sandbox
from envpipeline.select.skills import seed_optional_nodes
from envpipeline.synth.base import Synthesizer
from envpipeline.terminal.seeds import materialize_seed


def forge_run(
    seed_keys: list[str],
    out: Path,
    sandbox: Sandbox,
    synthesizer: Synthesizer,
    *,
    target: int = 100,
    policy: Policy | ScriptedTerminalPolicy | None = None,
    rollouts: int = 4,
    backend: str = "scip",
    budget: ForgeBudget | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    recorded: list[SeedPassRate] | None = None,
    seeds_folder: Path | None = None,
    mode: str = "portfolio",
    recipe: str = "milp",
    ledger: Path | None = None,
) -> dict[str, Any]:
    """Run every stage and write bundles plus JSON/JSONL records under `out`; returns the summary.

    With `recorded` pass rates (from a rollouts table) the policy is not run and the seeds are
    the table's seeds (a seed the table gives no skills gets its bundle's, see `seed_skills`);
    otherwise `policy` (default: the scripted kind) plays K rollouts per seed. Keys that are not
    procedural name bundles of `seeds_folder` (Harbor or TB1 folders, imported like ``bundle
    import``); one that cannot be imported or has no ``solution/solve.sh`` is left out and listed
    under ``skipped_seeds`` with the reason.
    `mode` is the selector's: ``portfolio`` (default, the paper's recorded run: indexed form with
    coverage rows, N = |S|, xi <= 0.2) or ``local`` (one MILP per seed, no coverage). `recipe`
    names how decisions are made (`envpipeline.forge.recipes`): the MILP, or a fixed baseline.

    The selector's transfer is calibrated on the `ledger` (default ``out/transfer_ledger.jsonl``)
    of earlier runs; each accepted bundle's pass rate is then measured with the same policy and K
    (``measured_pass_rate`` next to ``projected_pass_rate`` in report.json) and appended to it. With
    `recorded` pass rates or a recorded policy the rewrites have no recorded rollouts, so nothing
    is measured.
    """
    spec = get_recipe(recipe)
    if recorded is not None:
        seed_keys = [r.seed_id for r in recorded]
    policy = as_policy(policy)
    notify = progress or (lambda stage, done, total: None)
    seeds_root = out / "seeds"
    seed_dirs: dict[str, Path] = {}
    skipped: dict[str, str] = {}
    for i, key in enumerate(seed_keys):
        info = materialize_seed(key, seeds_root, seeds_folder)
        folder = Path(info["bundle_path"])
        if info["import_status"] == "failed":
            skipped[key] = info["import_error"]
        elif not (folder / "solution" / "solve.sh").is_file():
            skipped[key] = "no solution/solve.sh: no oracle to score or synthesize from"
        else:
            seed_dirs[key] = folder
        notify("seeds", i + 1, len(seed_keys))
    rates, rollout_rows = [_with_skills(r, seed_dirs.get(r.seed_id)) for r in recorded or []], []
    for i, (key, folder) in enumerate(seed_dirs.items() if recorded is None else []):
        rate, rows = estimate_pass_rate(key, folder, policy, sandbox, k=rollouts)
        rates.append(rate.model_copy(update={"family": _family(folder)}))
        rollout_rows += rows
        notify("pass rates", i + 1, len(seed_dirs))
    ledger = ledger or out / LEDGER_NAME
    config = calibrated_config(read_ledger(ledger))
    decisions, trace = recipe_decisions(rates, spec.name, mode=mode, backend=backend, config=config)
    _write_jsonl(out / "rollouts.jsonl", rollout_rows)
    _write_jsonl(out / "pass_rates.jsonl", [r.model_dump() for r in rates])
    _write_jsonl(out / "decisions.jsonl", [d.model_dump() for d in decisions])
    (out / "trace.json").write_text(trace.model_dump_json(indent=2))
    report = run_forge(
        decisions,
        seed_dirs,
        synthesizer,
        gold_validator(sandbox),
        target,
        out / "bundles",
        budget,
        on_progress=lambda r: notify("accepted", len(r.accepted), target),
        grow_pool=spec.pool,
    )
    if recorded is None and policy.kind != "recorded" and report.accepted:
        families = {key: _family(folder) for key, folder in seed_dirs.items()}
        report.accepted, measured_rows, observations = measure_accepted(
            report.accepted,
            lambda name, folder: estimate_pass_rate(name, folder, policy, sandbox, k=rollouts),
            families,
            policy.name,
            lambda done, total: notify("measured", done, total),
        )
        _write_jsonl(out / "measured_rollouts.jsonl", measured_rows)
        append_ledger(ledger, observations)
    summary = {
        **report.summary(),
        "seeds": len(seed_dirs),
        "skipped_seeds": skipped,
        "rollouts": len(rollout_rows),
        "policy": policy.name if recorded is None else "recorded",
        "mean_pass_rate": round(sum(r.pass_rate for r in rates) / len(rates), 4) if rates else None,
        "selector": {
            "backend": trace.backend,
            "status": trace.status,
            "objective": trace.objective,
            "fallback_reason": trace.fallback_reason,
            "time_limit": trace.solver.time_limit if trace.solver else None,
        },
        "recipe": spec.name,
        "mode": trace.formulation,
        "n_coverage_targets": trace.n_coverage_targets,
        "actions": _count(d.action_variant for d in decisions),
        "difficulty": difficulty_summary(report.accepted),
        "calibration": calibration_summary(config),
        "ledger": str(ledger),
        "sandbox": sandbox.backend,
        "out": str(out),
    }
    (out / "report.json").write_text(
        json.dumps(
            {**summary, "accepted_bundles": [a.model_dump() for a in report.accepted]},
            indent=2,
            sort_keys=True,
        )
    )
    return summary


def _family(folder: Path) -> str | None:
    origin = procedural_origin(folder)
    return str(origin["family"]) if origin else None


def _with_skills(rate: SeedPassRate, folder: Path | None) -> SeedPassRate:
    """A recorded pass rate with its bundle's skills when the table gives none, and the required
    nodes' taxonomy neighbours as optional nodes when it gives no optional ones."""
    required = rate.required_skills or (seed_skills(folder)[0] if folder is not None else [])
    optional = rate.optional_skills or seed_optional_nodes(required)
    return rate.model_copy(update={"required_skills": required, "optional_skills": optional})


def _count(items: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    return dict(sorted(counts.items()))


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, sort_keys=True, default=str) + "\n" for r in rows))
