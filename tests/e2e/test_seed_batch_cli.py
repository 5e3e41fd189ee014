"""`bundle import` and `bundle check` on a batch with good and bad folders: every folder reported."""

from __future__ import annotations

import json
from pathlib import Path

from envpipeline.terminal.families.base import write_generated
from tests.e2e.test_cli import run_cli
from tests.unit.test_harbor_task_toml import TB2_TASK_TOML
from tests.unit.test_importer import make_tb1
from tests.unit.test_static_checks import tiny_task

#: Harbor's stock Terminal-Bench 2 test.sh: installs uv at test time, then runs pytest through uvx.
HARBOR_TEST_SH = """#!/bin/bash

apt-get update
apt-get install -y curl

curl -LsSf https://astral.sh/uv/0.9.5/install.sh | sh

source $HOME/.local/bin/env

uvx \\
  -p 3.13 \\
  -w pytest==8.4.1 \\
  -w pytest-json-ctrf==0.3.5 \\
  pytest --ctrf /logs/verifier/ctrf.json /tests/test_outputs.py -rA

if [ $? -eq 0 ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""


def harbor_bundle(root: Path, name: str) -> Path:
    bundle = write_generated(tiny_task(), root / name)
    (bundle / "task.toml").write_text(TB2_TASK_TOML)
    (bundle / "tests/test.sh").write_text(HARBOR_TEST_SH)
    (bundle / "solution/solve.sh").write_text("#!/bin/bash\npip install -q pandas 2>/dev/null || exit 1\n")
    return bundle


def test_import_batch_reports_every_source(tmp_path: Path) -> None:
    sources = tmp_path / "sources"
    good_tb1 = make_tb1(sources, "hello-world")
    no_solution = make_tb1(sources, "no-oracle", files={"solution.sh": ""})
    harbor = harbor_bundle(sources, "fix-the-compiler")
    missing = sources / "not-there"
    out = tmp_path / "seeds"
    args = [str(p) for p in (good_tb1, no_solution, harbor, missing)]
    result = run_cli("bundle", "import", *args, "--out", str(out), "--json", check=False)
    assert result.returncode == 1, result.stderr
    reports = {r["task"]: r for r in json.loads(result.stdout)}
    assert sorted(reports) == ["fix-the-compiler", "hello-world", "no-oracle", "not-there"]
    assert all(r["task"] for r in reports.values())
    assert reports["hello-world"]["status"] == "imported" and reports["hello-world"]["error"] is None
    assert reports["no-oracle"]["status"] == "failed" and "no oracle" in reports["no-oracle"]["error"]
    assert reports["not-there"]["status"] == "failed" and "neither task.toml" in reports["not-there"]["error"]
    assert not (out / "no-oracle").exists()
    harbor_report = reports["fix-the-compiler"]
    assert harbor_report["status"] == "imported" and harbor_report["source_format"] == "harbor"
    rewritten = {(r["file"], r["original"]): r["replacement"] for r in harbor_report["rewrites"]}
    assert rewritten[("solution/solve.sh", "pip install -q pandas")] == "true"
    assert rewritten[("tests/test.sh", "source $HOME/.local/bin/env")] == "true"
    test_sh = (out / "fix-the-compiler/tests/test.sh").read_text()
    assert "python3 -m pytest /tests/test_outputs.py -rA\n\nif [ $? -eq 0 ]" in test_sh
    assert "true 2>/dev/null || exit 1" in (out / "fix-the-compiler/solution/solve.sh").read_text()
    assert run_cli("bundle", "check", str(out / "fix-the-compiler"), str(out / "hello-world")).returncode == 0

    text = run_cli("bundle", "import", *args, "--out", str(tmp_path / "again"), check=False)
    assert text.returncode == 1
    assert "FAILED   no-oracle" in text.stdout and "imported hello-world (terminal-bench-1)" in text.stdout


def test_check_batch_reports_every_bundle(tmp_path: Path) -> None:
    good = harbor_bundle(tmp_path, "good")
    bad = harbor_bundle(tmp_path, "bad")
    for path in (bad / "solution").iterdir():
        path.unlink()
    (bad / "solution").rmdir()
    result = run_cli("bundle", "check", str(good), str(bad), str(tmp_path / "missing"), "--json", check=False)
    assert result.returncode == 1
    reports = json.loads(result.stdout)
    assert [r["status"] for r in reports] == ["passed", "failed", "failed"]
    failed = {c["name"]: c["reason"] for c in reports[1]["checks"] if not c["passed"]}
    assert failed == {"required_files": "solution/solve.sh missing"}
    assert "not a directory" in reports[2]["checks"][0]["reason"]


def test_bundle_verify_reports_every_bundle_with_output_tails(tmp_path: Path) -> None:
    """One good, one failing and one solution-less bundle (and a missing path): every one gets a
    verdict, the failing one says why with the tests' output, and the exit status is 1."""
    import shutil

    from tests.unit.test_redteam_terminal import weak_bundle

    good = weak_bundle(tmp_path, "trusts-stale-reward")
    failing = weak_bundle(tmp_path / "f", "trusts-stale-reward")
    (failing / "solution" / "solve.sh").write_text(
        "#!/bin/bash\necho trying-hard\necho 'no luck' >&2\necho nope > /app/out.txt\n"
    )
    (failing / "tests" / "test.sh").write_text(
        "#!/bin/bash\nmkdir -p /logs/verifier\necho TEST-OUTPUT-SAYS-WRONG-ANSWER\n"
        "grep -qx done /app/out.txt && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n"
    )
    unsolved = weak_bundle(tmp_path / "u", "trusts-stale-reward")
    shutil.rmtree(unsolved / "solution")
    missing = tmp_path / "no-such-bundle"
    paths = [str(p) for p in (failing, unsolved, missing, good)]
    result = run_cli("bundle", "verify", *paths, "--sandbox", "local", "--json", check=False)
    assert result.returncode == 1, result.stderr
    reports = json.loads(result.stdout)
    assert [r["path"] for r in reports] == paths
    verdicts = [r["verdict"] for r in reports]
    assert verdicts == ["oracle_failed", "no_solution", "invalid_bundle", "verified"]
    bad = reports[0]
    assert bad["reasons"] and bad["tails"]["trial"] == "oracle"
    assert "trying-hard" in bad["tails"]["solution_stdout"] and "no luck" in bad["tails"]["solution_stderr"]
    assert "TEST-OUTPUT-SAYS-WRONG-ANSWER" in bad["tails"]["tests_stdout"]
    assert "tests said: TEST-OUTPUT-SAYS-WRONG-ANSWER" in bad["reasons"][0]  # the reason says why
    assert "solve.sh does not exist" in reports[1]["reasons"][0]
    assert "not a directory" in reports[2]["reasons"][0]
    ok = reports[3]
    assert ok["tails"]["tests_stdout"] == "" and len(ok["tails"]["solution_stdout"]) <= 2000
