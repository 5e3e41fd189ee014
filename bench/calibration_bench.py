"""Envs-FORGE difficulty bench: do rewrites move the measured pass rate, and does calibration help?

For every family that honours edge cases (``edge_case_axes`` declared; ``--families`` to choose)
and many seeds of the medium preset, the content-sensitive solver (``solver`` policy, K rollouts)
measures the seed's pass rate p and, after procedural synthesis of each of the four actions
(increase/reduce x in_depth/in_breadth), the rewrite's p'. The solver draws the same knowledge for
a seed and its rewrite (common random numbers), and the reward of one (instance, solution) pair is
executed once (the policy's cache; ``--reuse present`` also shares submissions that miss the same
present edge cases, by the family contract).

Printed:

* the share of (seed, action) pairs whose measured delta-p has the intended sign (increase < 0,
  reduce > 0; ties count as failures), overall and per action, and the share among the pairs that
  can move (an edge case was added or removed, and the seed's p is not already 0 for increase or
  1 for reduce);
* the mean |projected - measured| per action with the default prior, and with the calibrated prior
  fitted on a training half of the seeds and evaluated on the held-out half (goal: below half);
* per family, the spread of the seeds' pass rates at one knob setting (min/mean/max/sd).

Usage: python bench/calibration_bench.py [--seeds 24] [--rollouts 32] [--skill 0.7]
       [--families json-transform,...] [--reuse exact|present] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from envpipeline.models.selection import Decision, Direction, Projection
from envpipeline.policies.base import TerminalTarget
from envpipeline.policies.solver import ContentSensitiveSolver
from envpipeline.sandbox.base import Sandbox
from envpipeline.sandbox.detect import select_sandbox
from envpipeline.select.actions import SelectorConfig, prior_deltas, projected_pass_rate
from envpipeline.select.calibration import TransferObservation, calibrate
from envpipeline.synth.procedural import ProceduralSynthesizer
from envpipeline.terminal.families.registry import all_families
from envpipeline.terminal.seeds import materialize_seed

ACTIONS: list[tuple[Projection, Direction]] = [
    ("increase_complexity", "in_depth"),
    ("increase_complexity", "in_breadth"),
    ("reduce_complexity", "in_depth"),
    ("reduce_complexity", "in_breadth"),
]
PRIOR = SelectorConfig()


def pass_rate(policy: ContentSensitiveSolver, bundle: Path, sandbox: Sandbox, k: int) -> float:
    """Mean reward of K solver episodes on one bundle."""
    target = TerminalTarget(bundle_dir=bundle, sandbox=sandbox)
    return sum(policy.rollout(target, i).reward for i in range(k)) / k


def measure_seed(
    key: str, family: str, policy: ContentSensitiveSolver, sandbox: Sandbox, k: int, root: Path
) -> list[dict[str, Any]]:
    """One row per action: the seed's p, the rewrite's p', the default-prior projection."""
    seed_dir = Path(materialize_seed(key, root / "seeds")["bundle_path"])
    p = pass_rate(policy, seed_dir, sandbox, k)
    rows = []
    for projection, direction in ACTIONS:
        decision = Decision(
            seed_id=key,
            projection=projection,
            direction=direction,
            action_variant=f"{projection}/{direction}",
            pass_rate=p,
            reward_band="frontier",
            projected_pass_rate=projected_pass_rate(p, projection, direction, PRIOR),
            frontier_score=0.0,
            backend="enumerate",
        )
        out = root / "rewrites" / f"{key}--{projection}-{direction}"
        result = ProceduralSynthesizer().synthesize(seed_dir, decision, out_dir=out)
        if result.bundle_dir is None or result.output is None:
            raise RuntimeError(f"synthesis of {key} {decision.action_variant} failed: {result.attempts}")
        meta = result.output.metadata
        rows.append(
            {
                "seed_id": key,
                "family": family,
                "projection": projection,
                "direction": direction,
                "seed_pass_rate": p,
                "measured_pass_rate": pass_rate(policy, result.bundle_dir, sandbox, k),
                "prior_projection": decision.projected_pass_rate,
                "moved": (meta["edge_case_added"] or meta["edge_case_removed"]) is not None,
            }
        )
    return rows


def intended(row: dict[str, Any]) -> bool:
    delta = row["measured_pass_rate"] - row["seed_pass_rate"]
    return delta < 0 if row["projection"] == "increase_complexity" else delta > 0


