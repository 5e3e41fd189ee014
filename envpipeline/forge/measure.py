"""Measured difficulty: each accepted bundle's pass rate under the seeds' policy and K.

The selector projects a rewrite's pass rate from its seed's (Eq. 1); after synthesis the bundle
is attempted by the same policy with the same K, so projection and measurement sit side by side
(`AcceptedBundle.measured_pass_rate`), and the measured pair becomes a `TransferObservation` that
calibrates the next round (`envpipeline.forge.ledger`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from envpipeline.forge.loop import AcceptedBundle
from envpipeline.models.selection import SeedPassRate
from envpipeline.select.calibration import TransferObservation

#: (task name, bundle folder) -> (the estimate, its rollout rows): `estimate_pass_rate` bound to a
#: policy, a sandbox and K.
Estimator = Callable[[str, Path], tuple[SeedPassRate, list[dict[str, Any]]]]


def measure_accepted(
    accepted: list[AcceptedBundle],
    estimate: Estimator,
    families: dict[str, str | None],
    policy_name: str,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[list[AcceptedBundle], list[dict[str, Any]], list[TransferObservation]]:
    """(bundles with `measured_pass_rate`, every rollout row, one observation per bundle).

    Args:
        accepted: the loop's accepted bundles (with their seed and projected pass rates).
        estimate: measures one bundle (the policy and K that measured the seeds).
        families: seed id -> its task family (None for imported seeds).
        policy_name: recorded with each observation.
        progress: called with (done, total) after each bundle.
    """
    measured: list[AcceptedBundle] = []
    rows: list[dict[str, Any]] = []
    observations: list[TransferObservation] = []
    for i, bundle in enumerate(accepted):
        rate, bundle_rows = estimate(bundle.task_name, Path(bundle.bundle_path))
        rows += [{**r, "measured_for": "accepted_bundle"} for r in bundle_rows]
        measured.append(bundle.model_copy(update={"measured_pass_rate": rate.pass_rate}))
        if bundle.seed_pass_rate is not None:
            projection, direction = bundle.action_variant.split("/", 1)
            observations.append(
                TransferObservation.model_validate(
                    {
                        "seed_id": bundle.seed_id,
                        "task_name": bundle.task_name,
                        "projection": projection,
                        "direction": direction,
                        "family": families.get(bundle.seed_id),
                        "seed_pass_rate": bundle.seed_pass_rate,
                        "measured_pass_rate": rate.pass_rate,
                        "projected_pass_rate": bundle.projected_pass_rate,
                        "rollouts": rate.rollouts,
                        "policy": policy_name,
                    }
                )
            )
        if progress is not None:
            progress(i + 1, len(accepted))
    return measured, rows, observations


def difficulty_summary(accepted: list[AcceptedBundle]) -> dict[str, dict[str, Any]]:
    """action variant -> {bundles, seed, projected, measured (means), mean_abs_error}: projected
    next to measured pass rates, over the measured bundles."""
    groups: dict[str, list[AcceptedBundle]] = {}
    for b in accepted:
        if b.measured_pass_rate is not None and b.projected_pass_rate is not None:
            groups.setdefault(b.action_variant, []).append(b)
    out = {}
    for variant, items in sorted(groups.items()):
        n = len(items)
        out[variant] = {
            "bundles": n,
            "seed": round(sum(b.seed_pass_rate or 0.0 for b in items) / n, 4),
            "projected": round(sum(b.projected_pass_rate or 0.0 for b in items) / n, 4),
            "measured": round(sum(b.measured_pass_rate or 0.0 for b in items) / n, 4),
            "mean_abs_error": round(
                sum(abs((b.projected_pass_rate or 0.0) - (b.measured_pass_rate or 0.0)) for b in items) / n, 4
            ),
        }
    return out
