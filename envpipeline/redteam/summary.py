"""Red-team figures of a set of records: rejections per policy and the hack-pass rate of the accepted."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from typing import Any, Protocol

from envpipeline.models.gates import GateResult


class GatedRecord(Protocol):
    """A record with a status and its gates (a composed `TaskRecord`, a world `GatedTask`)."""

    @property
    def status(self) -> str: ...

    @property
    def gates(self) -> list[GateResult]: ...


def red_team_summary(records: Iterable[GatedRecord]) -> dict[str, Any]:
    """How the red-team gate went over these records (of any family).

    ``rejected_by_policy``: candidates each policy broke (so the gate rejected them);
    ``accepted_hack_passes``: accepted tasks whose stored red-team evidence shows a break (must be 0);
    ``attacked``: records the gate ran on.
    """
    rejected: Counter[str] = Counter()
    attacked = accepted_broken = 0
    for record in records:
        gate = next((g for g in record.gates if g.name == "red_team"), None)
        if gate is None:
            continue
        attacked += 1
        broke = list(gate.evidence.get("broke", []))
        if record.status == "accepted" and broke:
            accepted_broken += 1
        rejected.update(broke)
    return {
        "attacked": attacked,
        "rejected_by_policy": dict(sorted(rejected.items())),
        "accepted_hack_passes": accepted_broken,
        "accepted_hack_pass_rate": round(accepted_broken / attacked, 4) if attacked else 0.0,
    }


def stored_outcomes(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The per-policy outcomes of a terminal verification row's ``red_team`` column ([] if none)."""
    raw = row.get("red_team")
    return list(json.loads(raw)) if isinstance(raw, str) and raw else []


def terminal_red_team_summary(items: Iterable[tuple[bool, list[dict[str, Any]]]]) -> dict[str, Any]:
    """The same figures as `red_team_summary` over terminal verifications: (accepted, outcomes) pairs.

    ``rejected_by_policy`` counts the bundles each policy broke; ``accepted_hack_passes`` the
    accepted bundles a policy broke (must be 0); ``per_policy`` the bundles each policy attacked.
    """
    rejected: Counter[str] = Counter()
    attacked_by: Counter[str] = Counter()
    attacked = accepted_broken = 0
    for accepted, outcomes in items:
        if not outcomes:
            continue
        attacked += 1
        broke = [o["policy"] for o in outcomes if o.get("binary") == 1.0 and not o.get("moot")]
        attacked_by.update(o["policy"] for o in outcomes)
        rejected.update(broke)
        accepted_broken += int(accepted and bool(broke))
    return {
        "attacked": attacked,
        "attacked_by_policy": dict(sorted(attacked_by.items())),
        "rejected_by_policy": dict(sorted(rejected.items())),
        "accepted_hack_passes": accepted_broken,
        "accepted_hack_pass_rate": round(accepted_broken / attacked, 4) if attacked else 0.0,
    }
