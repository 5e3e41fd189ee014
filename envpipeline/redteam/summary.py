"""Red-team figures of a set of records: rejections per policy and the hack-pass rate of the accepted."""

from __future__ import annotations

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
