"""The instance's run launcher (`assets.warm_launcher`): warm run workers that Dagster still watches.

Against the tiny project of the run-queue tests, on a fresh instance configured by the repo's
`dagster.yaml`, with a real `dagster-daemon`: runs of a module code location are executed by
processes forked from the launcher's fork server; a worker that dies mid-run gets its run marked
failed by the run monitor (without the health check that run would stay STARTED for ever);
terminating a run interrupts its worker; a file code location falls back to Dagster's default.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import time
from pathlib import Path

import pytest
from dagster import DagsterInstance, DagsterRunStatus

from assets.code_server import ModuleLocation, shared_code_server, workspace_location
from assets.daemon_control import running_daemon
from assets.launch import RunSubmitter, Stage, run_plan, runs_of_plan
from assets.warm_launcher import NICE_TAG, WORKER_HOST_TAG, WORKER_PID_TAG, WarmRunLauncher

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
PROJECT = Path(__file__).resolve().parent / "plan_project"
KEYS = ["a", "b"]


@pytest.fixture
def instance(tmp_path, monkeypatch):
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(REPO / "dagster.yaml", home / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    with DagsterInstance.get() as instance:
        instance.add_dynamic_partitions("letters", KEYS)
        yield instance


@pytest.fixture
def workspace(tmp_path) -> Path:
    """The tiny project loaded as a Python module, as the repo's own workspace.yaml loads
    `assets.definitions`. Dagster resolves a module location's `working_directory` against the
    code server's current directory, not against the workspace file, so it is written absolute."""
    path = tmp_path / "workspace_module.yaml"
    path.write_text(
        "load_from:\n"
        "  - python_module:\n"
        "      module_name: tests.dagster.plan_project.defs\n"
        f"      working_directory: {REPO}\n"
        "      location_name: plan_test\n"
    )
    return path


def _letters(out: Path, tags: dict[str, str] | None = None, **folder) -> list[Stage]:
    out.mkdir(exist_ok=True)
    config = {
        "resources": {"folder": {"config": {"path": str(out), **folder}}},
        "execution": {"config": {"in_process": {}}},
    }
    return [Stage("letters", "letters_job", KEYS, run_config=config, tags=tags or {})]


def _fork_servers_of(pid: int) -> list[int]:
    """The multiprocessing fork servers among the children of process `pid`."""
    return _children_running(pid, b"multiprocessing.forkserver")


def _children_running(pid: int, command_part: bytes) -> list[int]:
    """The children of process `pid` whose command line holds `command_part`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            continue
        if parent == pid and command_part in command:
            found.append(int(entry.name))
    return found


def _started_worker(instance: DagsterInstance, deadline_s: float = 120) -> tuple[str, int]:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        for run in instance.get_runs():
            if run.status == DagsterRunStatus.STARTED and WORKER_PID_TAG in run.tags:
                return run.run_id, int(run.tags[WORKER_PID_TAG])
        time.sleep(0.2)
    raise AssertionError("no run started on a warm worker")


def _wait_finished(instance: DagsterInstance, run_id: str, deadline_s: float = 90):
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        run = instance.get_run_by_id(run_id)
        if run is not None and run.is_finished:
            return run
        time.sleep(0.5)
    raise AssertionError(f"run {run_id} did not finish in {deadline_s:.0f} s")


def test_runs_of_a_module_location_run_on_warm_workers(instance, tmp_path, workspace):
    """The daemon starts its fork server before any run asks for one (`assets.warm_daemon`), and
    the workers take the niceness their runs' tag asks for."""
    with running_daemon(instance, workspace, print) as daemon:
        assert daemon is not None
        deadline = time.monotonic() + 60
        while not _fork_servers_of(daemon.pid):
            assert time.monotonic() < deadline, "the daemon started no fork server before its first run"
            time.sleep(0.2)
        [server] = _fork_servers_of(daemon.pid)
        submitter = RunSubmitter(instance, workspace)
        try:
            plan = _letters(tmp_path / "out", tags={NICE_TAG: "7"})
            result = run_plan(instance, submitter, plan, retries=0, daemon=daemon)
        finally:
            submitter.close()
        daemon_pid = daemon.pid
        assert _fork_servers_of(daemon.pid) == [server]  # the launcher used the early one
    assert result.ok and sorted(p.name for p in (tmp_path / "out").glob("?.txt")) == ["a.txt", "b.txt"]
    assert [(tmp_path / "out" / f"{key}.nice").read_text() for key in KEYS] == ["7", "7"]
    runs = runs_of_plan(instance, result.plan_id)
    assert len(runs) == 2 and all(r.status == DagsterRunStatus.SUCCESS for r in runs)
    for run in runs:
        pid = int(run.tags[WORKER_PID_TAG])
        assert pid not in (daemon_pid, os.getpid())
        started = [
            e.message
            for e in instance.all_logs(run.run_id)
            if e.message and e.message.startswith("Started process for run")
        ]
        assert started == [f"Started process for run (pid: {pid})."]  # the run's own worker wrote it


