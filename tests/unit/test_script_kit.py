"""The family script kit: fail-fast verifier scripts judge like the families rely on; edits must apply."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from envpipeline.terminal.families._script_kit import apply_edits, edited_solutions, fail_fast_script

BODY = """
def total(path):
    with open(path) as fh:
        return sum(int(line) for line in fh if line.strip())


if total(os.environ["NUMBERS"]) != EXPECTED["total"]:
    fail(f"total expected {EXPECTED['total']}")
"""


@pytest.mark.parametrize("embed", ["json", "literal"])
def test_a_fail_fast_script_passes_the_right_answer_and_names_the_wrong_one(tmp_path: Path, embed) -> None:
    script = tmp_path / "test_outputs.py"
    script.write_text(fail_fast_script({"total": 6}, BODY, imports=("os",), embed=embed))
    numbers = tmp_path / "numbers.txt"

    def judge(text: str) -> subprocess.CompletedProcess:
        numbers.write_text(text)
        env = {"NUMBERS": str(numbers)}
        return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env)

    right, wrong = judge("1\n2\n3\n"), judge("1\n2\n")
    assert right.returncode == 0 and right.stdout.strip() == "all checks passed"
    assert wrong.returncode == 1 and wrong.stdout.strip() == "FAIL: total expected 6"


def test_variants_differ_from_the_oracle_only_by_their_edits() -> None:
    source = "x = 1\nprint(x)\n"
    solutions = edited_solutions(source, {"off_by_one": [("x = 1", "x = 2")]}, ("off_by_one",))
    assert list(solutions) == ["oracle", "off_by_one"]
    oracle, variant = solutions["oracle"]["solve.sh"], solutions["off_by_one"]["solve.sh"]
    assert oracle.replace("x = 1", "x = 2") == variant and "x = 1" in oracle


def test_an_edit_that_does_not_apply_is_an_error() -> None:
    with pytest.raises(ValueError, match="solver edit does not apply: 'y = 1'"):
        apply_edits("x = 1\n", [("y = 1", "y = 2")])
