"""A world write that hedges with a candidate the task did not ask for fails `state_preserved`, in
whatever spelling it names it: '- 2026-03-07 14:30 rehearsal (or March 8)' beside the distractor
2026-03-08 passed before (the check was verbatim), in process and in the exported script."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envpipeline.worlds.criteria import check, collateral, render_script
from tests.world_fixture import make_day

ALLOW = {"tables": {}, "volatile": {}, "files": ["notes/agenda.md"], "forbidden": ["2026-03-08", "15:30"]}


@pytest.fixture
def days(tmp_path: Path) -> tuple[Path, Path]:
    initial = make_day(tmp_path / "initial", day=3)
    final = tmp_path / "final" / initial.name
    shutil.copytree(initial, final)
    return initial, final


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
    script = tmp_path / "criterion_c9.py"
    script.write_text(render_script(criterion))
    run = subprocess.run(
        [sys.executable, "-I", str(script), str(initial), str(final)], capture_output=True, text=True
    )
    assert run.returncode == (1 if hedges else 0), run.stdout + run.stderr