def test_a_worker_that_dies_mid_run_gets_its_run_marked_failed(instance, tmp_path, workspace):
    stages = _letters(tmp_path / "out", sleep=60.0)
    with running_daemon(instance, workspace, print):
        submitter = RunSubmitter(instance, workspace)
        try:
            submitter.submit("letters_job", "a", stages[0].run_config, tags={})
            run_id, pid = _started_worker(instance)
            os.kill(pid, signal.SIGKILL)
            run = _wait_finished(instance, run_id)  # the run monitor polls every 5 s
        finally:
            submitter.close()
    assert run.status == DagsterRunStatus.FAILURE
    assert not (tmp_path / "out" / "a.txt").exists()


def test_terminating_a_run_interrupts_its_worker(instance, tmp_path, workspace):
    stages = _letters(tmp_path / "out", sleep=60.0)
    with running_daemon(instance, workspace, print):
        submitter = RunSubmitter(instance, workspace)
        try:
            submitter.submit("letters_job", "a", stages[0].run_config, tags={})
            run_id, _pid = _started_worker(instance)
            assert instance.run_launcher.terminate(run_id)
            run = _wait_finished(instance, run_id, deadline_s=60)
        finally:
            submitter.close()
    assert run.status == DagsterRunStatus.CANCELED


def test_a_file_location_is_launched_the_default_way(instance, tmp_path):
    workspace = PROJECT / "workspace.yaml"
    with running_daemon(instance, workspace, print) as daemon:
        submitter = RunSubmitter(instance, workspace)
        try:
            result = run_plan(instance, submitter, _letters(tmp_path / "out"), retries=0, daemon=daemon)
        finally:
            submitter.close()
    assert result.ok
    assert all(WORKER_PID_TAG not in r.tags for r in runs_of_plan(instance, result.plan_id))


def test_the_health_check_tells_a_live_worker_from_a_dead_one(instance):
    from dagster._core.launcher.base import WorkerStatus
    from dagster._core.test_utils import create_run_for_test

    launcher = instance.run_launcher
    assert isinstance(launcher, WarmRunLauncher)
    here = {WORKER_HOST_TAG: socket.gethostname()}
    alive = create_run_for_test(instance, job_name="j", tags={**here, WORKER_PID_TAG: str(os.getpid())})
    dead_pid = 2**22 + 12345  # above the kernel's pid limit: never a live process
    dead = create_run_for_test(instance, job_name="j", tags={**here, WORKER_PID_TAG: str(dead_pid)})
    elsewhere = create_run_for_test(
        instance, job_name="j", tags={WORKER_HOST_TAG: "another-host", WORKER_PID_TAG: str(dead_pid)}
    )
    assert launcher.check_run_worker_health(alive).status == WorkerStatus.RUNNING
    assert launcher.check_run_worker_health(dead).status == WorkerStatus.FAILED
    assert launcher.check_run_worker_health(elsewhere).status == WorkerStatus.RUNNING  # cannot tell


