"""Terminal bundles as `TaskRecord`s: a gold-verified Harbor folder becomes one task record."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from envpipeline.models.criteria import VerifierCriterion
from envpipeline.models.gates import GateResult
from envpipeline.models.task import Provenance, TerminalEnvironmentRef, TerminalTaskRecord
from envpipeline.terminal.bundle import read_bundle
from envpipeline.terminal.seeds import seed_key_for
from envpipeline.terminal.verify import bundle_fingerprint
from envpipeline.versions import TERMINAL_GENERATOR


def terminal_task_id(fingerprint: str) -> str:
    """A terminal task's id: a hash of its bundle's file fingerprint."""
    return f"tb-{hashlib.sha256(fingerprint.encode()).hexdigest()[:16]}"


def red_team_gate_of(outcomes: list[dict[str, Any]]) -> GateResult:
    """The stored red_team gate of a verified bundle, from its per-policy outcomes (JSON dicts)."""
    broke = [o["policy"] for o in outcomes if o.get("binary") == 1.0 and not o.get("moot")]
    return GateResult(
        name="red_team",
        passed=not broke,
        reason=f"broken by {', '.join(broke)}" if broke else "",
        evidence={
            "policies": {o["policy"]: {k: v for k, v in o.items() if k != "policy"} for o in outcomes},
            "broke": broke,
        },
    )


def terminal_task_record(
    folder: str | Path,
    verification: dict[str, bool] | None = None,
    red_team: list[dict[str, Any]] | None = None,
) -> TerminalTaskRecord:
    """The record of one bundle folder; `verification` holds its gate outcomes (e.g. oracle, nop),
    `red_team` its stored red-team outcomes (a ``red_team`` gate when given).

    A synthesized bundle ``<seed>--<action>-s<k>`` keeps its seed's partition, so splits keep a
    seed and its rewrites together.
    """
    folder = Path(folder)
    bundle = read_bundle(folder)
    meta = bundle.config.metadata
    fingerprint = bundle_fingerprint(folder)
    origin = dict(meta.envpipeline)
    seed = origin.get("seed")
    gates = [GateResult(name=name, passed=bool(passed)) for name, passed in (verification or {}).items()]
    if red_team:
        gates.append(red_team_gate_of(red_team))
    return TerminalTaskRecord(
        task_id=terminal_task_id(fingerprint),
        family="terminal",
        seed_key=seed_key_for(folder.name.split("--", 1)[0]),
        instruction=bundle.instruction,
        environment=TerminalEnvironmentRef(
            bundle_path=str(folder),
            fingerprint=fingerprint,
            category=meta.category,
            tags=list(meta.tags),
            verifier_timeout_sec=bundle.config.verifier.timeout_sec,
        ),
        criteria=[VerifierCriterion(verifier_timeout_sec=bundle.config.verifier.timeout_sec)],
        metadata={"difficulty": meta.difficulty, "bundle": origin},
        provenance=Provenance(
            generator=f"terminal.{origin.get('family', 'import')}",
            generator_version=TERMINAL_GENERATOR,
            seed=seed if isinstance(seed, int) else None,
        ),
        gates=gates,
        status="accepted" if gates and all(g.passed for g in gates) else "candidate",
    )
