"""The instance's daemon as a plan uses it: found alive, started and stopped, and the runs a
stopped daemon or a killed process left behind."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from dagster import DagsterInstance, DagsterRunStatus, RunsFilter

from assets.code_server import SharedCodeServer
from assets.run_tags import OWNER_TAG, PENDING, PLAN_TAG
from envpipeline.processes import process_alive, process_running

REPO_ROOT = Path(__file__).resolve().parents[1]
#: How long to wait for the daemon's first heartbeat before giving up.
DAEMON_START_TIMEOUT_SEC = 120.0
#: A daemon heartbeat older than this is a dead daemon.
DAEMON_HEARTBEAT_MAX_AGE_SEC = 60.0
#: How often a starting daemon is asked for its first heartbeat.
DAEMON_START_POLL_SEC = 0.25
#: How often a daemon left behind is asked whether it has stopped.
STOP_POLL_SEC = 0.5

#: The daemon `running_daemon` started, by pid, in DAGSTER_HOME (removed when it stops).
DAEMON_PID_FILE = "envpipeline-daemon.pid"


def _pid_file() -> Path:
    return Path(os.environ["DAGSTER_HOME"]) / DAEMON_PID_FILE


def _process_running(pid: int) -> bool:
    """A live (not zombie) daemon process has this pid."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return process_running(pid) and b"dagster" in command


def daemon_alive(instance: DagsterInstance, since: float | None = None) -> bool:
    """The instance's daemon is up: its run-queue daemon beat recently (after `since`, when given),
    and the daemon `running_daemon` started, if its pid file is there, still runs (a killed daemon's
    last heartbeat stays fresh for a while)."""
    pid_file = _pid_file()
    if pid_file.exists() and not _process_running(int(pid_file.read_text().split()[0])):
        pid_file.unlink(missing_ok=True)
        return False
    beat = instance.get_daemon_heartbeats().get("QUEUED_RUN_COORDINATOR")
    if beat is None or time.time() - beat.timestamp > DAEMON_HEARTBEAT_MAX_AGE_SEC:
        return False
    return since is None or beat.timestamp >= since


@contextmanager
def running_daemon(
    instance: DagsterInstance,
    workspace_file: Path,
    log: Callable[[str], None],
    code_server: SharedCodeServer | None = None,
) -> Iterator[subprocess.Popen[bytes] | None]:
    """The instance's daemon: the one already running, or one started here and stopped at exit.

    A daemon an earlier plan started and could not stop (its process was killed) is stopped first:
    a fresh one is started under this plan's control. With `code_server`, the daemon loads its
    workspace from that server (`assets.code_server`) once it answers, instead of `workspace_file`."""
    _stop_left_behind(instance, log)
    if daemon_alive(instance):
        log("using the daemon already running on this instance")
        yield None
        return
    # dagster-daemon, with the warm launcher's fork server started at once (assets/warm_daemon.py)
    command, folder = [sys.executable, "-m", "assets.warm_daemon"], workspace_file.parent
    if code_server is not None:
        location = code_server.location
        command += ["--fork-server", location.module, location.working_directory]
        command += ["--code-server", str(code_server.socket), str(code_server.pid)]
        workspace_file = code_server.workspace_file
    command += ["run", "-w", str(workspace_file)]
    log_file = Path(os.environ["DAGSTER_HOME"]) / "daemon.log"
    started = time.time()
    # the instance's run launcher (assets.warm_launcher) is imported from this repository
    path = os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH", "")) if p)
    with log_file.open("ab") as out:
        process = subprocess.Popen(
            command,
            cwd=folder,
            env={**os.environ, "PYTHONPATH": path},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    _pid_file().write_text(f"{process.pid} {os.getpid()}\n")  # the daemon, and the plan that owns it
    try:
        deadline = time.monotonic() + DAEMON_START_TIMEOUT_SEC
        while not daemon_alive(instance, since=started):
            if process.poll() is not None:
                raise RuntimeError(f"the Dagster daemon exited with {process.returncode}; see {log_file}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the Dagster daemon did not start in {DAEMON_START_TIMEOUT_SEC:.0f} s")
            time.sleep(DAEMON_START_POLL_SEC)
        log(f"started the Dagster daemon (pid {process.pid}; log {log_file})")
        yield process
    finally:
        # the daemon and its code server stop side by side (about 0.5 s each)
        _stop(process, code_server.request_shutdown if code_server is not None else None)
        # its last heartbeats would pass for a live daemon for a while: a stopped daemon has none
        instance.wipe_daemon_heartbeats()
        _pid_file().unlink(missing_ok=True)


def _stop_left_behind(instance: DagsterInstance, log: Callable[[str], None]) -> None:
    pid_file = _pid_file()
    if not pid_file.exists():
        return
    pid, *owner = (int(field) for field in pid_file.read_text().split())
    if owner and process_alive(owner[0]):
        return  # another plan's daemon, and that plan is still running: use it
    if _process_running(pid):
        log(f"stopping the daemon (pid {pid}) that an earlier, killed plan left running")
        for sig, wait in ((signal.SIGTERM, 30.0), (signal.SIGKILL, 10.0)):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, sig)
            deadline = time.monotonic() + wait
            while _process_running(pid) and time.monotonic() < deadline:
                time.sleep(STOP_POLL_SEC)
            if not _process_running(pid):
                break
    instance.wipe_daemon_heartbeats()
    pid_file.unlink(missing_ok=True)


def _stop(process: subprocess.Popen[bytes], meanwhile: Callable[[], None] | None = None) -> None:
    """Terminate the daemon (killed after 30 s); `meanwhile` is called once it is told to stop."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
    if meanwhile is not None:
        meanwhile()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


class DaemonStopped(RuntimeError):
    """The daemon a plan relied on exited while runs were queued or running."""


def fail_orphaned_runs(instance: DagsterInstance) -> dict[str, str]:
    """Mark failed every queued or started run that nothing can finish any more (canceled, when it
    was created and never submitted); run id -> why.

    Two kinds are orphaned: a run executed in a process of ours that is gone (killed while
    STARTED; `OWNER_TAG`), and, while no daemon is alive, a plan's run that the stopped daemon left
    queued or started. Failing them keeps the queue and the UI truthful before a plan starts again.
    """
    from envpipeline.sandbox.ownership import owner_gone

    now = time.time()
    daemon_up: bool | None = None  # asked once, and only when a plan's run needs it
    orphaned: dict[str, str] = {}
    for run in instance.get_runs(filters=RunsFilter(statuses=PENDING)):
        process = run.tags.get(OWNER_TAG)
        if process and owner_gone(process, "", now):
            why = f"the process that ran or submitted it ({process}) is gone"
        elif PLAN_TAG in run.tags:
            daemon_up = daemon_alive(instance) if daemon_up is None else daemon_up
            if daemon_up:
                continue
            why = "left behind when the daemon that launched it stopped"
        else:
            continue
        if run.status == DagsterRunStatus.NOT_STARTED:  # created ahead by a plan, never submitted
            why = f"never submitted: {why}"
            instance.report_run_canceled(run, message=why)
        else:
            instance.report_run_failed(run, message=why)
        orphaned[run.run_id] = why
    return orphaned
