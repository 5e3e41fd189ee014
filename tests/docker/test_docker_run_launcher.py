"""deploy/docker-local: runs launched by DockerRunLauncher in the project image, the lake on the host.

A fresh DAGSTER_HOME gets the profile (its root `/srv/envpipeline` replaced by a temp folder, as
its header says), and one composition batch and one terminal seed are submitted through the
instance exactly as `envpipeline run` submits them (`RunSubmitter`); with no run coordinator
configured the instance launches them at once, each in a container of `envpipeline-project`.
The test then reads what a user would look at: the runs' status and container tags, the rows the
containers wrote into the host's lake, and `docker ps -a` (nothing left behind).

Needs a Docker engine and the base image (`make base-image`); the project image is brought up to
date by `scripts/build-project-image.sh` (what `make image` runs: a no-op when current, the source
layers only after a code change). Skipped with the reason when any of these is missing.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from dagster import AssetKey, DagsterEventType, DagsterInstance, DagsterRunStatus

from assets.launch import RunSubmitter
from envpipeline.sandbox.base import BASE_IMAGE
from envpipeline.store.lake import Lake

REPO = Path(__file__).resolve().parents[2]
PROFILE = REPO / "deploy" / "docker-local"
WORKSPACE = PROFILE / "workspace.yaml"
#: The root the profile mounts; a real deployment replaces it by its own, the test by a temp folder.
PROFILE_ROOT = "/srv/envpipeline"
IMAGE = "envpipeline-project:latest"
BATCH = "batch-0000"
CANDIDATES = 6
SEED = "fam-text-parsing-medium-0"
RUN_TIMEOUT_SEC = 900.0
BUILD_TIMEOUT_SEC = 1800


def _engine_and_base_image() -> str | None:
    try:
        info = subprocess.run(["docker", "info"], capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return "no docker CLI or the engine does not answer"
    if info.returncode != 0:
        return "no Docker engine answers"
    if subprocess.run(["docker", "image", "inspect", BASE_IMAGE], capture_output=True).returncode != 0:
        return f"base image {BASE_IMAGE} is missing: run `make base-image`"
    return None


_REASON = _engine_and_base_image()
pytestmark = [
    pytest.mark.docker,
    pytest.mark.slow,
    pytest.mark.skipif(_REASON is not None, reason=_REASON or ""),
]


@pytest.fixture(scope="module")
def project_image() -> str:
    """The current project image's tag (built here when the tree changed since the last build)."""
    try:
        built = subprocess.run(
            [str(REPO / "scripts" / "build-project-image.sh")],
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT_SEC,
            cwd=REPO,
        )
    except subprocess.TimeoutExpired:
        pytest.skip(f"the project image did not build in {BUILD_TIMEOUT_SEC} s: run `make image`")
    if built.returncode != 0:
        pytest.skip(f"the project image cannot be built here (run `make image`): {built.stderr[-2000:]}")
    return built.stdout.split()[-1]


