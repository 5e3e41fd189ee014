"""Harbor export: composed and terminal tasks -> static checks -> read back -> gold verification."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envpipeline.errors import ConfigError
from envpipeline.export.harbor import (
    check_runtime_python,
    export_composed_task,
    export_harbor,
    export_terminal_bundle,
)
from envpipeline.models.task import TaskRecord
from envpipeline.terminal.bundle import read_bundle
from envpipeline.terminal.checks import check_bundle
from envpipeline.terminal.families.base import write_generated
from envpipeline.terminal.families.registry import get_family
from envpipeline.terminal.verify import verify_bundle

REPO = Path(__file__).resolve().parents[2]
STDLIB_PYTHON = "/usr/bin/python3"


@pytest.fixture(scope="module")
def terminal_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    family = get_family("text-parsing")
    task = family.generate(1, family.knobs_for("easy"), "easy")
    return write_generated(task, tmp_path_factory.mktemp("tb") / "text-parsing-1")


@pytest.fixture(scope="module")
def exported(accepted: list[TaskRecord], terminal_source: Path, tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("harbor")
    paths = export_harbor([*accepted[:2], terminal_source], out)
    return {"composed": paths[:2], "terminal": paths[2], "records": accepted[:2], "out": out}


def test_every_export_passes_the_static_checks(exported) -> None:
    for path in [*exported["composed"], exported["terminal"]]:
        report = check_bundle(path)
        assert report.passed, [c.reason for c in report.failed()]
        assert read_bundle(path).instruction.strip()


def test_composed_layout(exported) -> None:
    path, record = exported["composed"][0], exported["records"][0]
    bundle = read_bundle(path)
    assert bundle.config.metadata.envpipeline["task_id"] == record.task_id
    assert record.instruction.strip() in bundle.instruction and "envtool.py call" in bundle.instruction
    app = path / "environment" / "app"
    assert (app / "envtool.py").is_file() and (app / "vendor" / "pydantic_core").is_dir()
    assert (app / "vendor" / "envpipeline" / "services" / "registry.py").is_file()
    state = json.loads((app / "state.json").read_text())
    assert set(record.environment.services) <= set(state)
    assert set(record.environment.state_seeds) <= set(state)  # distractors materialized
    task = json.loads((path / "tests" / "task.json").read_text())
    assert task["initial_state"] == state and len(task["criteria"]) == len(record.criteria)
    assert (path / "environment" / "Dockerfile").read_text().startswith("FROM envpipeline/base:bookworm")
    # the second task's vendored runtime is hard-linked to the first one's
    other = exported["composed"][1] / "environment" / "app" / "vendor" / "envpipeline" / "errors.py"
    assert os.path.samefile(app / "vendor" / "envpipeline" / "errors.py", other)


def test_terminal_copy_normalizes_task_toml(exported, terminal_source: Path) -> None:
    original = read_bundle(terminal_source)
    copy = read_bundle(exported["terminal"])
    assert copy.config == original.config and copy.instruction == original.instruction
    assert sorted(p.relative_to(exported["terminal"]) for p in exported["terminal"].rglob("*")) == sorted(
        p.relative_to(terminal_source) for p in terminal_source.rglob("*")
    )


def test_terminal_export_refuses_links_leaving_the_bundle(terminal_source: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    shutil.copytree(terminal_source, bad, symlinks=True)
    (bad / "environment" / "leak").symlink_to("/etc/passwd")
    with pytest.raises(ConfigError, match="symlink"):
        export_terminal_bundle(bad, tmp_path / "out")


@pytest.mark.skipif(not Path(STDLIB_PYTHON).is_file(), reason=f"{STDLIB_PYTHON} missing")
def test_runtime_runs_on_a_bare_python(exported, tmp_path: Path) -> None:
    """envtool, solve and evaluate work with the standard library plus the vendored runtime only."""
    path = shutil.copytree(exported["composed"][0], tmp_path / "task")
    app, logs = path / "environment" / "app", tmp_path / "logs"
    env = {"PATH": os.environ["PATH"], "ENVTOOL_APP": str(app), "ENVTOOL_LOGS": str(logs)}

    def run(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [STDLIB_PYTHON, "-S", *argv], env=env, capture_output=True, text=True, timeout=60
        )

    listing = json.loads(run(str(app / "envtool.py"), "services").stdout)
    assert listing["success"] and listing["data"]["services"]
    bad = run(str(app / "envtool.py"), "call", "nosuch.tool", "{}")
    assert bad.returncode == 1 and json.loads(bad.stdout)["error"]["code"] == 404
    assert run(str(path / "tests" / "evaluate.py")).returncode == 0
    assert json.loads((logs / "reward.json").read_text())["reward"] == 0
    assert run(str(path / "solution" / "solve.py")).returncode == 0
    assert run(str(path / "tests" / "evaluate.py")).returncode == 0
    reward = json.loads((logs / "reward.json").read_text())
    assert reward["reward"] == 1 and reward["criteria_passed"] == reward["criteria_total"]
    details = json.loads((logs / "reward-details.json").read_text())
    assert details["state_file_consistent"] is True


def test_editing_the_state_file_earns_nothing(exported, tmp_path: Path) -> None:
    """The verifier rebuilds the final state from the call log, not from /app/state.json."""
    path = shutil.copytree(exported["composed"][0], tmp_path / "task")
    app, logs = path / "environment" / "app", tmp_path / "logs"
    env = {**os.environ, "ENVTOOL_APP": str(app), "ENVTOOL_LOGS": str(logs)}
    subprocess.run(
        [sys.executable, str(path / "solution" / "solve.py")], env=env, check=True, capture_output=True
    )
    solved_state = (app / "state.json").read_text()
    (app / "calls.jsonl").unlink()
    (app / "state.json").write_text(solved_state)  # the solved state, but no calls made
    subprocess.run(
        [sys.executable, str(path / "tests" / "evaluate.py")], env=env, check=True, capture_output=True
    )
    details = json.loads((logs / "reward-details.json").read_text())
    assert details["reward"] == 0 and details["state_file_consistent"] is False


def test_export_refuses_a_foreign_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "version_info", (3, 12, 0, "final", 0))
    with pytest.raises(ConfigError, match="3.11"):
        check_runtime_python()


def test_non_composed_record_is_refused(exported, tmp_path: Path) -> None:
    record = exported["records"][0].model_copy(update={"family": "terminal"})
    with pytest.raises(ConfigError, match="not a composed task"):
        export_composed_task(record, tmp_path / "x")


def test_gold_verification_local(exported, local_sandbox) -> None:
    for path in [exported["composed"][0], exported["terminal"]]:
        result = verify_bundle(path, local_sandbox)
        assert result.passed, (result.verdict, result.reasons)
        assert result.oracle_rewards == [1.0, 1.0] and result.nop_reward == 0.0


@pytest.mark.docker
@pytest.mark.slow
def test_gold_verification_docker(exported, docker_sandbox) -> None:
    result = verify_bundle(exported["composed"][0], docker_sandbox)
    assert result.passed, (result.verdict, result.reasons, [t.reason for t in result.trials])


def _harbor_python() -> str | None:
    for candidate in (
        os.environ.get("HARBOR_PYTHON"),
        "/root/.pyenv/versions/3.12.1/bin/python",
        shutil.which("python3.13"),
        shutil.which("python3.12"),
    ):
        if candidate and Path(candidate).is_file():
            probe = subprocess.run(
                [candidate, "-c", "import sys; print(sys.version_info >= (3, 12))"],
                capture_output=True,
                text=True,
            )
            if probe.stdout.strip() == "True":
                return candidate
    return None


@pytest.mark.slow
def test_harbor_package_validates_every_export(exported, tmp_path: Path) -> None:
    python = _harbor_python()
    if python is None:
        pytest.skip("no Python >= 3.12 interpreter for harbor (set HARBOR_PYTHON)")
    script = REPO / "scripts" / "harbor-validate.sh"
    run = subprocess.run(
        ["bash", str(script), str(exported["out"])],
        env={**os.environ, "HARBOR_PYTHON": python},
        capture_output=True,
        text=True,
        timeout=600,
    )
    if run.returncode == 3:
        pytest.skip(f"harbor could not be installed: {run.stderr[-500:]}")
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert run.stdout.count("OK ") == 3
    broken = shutil.copytree(exported["terminal"], tmp_path / "broken")
    (broken / "tests" / "test.sh").unlink()
    again = subprocess.run(
        ["bash", str(script), str(broken)],
        env={**os.environ, "HARBOR_PYTHON": python},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert again.returncode == 1 and "FAIL" in again.stdout


def _red_team_tamper(path: Path, sandbox) -> float | None:
    from envpipeline.redteam.registry import get_policy
    from envpipeline.redteam.terminal import red_team
    from envpipeline.sandbox.base import Limits

    [outcome] = red_team(read_bundle(path), sandbox, Limits(memory_mb=2048), policies=[get_policy("tamper")])
    return outcome.reward


def test_tamper_broke_the_old_export_and_cannot_break_the_new_one(
    exported, tmp_path: Path, local_sandbox
) -> None:
    """The old layout imported the runtime from /app/vendor (agent-editable); tamper rewrites it."""
    new = shutil.copytree(exported["composed"][0], tmp_path / "new")
    old = shutil.copytree(exported["composed"][0], tmp_path / "old")
    evaluate, test_sh = old / "tests" / "evaluate.py", old / "tests" / "test.sh"
    source = evaluate.read_text()
    assert "sys.path.insert(0, unpack_runtime())" in source and "python3 -I" in test_sh.read_text()
    evaluate.write_text(
        source.replace(
            "sys.path.insert(0, unpack_runtime())", 'sys.path.insert(0, os.path.join(APP, "vendor"))'
        )
    )
    test_sh.write_text(test_sh.read_text().replace("python3 -I", "python3"))
    assert _red_team_tamper(old, local_sandbox) == 1.0
    assert _red_team_tamper(new, local_sandbox) == 0.0
