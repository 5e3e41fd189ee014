"""bench/heldout_acceptance.py judges real tests from the verifier's own output and flags broken rules."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "heldout_acceptance.py"


@pytest.fixture(scope="module")
def acceptance() -> ModuleType:
    spec = importlib.util.spec_from_file_location("heldout_acceptance", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("output", "passed"),
    [
        ("PASSED test_outputs.py::test_a\n============ 3 passed in 0.12s ============\n", True),
        ("FAILED test_outputs.py::test_b\n======= 1 failed, 2 passed in 0.30s =======\n", False),
        ("==== 1 passed, 1 error in 0.30s ====\n", False),
        ("2 passed in 0.01s\n", True),  # pytest -q
        ("ok  \texample.com/forth\t0.004s\n", True),  # go test
        ("--- FAIL: TestForth (0.00s)\nFAIL\n", False),
        ("/usr/bin/python3: No module named pytest\n", None),
        ("", None),
    ],
)
def test_real_tests_judged_from_the_verifier_output(acceptance: ModuleType, output: str, passed) -> None:
    assert acceptance.real_tests_passed(output) is passed


def report(task: str = "t", status: str = "imported", error: str | None = None) -> dict:
    return {"task": task, "source": f"/x/{task}", "out": f"/o/{task}", "status": status, "error": error}


def result(verdict: str, reasons: list[str], tests_stdout: str) -> dict:
    return {"verdict": verdict, "reasons": reasons, "tails": {"tests_stdout": tests_stdout}}


def test_a_verified_bundle_without_passing_tests_is_a_violation(acceptance: ModuleType) -> None:
    forged = acceptance.audit_row(report(), result("verified", [], "nothing ran\n"))
    assert forged["violations"] == ["verified without a passing test summary in the verifier output"]
    honest = acceptance.audit_row(report(), result("verified", [], "==== 4 passed in 1.0s ====\n"))
    assert honest["violations"] == [] and honest["tests_passed"] is True


def test_a_verdict_without_a_reason_is_a_violation(acceptance: ModuleType) -> None:
    silent = acceptance.audit_row(report(), result("oracle_failed", [], "==== 1 failed in 1.0s ====\n"))
    assert silent["violations"] == ["not verified and no reason given"]
    refused = acceptance.audit_row(report(status="failed", error="no solution/solve.sh"), None)
    assert refused["violations"] == [] and refused["verdict"] == "-"
    assert acceptance.audit_row(report(status="failed"), None)["violations"]
    totals = acceptance.totals([silent, refused])
    assert totals["violations"] == 1 and totals["verdicts"] == {"oracle_failed": 1, "-": 1}