@pytest.fixture
def instance(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    root = tmp_path_factory.mktemp("docker-local").resolve()
    home, data = root / "dagster_home", root / "data"
    home.mkdir()
    data.mkdir()
    profile = (PROFILE / "dagster.yaml").read_text()
    assert f"- {PROFILE_ROOT}:{PROFILE_ROOT}" in profile, "the profile no longer mounts its root"
    (home / "dagster.yaml").write_text(profile.replace(PROFILE_ROOT, str(root)))
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    monkeypatch.setenv("ENVPIPELINE_HOME", str(data))
    with DagsterInstance.get() as instance:
        yield instance


def _run_config(data: Path, **resources: dict) -> dict:
    return {
        "execution": {"config": {"in_process": {}}},
        "loggers": {"console": {"config": {"log_level": "WARNING"}}},
        "resources": {"store": {"config": {"home": str(data)}}, **resources},
    }


def _wait(instance: DagsterInstance, run_ids: list[str]) -> dict[str, DagsterRunStatus]:
    deadline = time.monotonic() + RUN_TIMEOUT_SEC
    while True:
        runs = {run_id: instance.get_run_by_id(run_id) for run_id in run_ids}
        statuses = {run_id: run.status for run_id, run in runs.items() if run is not None}
        if len(statuses) == len(run_ids) and all(
            s.name in ("SUCCESS", "FAILURE", "CANCELED") for s in statuses.values()
        ):
            return statuses
        if time.monotonic() > deadline:
            return statuses
        time.sleep(2.0)


def _failure_story(instance: DagsterInstance, run_id: str) -> str:
    """The run's error events, for the assertion message of a run that did not succeed."""
    lines = []
    for entry in instance.all_logs(run_id):
        event = entry.dagster_event
        if event is not None and event.event_type in (
            DagsterEventType.RUN_FAILURE,
            DagsterEventType.STEP_FAILURE,
            DagsterEventType.ENGINE_EVENT,
        ):
            lines.append(f"{event.event_type_value}: {entry.message}")
            if event.event_specific_data is not None and getattr(event.event_specific_data, "error", None):
                lines.append(str(event.event_specific_data.error.to_string()))  # type: ignore[union-attr]
    return "\n".join(lines[-20:])


def _containers_of(run_ids: list[str]) -> list[str]:
    found = []
    for run_id in run_ids:
        listed = subprocess.run(
            ["docker", "ps", "-a", "-q", "--filter", f"label=dagster/run_id={run_id}"],
            capture_output=True,
            text=True,
        )
        found += listed.stdout.split()
    return found


def test_a_batch_and_a_seed_run_in_project_containers_and_write_the_hosts_lake(project_image, instance):
    from dagster_docker import DockerRunLauncher

    assert isinstance(instance.run_launcher, DockerRunLauncher)
    data = Path(os.environ["ENVPIPELINE_HOME"])
    instance.add_dynamic_partitions("composition_batches", [BATCH])
    instance.add_dynamic_partitions("terminal_seeds", [SEED])
    submitter = RunSubmitter(instance, WORKSPACE)
    try:
        batch_run = submitter.submit(
            "compose_batch_job",
            BATCH,
            _run_config(data, composer={"config": {"candidates_per_batch": CANDIDATES}}),
            {},
        )
        seed_run = submitter.submit("terminal_seed_job", SEED, _run_config(data), {})
    finally:
        submitter.close()
    run_ids = [batch_run, seed_run]

    statuses = _wait(instance, run_ids)
    for run_id in run_ids:
        assert statuses.get(run_id) == DagsterRunStatus.SUCCESS, _failure_story(instance, run_id)

    # each ran in its own container of the project image, launched by the Docker run launcher
    containers = set()
    for run_id in run_ids:
        run = instance.get_run_by_id(run_id)
        assert run is not None
        assert run.tags["dagster/image"] == IMAGE
        containers.add(run.tags["docker/container_id"])
        launches = [
            e.message.removeprefix("[DockerRunLauncher] ")  # the prefix dagster-docker 0.29 adds
            for e in instance.all_logs(run_id, of_type=DagsterEventType.ENGINE_EVENT)
            if "Launching run in a new container" in e.message
        ]
        assert launches == [
            f"Launching run in a new container {run.tags['docker/container_id']} with image {IMAGE}"
        ]
    assert len(containers) == 2
    image_id = subprocess.run(
        ["docker", "image", "inspect", "-f", "{{.Id}}", IMAGE], capture_output=True, text=True
    ).stdout.strip()
    current_id = subprocess.run(
        ["docker", "image", "inspect", "-f", "{{.Id}}", project_image], capture_output=True, text=True
    ).stdout.strip()
    assert image_id == current_id, f"{IMAGE} is not the image built from this tree ({project_image})"

    # what the containers wrote is in the host's lake, at the paths the host reads
    lake = Lake(data)
    specs = lake.read("composed_task_specs", BATCH)
    assert len(specs) == CANDIDATES
    verified = lake.read("verified_composed_tasks", BATCH)
    assert verified and {r["status"] for r in verified} <= {"accepted", "rejected"}
    assert {r["_run_id"] for r in [*specs, *verified]} == {batch_run}
    [row] = lake.read("seed_verification", SEED)
    assert row["_run_id"] == seed_run
    # the local sandbox (bubblewrap) in the run container, over the container's own /usr: the
    # base image's tree, which the verdict names as the host's (ENVPIPELINE_ROOTFS=host)
    assert (row["backend"], row["status"]) == ("local", "verified"), row["verdict"]
    assert json.loads(row["oracle_rewards"]) == [1.0, 1.0] and row["nop_reward"] == 0.0
    assert any("host /usr stands in" in reason for reason in json.loads(row["reasons"]))
    written = ["composed_task_specs", "verified_composed_tasks", "composed_rollouts", "terminal_seeds"]
    materialized = [
        record
        for asset in [*written, "seed_verification"]
        for record in instance.fetch_materializations(AssetKey(asset), limit=50).records
    ]
    assert {r.run_id for r in materialized} == set(run_ids)

    # auto_remove: the containers are gone once their runs finished
    deadline = time.monotonic() + 60.0
    while (left := _containers_of(run_ids)) and time.monotonic() < deadline:
        time.sleep(1.0)
    assert left == [], f"containers left behind: {left}"
