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


class RedTeamTally:
    """`red_team_summary` one record at a time (a run that streams its records keeps only counts)."""

    def __init__(self) -> None:
        self.rejected: Counter[str] = Counter()
        self.attacked = 0
        self.accepted_broken = 0

    def add(self, record: GatedRecord) -> None:
        """Count one record's red-team gate (a record the gate did not run on counts nowhere)."""
        gate = next((g for g in record.gates if g.name == "red_team"), None)
        if gate is None:
            return
        self.attacked += 1
        broke = list(gate.evidence.get("broke", []))
        if record.status == "accepted" and broke:
            self.accepted_broken += 1
        self.rejected.update(broke)

    def summary(self) -> dict[str, Any]:
        """The figures `red_team_summary` gives for the records added."""
        return {
            "attacked": self.attacked,
            "rejected_by_policy": dict(sorted(self.rejected.items())),
            "accepted_hack_passes": self.accepted_broken,
            "accepted_hack_pass_rate": round(self.accepted_broken / self.attacked, 4)
            if self.attacked
            else 0.0,
        }


def red_team_summary(records: Iterable[GatedRecord]) -> dict[str, Any]:
    """How the red-team gate went over these records (of any family).

    ``rejected_by_policy``: candidates each policy broke (so the gate rejected them);
    ``accepted_hack_passes``: accepted tasks whose stored red-team evidence shows a break (must be 0);
    ``attacked``: records the gate ran on.
    """
    tally = RedTeamTally()
    for record in records:
        tally.add(record)
    return tally.summary()


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


def fold_outcomes(attacks: Iterable[tuple[str, list[Any]]]) -> dict[str, Any]:
    """Fold (task id, policy outcomes) pairs into a suite report's per-policy figures
    (attacked, broke, mean checklist) and the ids of the tasks some policy broke."""
    per_policy: dict[str, dict[str, float]] = {}
    broken: list[str] = []
    for task_id, outcomes in attacks:
        for outcome in outcomes:
            entry = per_policy.setdefault(outcome.policy, {"attacked": 0, "broke": 0, "checklist": 0.0})
            entry["attacked"] += 1
            entry["broke"] += int(outcome.broke)
            entry["checklist"] += outcome.checklist
        if any(o.broke for o in outcomes):
            broken.append(task_id)
    for entry in per_policy.values():
        entry["mean_checklist"] = round(entry.pop("checklist") / entry["attacked"], 4)
    return {"policies": dict(sorted(per_policy.items())), "broken_accepted_tasks": broken}


def red_team_gate_result(outcomes: list[Any]) -> GateResult:
    """The red_team gate over one task's policy outcomes: it fails when any policy broke the task."""
    broke = [o.policy for o in outcomes if o.broke]
    return GateResult(
        name="red_team",
        passed=not broke,
        reason=f"broken by {', '.join(broke)}" if broke else "",
        evidence={"policies": {o.policy: o.model_dump(exclude={"policy"}) for o in outcomes}, "broke": broke},
    )
