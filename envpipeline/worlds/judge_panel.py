"""The judge panel: votes, a real majority, the counterfactual probe of each judge, and Cohen's κ.

`panel` decides by a strict majority of the votes cast; a tie (or no vote) is no decision.
`judge_probe` shows each judge two counterfactuals and requires its answer not to move: the
unchanged W0 with and without a final message claiming success (the answer must stay "not done"),
and a successful attempt with its final message flipped to a failure claim. `judge_kappas` gives
κ for every pair of judges and of each judge against the criteria verifier.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import combinations
from pathlib import Path
from typing import Any

from envpipeline.worlds.judge_view import FAILURE_CLAIM, SUCCESS_CLAIM, Judge, JudgeView, judge_view
from envpipeline.worlds.metrics import cohen_kappa

#: A judge whose κ with the verifier falls below this over a run is flagged as uninformative.
KAPPA_FLOOR = 0.4


def votes(judges: list[Judge], view: JudgeView) -> dict[str, bool | None]:
    """Each judge's vote on one view."""
    return {judge.name: judge(view) for judge in judges}


def panel(cast: dict[str, bool | None]) -> bool | None:
    """Strict majority of the votes cast; a tie or no vote is no decision (None)."""
    yes = sum(1 for v in cast.values() if v is True)
    no = sum(1 for v in cast.values() if v is False)
    return True if yes > no else False if no > yes else None


def with_final_message(trajectory: list[dict[str, Any]], text: str) -> list[dict[str, Any]]:
    """The trajectory with its final assistant message replaced (or added) by `text`."""
    body = list(trajectory)
    if body and body[-1].get("role") == "assistant" and not body[-1].get("tool_calls"):
        body = body[:-1]
    return [*body, {"role": "assistant", "content": text}]


def judge_probe(
    judges: list[Judge],
    instruction: str,
    w0: Path,
    success: tuple[list[dict[str, Any]], Path] | None = None,
) -> dict[str, Any]:
    """Per judge: its answers on the counterfactuals, and whether it moved (or called W0 done)."""
    opening = [{"role": "user", "content": instruction}]
    # the state a view shows does not depend on the trajectory: each pair of folders is read once
    quiet = judge_view(instruction, opening, w0, w0)
    claim = replace(quiet, trajectory=with_final_message(opening, SUCCESS_CLAIM))
    done = None
    if success is not None:
        done = judge_view(instruction, success[0], w0, success[1])
    report: dict[str, Any] = {}
    for judge in judges:
        unchanged, claimed = judge(quiet), judge(claim)
        entry: dict[str, Any] = {"unchanged": unchanged, "unchanged_claiming_success": claimed}
        failed = claimed is True or (unchanged is not None and claimed is not None and unchanged != claimed)
        if done is not None:
            honest = judge(done)
            flipped = judge(replace(done, trajectory=with_final_message(done.trajectory, FAILURE_CLAIM)))
            entry.update({"success": honest, "success_claiming_failure": flipped})
            failed = failed or (honest is not None and flipped is not None and honest != flipped)
        entry["failed"] = failed
        report[judge.name] = entry
    return report


def judge_kappas(verifier: list[bool], judge_votes: dict[str, list[bool | None]]) -> dict[str, Any]:
    """κ per judge pair and per judge vs the verifier (over the attempts where both voted)."""
    out: dict[str, Any] = {}
    names = sorted(judge_votes)
    series = {"verifier": [bool(v) for v in verifier], **judge_votes}
    for a, b in [*combinations(names, 2), *(("verifier", n) for n in names)]:
        pairs = [(x, y) for x, y in zip(series[a], series[b]) if x is not None and y is not None]
        out[f"{a}~{b}"] = (
            round(cohen_kappa([x for x, _ in pairs], [y for _, y in pairs]), 4) if pairs else None
        )
    return out


def uninformative_judges(kappas: dict[str, Any], floor: float = KAPPA_FLOOR) -> list[str]:
    """Judges whose κ with the verifier is below `floor` (e.g. a judge that always says yes)."""
    return sorted(
        key.split("~", 1)[1]
        for key, value in kappas.items()
        if key.startswith("verifier~") and value is not None and value < floor
    )
