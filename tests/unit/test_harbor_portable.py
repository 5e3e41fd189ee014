"""Portable Harbor exports (`--harbor-mode portable`): public base, pinned runtime, hidden state.

The services of a portable composed task run as root behind an HTTP envserver; here it is started
as a subprocess on the exported files, the reference solution is replayed through the exported
envtool client, and the exported verifier scores the call log the server wrote (1 for the
solution, 0 for doing nothing). The Docker round trip is in tests/e2e/test_harbor_portable_docker.py.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import time
import tomllib
from pathlib import Path

import pytest

from envpipeline.errors import ConfigError
from envpipeline.export.harbor import export_harbor
from envpipeline.export.harbor_common import PORTABLE_BASE_IMAGE, runtime_pins
from envpipeline.models.task import TaskRecord
from envpipeline.terminal.checks import check_bundle

COMPILED = (".so", ".pyd", ".dylib", ".pyc")


@pytest.fixture(scope="module")
def both(accepted: list[TaskRecord], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("harbor-modes")
    return {
        mode: export_harbor(accepted[:1], out / mode, mode=mode)[0]  # type: ignore[arg-type]
        for mode in ("offline", "portable")
    }


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_portable_dockerfile_is_public_and_pinned(both: dict[str, Path]) -> None:
    dockerfile = (both["portable"] / "environment" / "Dockerfile").read_text()
    assert dockerfile.startswith(f"FROM {PORTABLE_BASE_IMAGE}\n")
    install = next(line for line in dockerfile.splitlines() if "pip install" in line)
    assert all(pin in install.split() for pin in runtime_pins())
    assert all("==" in word for word in install.split()[install.split().index("--no-cache-dir") + 1 :])
    assert 'ENTRYPOINT ["/srv/envtool/entrypoint.sh"]' in dockerfile
    assert (both["portable"] / "tests" / "Dockerfile").read_text().startswith(f"FROM {PORTABLE_BASE_IMAGE}\n")
    assert "FROM envpipeline/base:bookworm" in (both["offline"] / "environment" / "Dockerfile").read_text()


def test_portable_ships_no_compiled_file(both: dict[str, Path]) -> None:
    portable = both["portable"]
    assert not [p for p in portable.rglob("*") if p.suffix in COMPILED]
    with tarfile.open(portable / "tests" / "vendor.tar.gz") as archive:
        names = archive.getnames()
    assert names and not [n for n in names if n.endswith(COMPILED) or n.startswith("pydantic")]
    # the check can fail: the offline export does vendor the compiled pydantic_core
    assert [p for p in both["offline"].rglob("*") if p.suffix == ".so"]


def test_agent_sees_no_joint_state_and_no_criteria(both: dict[str, Path]) -> None:
    portable = both["portable"]
    app = portable / "environment" / "app"
    assert sorted(p.name for p in app.iterdir()) == ["envtool.py"]
    tools = portable / "environment" / "tools"
    assert (tools / "state.json").is_file()  # root-only in the image, read by envserver
    dockerfile = (portable / "environment" / "Dockerfile").read_text()
    assert "chmod -R go-rwx /srv/envtool" in dockerfile and "chown -R agent:agent /app" in dockerfile
    config = tomllib.loads((portable / "task.toml").read_text())
    assert config["agent"]["user"] == "agent"
    criteria = json.loads((portable / "tests" / "task.json").read_text())["criteria"]
    image_text = "".join(p.read_text() for p in app.rglob("*.py"))
    assert criteria and not any(c["id"] in image_text for c in criteria)
    # the offline image still carries the state (its tools run in the agent's process)
    assert (both["offline"] / "environment" / "app" / "state.json").is_file()


def test_both_modes_use_the_separate_verifier(both: dict[str, Path]) -> None:
    for mode, path in both.items():
        config = tomllib.loads((path / "task.toml").read_text())
        assert config["verifier"]["environment_mode"] == "separate", mode
        assert "COPY . /tests/" in (path / "tests" / "Dockerfile").read_text()
        assert "/app/answer.txt" in config["artifacts"]
        assert config["metadata"]["envpipeline"]["harbor_mode"] == mode
        assert check_bundle(path).passed, [c.reason for c in check_bundle(path).failed()]
    assert (
        "/srv/envtool/calls.jsonl" in tomllib.loads((both["portable"] / "task.toml").read_text())["artifacts"]
    )


def test_unknown_mode_is_refused(accepted: list[TaskRecord], tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown Harbor export mode"):
        export_harbor(accepted[:1], tmp_path, mode="cloud")  # type: ignore[arg-type]
    assert not list(tmp_path.iterdir())


def run_portable(task: Path, work: Path, solve: bool) -> dict:
    """Start the exported envserver, optionally run the oracle through envtool, run the verifier."""
    srv, app = shutil.copytree(task / "environment" / "tools", work / "srv"), work / "app"
    shutil.copytree(task / "environment" / "app", app)
    port = free_port()
    env = {**os.environ, "ENVTOOL_PORT": str(port), "ENVTOOL_SERVER": f"http://127.0.0.1:{port}"}
    env.pop("PYTHONPATH", None)
    server = subprocess.Popen([sys.executable, "-I", str(srv / "envserver.py")], env=env)
    try:
        if solve:
            solved = subprocess.run(
                [sys.executable, str(task / "solution" / "solve.py")],
                env={**env, "ENVTOOL_APP": str(app)},
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert solved.returncode == 0, solved.stdout[-2000:] + solved.stderr[-2000:]
        listed = subprocess.run(
            [sys.executable, str(app / "envtool.py"), "services"], env=env, capture_output=True, text=True
        )
        assert json.loads(listed.stdout)["success"] is True
    finally:
        server.terminate()
        server.wait(timeout=10)
    logs = work / "logs"
    verify = {
        **env,
        "ENVTOOL_APP": str(app),
        "ENVTOOL_LOGS": str(logs),
        "ENVTOOL_CALLS": str(srv / "calls.jsonl"),
    }
    done = subprocess.run(
        [sys.executable, "-I", str(task / "tests" / "evaluate.py")],
        env=verify,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads((logs / "reward.json").read_text())


def test_portable_oracle_scores_one_through_the_envserver(both: dict[str, Path], tmp_path: Path) -> None:
    start = time.monotonic()
    reward = run_portable(both["portable"], tmp_path / "oracle", solve=True)
    assert reward["reward"] == 1 and reward["criteria_passed"] == reward["criteria_total"], reward
    assert (tmp_path / "oracle" / "srv" / "calls.jsonl").read_text().count("\n") >= 1
    assert not (tmp_path / "oracle" / "app" / "calls.jsonl").exists()  # the log is the server's
    assert time.monotonic() - start < 120


def test_portable_nop_scores_zero(both: dict[str, Path], tmp_path: Path) -> None:
    reward = run_portable(both["portable"], tmp_path / "nop", solve=False)
    assert reward["reward"] == 0 and reward["criteria_passed"] < reward["criteria_total"], reward


@pytest.mark.parametrize("seed", [53, 148])
def test_the_exported_oracle_builds_json_around_a_found_value(seed: int, tmp_path: Path) -> None:
    """Whole-library tasks whose reference passes a found value inside JSON: seed 53 as the one
    item of a list (Spotify's track_ids), seed 148 inside an object (Neon's params.projectId). The
    exported solve.py builds the same arguments the composer did, and scores 1. (The seeds move
    when the library's links change: look for the next seeds with such a binding.)"""
    from envpipeline.compose.author import ComposeConfig
    from envpipeline.compose.pipeline import compose_task
    from envpipeline.models.task import JSON_TEMPLATE

    task = compose_task(seed, ComposeConfig(library_scope="all"))
    assert task.status == "accepted", task.reasons
    templates = [b.template for s in task.reference_solution for b in s.bindings.values()]
    assert any(t.startswith(JSON_TEMPLATE) for t in templates), templates
    (exported,) = export_harbor([task], tmp_path / "out", mode="portable")
    reward = run_portable(exported, tmp_path / "oracle", solve=True)
    assert reward["reward"] == 1 and reward["criteria_passed"] == reward["criteria_total"], reward
