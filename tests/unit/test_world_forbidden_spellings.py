"""A world write that hedges with a candidate the task did not ask for fails `state_preserved`, in
whatever spelling it names it: '- 2026-03-07 14:30 rehearsal (or March 8)' beside the distractor
2026-03-08 passed before (the check was verbatim), in process and in the exported script."""

from __future__ import annotations

from pathlib import Path

import pytest

from envpipeline.worlds.criteria import check, collateral
from tests.world_fixture import day_pair, run_criterion_script

ALLOW = {"tables": {}, "volatile": {}, "files": ["notes/agenda.md"], "forbidden": ["2026-03-08", "15:30"]}


@pytest.fixture
def days(tmp_path: Path) -> tuple[Path, Path]:
    return day_pair(tmp_path)


@pytest.mark.parametrize(
    ("line", "hedges"),
    [
        ("- 2026-03-07 14:30 rehearsal", False),
        ("- 2026-03-07 14:30 rehearsal (or 2026-03-08)", True),  # verbatim: caught before too
        ("- 2026-03-07 14:30 rehearsal (or March 8)", True),
        ("- 2026-03-07 14:30 rehearsal (maybe 3:30 pm)", True),
        ("- 2026-03-07 14:30 rehearsal, 8 people", False),
    ],
)
def test_a_candidate_not_asked_for_is_caught_in_any_spelling(
    days, tmp_path: Path, line: str, hedges: bool
) -> None:
    initial, final = days
    (final / "home" / "notes").mkdir(parents=True, exist_ok=True)
    (final / "home" / "notes" / "agenda.md").write_text(line + "\n")
    found = collateral(ALLOW, initial, final)
    assert bool(found) is hedges, found
    criterion = {"id": "c9", "kind": "state_preserved", "description": "nothing else", "allow": ALLOW}
    assert check(criterion, initial, final) is not hedges
    run = run_criterion_script(criterion, initial, final, tmp_path)
    assert run.returncode == (1 if hedges else 0), run.stdout + run.stderr