def movable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pairs whose action changed the edge cases and whose seed p is not already at the bound the
    action heads for (increase from p = 0, reduce from p = 1 cannot move further)."""
    bound = {"increase_complexity": 0.0, "reduce_complexity": 1.0}
    return [r for r in rows if r["moved"] and r["seed_pass_rate"] != bound[r["projection"]]]


def share(rows: list[dict[str, Any]]) -> str:
    return (
        f"{sum(map(intended, rows))}/{len(rows)} = {sum(map(intended, rows)) / len(rows):.1%}"
        if rows
        else "-"
    )


def calibration_errors(rows: list[dict[str, Any]], seeds: list[str]) -> dict[str, tuple[float, float, int]]:
    """variant -> (mean |error| with the prior, with the calibrated prior, held-out pairs):
    calibrated on the even-numbered seeds of each family, evaluated on the odd ones."""
    train_ids = {s for s in seeds if int(s.rsplit("-", 1)[1]) % 2 == 0}
    train = [TransferObservation(**_obs(r)) for r in rows if r["seed_id"] in train_ids]
    config = SelectorConfig(calibration=calibrate(train, prior_deltas(PRIOR)))
    out = {}
    for projection, direction in ACTIONS:
        held = [
            r
            for r in rows
            if r["seed_id"] not in train_ids and (r["projection"], r["direction"]) == (projection, direction)
        ]
        before = [abs(r["prior_projection"] - r["measured_pass_rate"]) for r in held]
        after = [
            abs(
                projected_pass_rate(r["seed_pass_rate"], projection, direction, config, r["family"])
                - r["measured_pass_rate"]
            )
            for r in held
        ]
        out[f"{projection}/{direction}"] = (statistics.fmean(before), statistics.fmean(after), len(held))
    return out


def _obs(row: dict[str, Any]) -> dict[str, Any]:
    keys = ("seed_id", "family", "projection", "direction", "seed_pass_rate", "measured_pass_rate")
    return {k: row[k] for k in keys}


def report(rows: list[dict[str, Any]], seeds: list[str]) -> dict[str, Any]:
    """Print the figures; returns them as data."""
    print(f"\n(seed, action) pairs with the intended sign of delta-p: {share(rows)}")
    print(
        f"  among pairs that can move (edge case added/removed, p not at that bound): {share(movable(rows))}"
    )
    for projection, direction in ACTIONS:
        mine = [r for r in rows if (r["projection"], r["direction"]) == (projection, direction)]
        mean_delta = statistics.fmean(r["measured_pass_rate"] - r["seed_pass_rate"] for r in mine)
        print(f"  {projection}/{direction}: {share(mine)}, mean delta-p {mean_delta:+.3f}")
    errors = calibration_errors(rows, seeds)
    print("\nmean |projected - measured| on the held-out half (prior -> calibrated, ratio):")
    for variant, (before, after, n) in errors.items():
        print(
            f"  {variant}: {before:.3f} -> {after:.3f} ({after / before if before else float('nan'):.2f}, n={n})"
        )
    all_before = statistics.fmean(b for b, _, _ in errors.values())
    all_after = statistics.fmean(a for _, a, _ in errors.values())
    print(f"  mean over actions: {all_before:.3f} -> {all_after:.3f} (ratio {all_after / all_before:.2f})")
    print("\nseed pass rates at one knob setting (medium preset), per family: min / mean / max / sd")
    spread = {}
    for family in sorted({r["family"] for r in rows}):
        rates = list({r["seed_id"]: r["seed_pass_rate"] for r in rows if r["family"] == family}.values())
        spread[family] = (min(rates), statistics.fmean(rates), max(rates), statistics.pstdev(rates))
        print(
            f"  {family}: {spread[family][0]:.3f} / {spread[family][1]:.3f} / {spread[family][2]:.3f} / {spread[family][3]:.3f}"
        )
    return {"sign_share": sum(map(intended, rows)) / len(rows), "errors": errors, "spread": spread}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seeds", type=int, default=24, help="seeds per family (medium preset)")
    parser.add_argument("--rollouts", type=int, default=32, help="K episodes per pass rate")
    parser.add_argument("--skill", type=float, default=0.7)
    parser.add_argument("--give-up", type=float, default=0.05)
    parser.add_argument("--families", default="", help="comma-separated (default: those with edge_case_axes)")
    parser.add_argument("--reuse", choices=("exact", "present"), default="exact")
    parser.add_argument("--sandbox", default="local")
    parser.add_argument("--json", type=Path, default=None, help="write every measured pair here")
    args = parser.parse_args()
    families = [f for f in args.families.split(",") if f] or sorted(
        name for name, family in all_families().items() if family.edge_case_axes
    )
    policy = ContentSensitiveSolver(skill=args.skill, give_up=args.give_up, reuse=args.reuse)
    sandbox = select_sandbox(args.sandbox)
    print(f"families: {', '.join(families)}; {args.seeds} seeds each, K={args.rollouts}, skill {args.skill}")
    rows: list[dict[str, Any]] = []
    seeds: list[str] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="calibration-bench-") as tmp:
        for family in families:
            for i in range(args.seeds):
                key = f"fam-{family}-medium-{i}"
                seeds.append(key)
                rows += measure_seed(key, family, policy, sandbox, args.rollouts, Path(tmp))
            print(f"  {family}: done ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    figures = report(rows, seeds)
    print(f"\n{len(rows)} pairs in {time.perf_counter() - started:.0f} s")
    if args.json is not None:
        args.json.write_text(json.dumps({"rows": rows, "figures": figures}, indent=1, default=str))


if __name__ == "__main__":
    main()