def test_the_fork_server_builds_the_service_library_once_for_its_workers():
    """Importing the preload module (as the fork server does) leaves the library built, with its
    tool schemas: a forked worker finds it ready instead of synthesizing it again (about 2.5 s)."""
    import subprocess
    import sys

    probe = (
        "import time\n"
        "import assets.run_worker_preload\n"
        "from envpipeline.services import registry, summary\n"
        "assert registry._REGISTRY._loaded\n"
        "assert len(summary._SCHEMAS) == len(registry.all_services()) > 60\n"
        "start = time.process_time()\n"
        "summary.library_fingerprint()\n"
        "print(time.process_time() - start)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        check=False,
        env={k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert float(done.stdout.split()[-1]) < 1.0  # already built: no synthesis, no schema building


def test_the_workspace_module_location_is_read_from_the_workspace_folder(tmp_path, monkeypatch):
    """The module, working directory and location name a run of the workspace's location will
    carry when the daemon runs in the workspace's folder (as `running_daemon` starts it: a relative
    folder is taken from there, whatever the caller's current directory), for the early fork
    server and the shared code server; nothing for other workspaces."""
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "project"
    folder.mkdir()
    workspace = folder / "workspace.yaml"
    workspace.write_text(
        "load_from:\n  - python_module:\n      module_name: assets.definitions\n      working_directory: .\n"
    )
    expected = ModuleLocation("assets.definitions", str(folder), "assets.definitions")
    assert workspace_location(workspace) == expected
    workspace.write_text("load_from:\n  - python_module: assets.definitions\n")
    assert workspace_location(workspace) == expected
    named = "load_from:\n  - python_module:\n      module_name: m\n      working_directory: sub\n      location_name: here\n"
    workspace.write_text(named)
    assert workspace_location(workspace) == ModuleLocation("m", str(folder / "sub"), "here")
    for other in (
        "load_from:\n  - python_file: defs.py\n",
        "load_from:\n  - python_module: a\n  - python_module: b\n",
        ": not yaml [",
        "[]",
    ):
        workspace.write_text(other)
        assert workspace_location(workspace) is None, other


def test_the_daemon_and_the_submitter_share_one_code_server(instance, tmp_path, workspace):
    """With `shared_code_server`, the daemon starts no code server of its own (it would start a
    new one every 60 s) and the plan's runs still run warm; the server stops with the plan."""
    with shared_code_server(workspace, tmp_path / "code-server.log") as served:
        assert served is not None and served.location.location_name == "plan_test"
        with running_daemon(instance, workspace, print, served) as daemon:
            assert daemon is not None
            submitter = RunSubmitter(instance, served.workspace_file)
            try:
                result = run_plan(instance, submitter, _letters(tmp_path / "out"), retries=0, daemon=daemon)
            finally:
                submitter.close()
            assert _children_running(daemon.pid, b"dagster api grpc") == []
            assert _fork_servers_of(daemon.pid)
        socket_folder = served.socket.parent
        assert socket_folder.exists()
    assert not socket_folder.exists()
    assert result.ok
    runs = runs_of_plan(instance, result.plan_id)
    assert len(runs) == 2 and all(WORKER_PID_TAG in run.tags for run in runs)
    assert {run.remote_job_origin.location_name for run in runs if run.remote_job_origin} == {"plan_test"}


def test_a_project_that_does_not_load_stops_the_plan_at_once_and_says_where_to_look(instance, tmp_path):
    """The shared code server of a broken module exits: the submitter and the daemon both say so
    within seconds (not after the start timeouts) and point at the logs."""
    broken = tmp_path / "workspace_broken.yaml"
    broken.write_text(
        "load_from:\n  - python_module:\n      module_name: tests.dagster.no_such_module\n"
        f"      working_directory: {REPO}\n"
    )
    started = time.monotonic()
    with shared_code_server(broken, tmp_path / "code-server.log") as served:
        assert served is not None
        with pytest.raises(RuntimeError, match=r"exited before it answered; see .*code-server\.log"):
            served.wait_until_serving()
        daemon_fails = pytest.raises(RuntimeError, match=r"daemon exited with 1; see .*daemon\.log")
        with daemon_fails, running_daemon(instance, broken, print, served):
            pass
    assert time.monotonic() - started < 60
    daemon_log = Path(os.environ["DAGSTER_HOME"]) / "daemon.log"
    assert "code server (pid" in daemon_log.read_text()
    assert "no_such_module" in (tmp_path / "code-server.log").read_text()
