"""Portable composed and world Harbor tasks built and run under Docker, the way Harbor runs them.

This machine has no registry: ``python:3.11-slim`` cannot be pulled and PyPI is not reachable from
a build. Test-only stand-in: when no ``python:3.11-slim`` image exists, one is built from the
local base image (Debian's CPython 3.11) with this interpreter's copies of the pinned
distributions preinstalled, so the export's own ``pip install pkg==ver`` lines find every pin
already satisfied (no index). The exported Dockerfiles are built unchanged. Then, as a Harbor
trial does: the agent image starts (its entrypoint starts the root-only envserver), the oracle runs
as the unprivileged ``agent`` user, the call log and the answer are copied out as artifacts into a
container of the separate verifier image, and ``/tests/test.sh`` writes the reward.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import uuid
from importlib.metadata import distribution
from pathlib import Path

import pytest

from envpipeline.export.harbor import export_harbor
from envpipeline.export.harbor_common import PORTABLE_BASE_IMAGE, RUNTIME_DISTRIBUTIONS
from envpipeline.export.harbor_sample import accepted_composed, accepted_world_tasks
from envpipeline.sandbox.base import BASE_IMAGE

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def docker(*args: str, check: bool = True, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    run = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout, check=False)
    if check and run.returncode != 0:
        raise AssertionError(f"docker {' '.join(args[:3])}: {run.stdout[-1500:]}{run.stderr[-1500:]}")
    return run


def has_image(tag: str) -> bool:
    return docker("image", "inspect", tag, check=False).returncode == 0


@pytest.fixture(scope="module")
def public_base(tmp_path_factory: pytest.TempPathFactory):
    if shutil.which("docker") is None or docker("info", check=False).returncode != 0:
        pytest.skip("no Docker engine")
    if has_image(PORTABLE_BASE_IMAGE):
        yield PORTABLE_BASE_IMAGE
        return
    if not has_image(BASE_IMAGE) or sys.version_info[:2] != (3, 11):
        pytest.skip(f"no {PORTABLE_BASE_IMAGE} and no {BASE_IMAGE} + CPython 3.11 to stand in for it")
    context = tmp_path_factory.mktemp("standin")
    site = context / "site"
    for name in RUNTIME_DISTRIBUTIONS:
        dist = distribution(name)
        for file in dist.files or []:
            source = Path(str(dist.locate_file(file)))
            if source.is_file() and "__pycache__" not in file.parts and ".." not in file.parts:
                target = site / file
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, target)
    (context / "Dockerfile").write_text(
        f"FROM {BASE_IMAGE}\nCOPY site/ /usr/local/lib/python3.11/dist-packages/\n"
        "ENV PIP_NO_INDEX=1 PIP_BREAK_SYSTEM_PACKAGES=1\n"
    )
    docker("build", "-q", "-t", PORTABLE_BASE_IMAGE, str(context))
    yield PORTABLE_BASE_IMAGE
    docker("rmi", PORTABLE_BASE_IMAGE, check=False)


@pytest.fixture(scope="module")
def images(public_base: str, tmp_path_factory: pytest.TempPathFactory):
    task = export_harbor(accepted_composed(1), tmp_path_factory.mktemp("portable"), mode="portable")[0]
    tag = f"envpipeline-test-portable-{uuid.uuid4().hex[:8]}"
    docker("build", "-q", "-t", tag, str(task / "environment"))
    docker("build", "-q", "-t", f"{tag}-verifier", str(task / "tests"))
    yield task, tag
    docker("rmi", "-f", tag, f"{tag}-verifier", check=False)


def trial(task: Path, tag: str, work: Path, solve: bool) -> tuple[dict, dict[str, str]]:
    """Agent phase (oracle or nothing) as user agent, artifacts out, separate verifier; the reward."""
    agent = docker("run", "-d", "--network", "none", tag).stdout.strip()
    seen: dict[str, str] = {}
    try:
        listed = docker("exec", "-u", "agent", agent, "python3", "/app/envtool.py", "services")
        seen["services"] = listed.stdout
        seen["state"] = docker(
            "exec", "-u", "agent", agent, "cat", "/srv/envtool/state.json", check=False
        ).stderr
        seen["app"] = docker("exec", "-u", "agent", agent, "ls", "-a", "/app").stdout
        if solve:
            docker("exec", agent, "mkdir", "-p", "/solution")
            docker("cp", f"{task / 'solution'}/.", f"{agent}:/solution")
            docker("exec", "-u", "agent", agent, "bash", "/solution/solve.sh")
        for source in ("/srv/envtool/calls.jsonl", "/app/answer.txt"):
            docker("cp", f"{agent}:{source}", str(work / Path(source).name), check=False)
    finally:
        docker("rm", "-f", agent, check=False)
    verifier = docker("run", "-d", "--network", "none", f"{tag}-verifier", "sleep", "infinity").stdout.strip()
    try:
        docker("exec", verifier, "mkdir", "-p", "/srv/envtool", "/app")
        for name, target in (("calls.jsonl", "/srv/envtool/calls.jsonl"), ("answer.txt", "/app/answer.txt")):
            if (work / name).is_file():
                docker("cp", str(work / name), f"{verifier}:{target}")
        docker("exec", verifier, "bash", "/tests/test.sh")
        reward = json.loads(docker("exec", verifier, "cat", "/logs/verifier/reward.json").stdout)
    finally:
        docker("rm", "-f", verifier, check=False)
    return reward, seen


def test_oracle_gets_one_and_the_agent_cannot_read_the_state(images, tmp_path: Path) -> None:
    task, tag = images
    reward, seen = trial(task, tag, tmp_path, solve=True)
    assert reward["reward"] == 1 and reward["criteria_passed"] == reward["criteria_total"], reward
    assert json.loads(seen["services"])["success"] is True
    assert "Permission denied" in seen["state"]
    assert "state.json" not in seen["app"] and "envtool.py" in seen["app"]


def test_nop_gets_zero(images, tmp_path: Path) -> None:
    task, tag = images
    reward, _ = trial(task, tag, tmp_path, solve=False)
    assert reward["reward"] == 0, reward


def world_trial(task: Path, tag: str, work: Path, solve: bool) -> dict:
    """A world task: the agent's whole /app is the artifact, re-materialized in the verifier's image."""
    agent = docker("run", "-d", "--network", "none", tag, "sleep", "infinity").stdout.strip()
    try:
        if solve:
            docker("exec", agent, "mkdir", "-p", "/solution")
            docker("cp", f"{task / 'solution'}/.", f"{agent}:/solution")
            docker("exec", "-w", "/app", agent, "bash", "/solution/solve.sh")
        docker("cp", f"{agent}:/app", str(work / "app"))
    finally:
        docker("rm", "-f", agent, check=False)
    verifier = docker("run", "-d", "--network", "none", f"{tag}-verifier", "sleep", "infinity").stdout.strip()
    try:
        assert (
            docker("exec", verifier, "test", "-e", "/app/manifest.json", check=False).returncode != 0
        )  # no W0
        docker("exec", verifier, "mkdir", "-p", "/app")
        docker("cp", f"{work / 'app'}/.", f"{verifier}:/app")
        docker("exec", verifier, "bash", "/tests/test.sh")
        return json.loads(docker("exec", verifier, "cat", "/logs/verifier/reward.json").stdout)
    finally:
        docker("rm", "-f", verifier, check=False)


def test_world_task_in_the_separate_verifier(public_base: str, tmp_path: Path) -> None:
    worlds = tmp_path / "worlds"
    tasks = accepted_world_tasks(worlds, 1)
    task = export_harbor(tasks, tmp_path / "out", world_root=worlds, mode="portable")[0]
    assert (task / "environment" / "Dockerfile").read_text().startswith(f"FROM {PORTABLE_BASE_IMAGE}\n")
    tag = f"envpipeline-test-world-{uuid.uuid4().hex[:8]}"
    try:
        docker("build", "-q", "-t", tag, str(task / "environment"))
        docker("build", "-q", "-t", f"{tag}-verifier", str(task / "tests"))
        (tmp_path / "oracle").mkdir()
        (tmp_path / "nop").mkdir()
        assert world_trial(task, tag, tmp_path / "oracle", solve=True)["reward"] == 1
        assert world_trial(task, tag, tmp_path / "nop", solve=False)["reward"] == 0
    finally:
        docker("rmi", "-f", tag, f"{tag}-verifier", check=False)
