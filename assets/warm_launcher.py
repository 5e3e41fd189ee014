"""A run launcher whose run workers start warm: forked from a process that imported the project.

Dagster's `DefaultRunLauncher` asks the code server to start every run in a fresh interpreter
(``multiprocessing`` "spawn"), which imports Dagster and the project again before the first step:
about 2 s of CPU per run on this project, more than most of the default job's runs then spend on
their work. `WarmRunLauncher` starts the run worker in a process forked from a
``multiprocessing`` fork server that imported the run's code location module once (the first
time it launches a run of that location), and then what a run worker would import on every run
(`assets.run_worker_preload`). The worker then does what ``dagster api execute_run``
does: it loads the job from the run's code origin, executes it against the instance and writes
every event to the event log, so a run launched here is the same run in the UI, with the same
logs, checks and lineage.

Runs this launcher cannot serve warm go the default way (`DefaultRunLauncher`): a code location
loaded from a file rather than a module, or run by another interpreter than the daemon's.

The worker's pid is a run tag: the run monitor (``run_monitoring`` in ``dagster.yaml``) asks
`check_run_worker_health`, so a worker that died mid-run gets its run marked failed, and
`terminate` interrupts the worker the way Ctrl-C does.

Configure it in ``dagster.yaml``::

    run_launcher:
      module: assets.warm_launcher
      class: WarmRunLauncher
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.forkserver
import os
import signal
import socket
import sys
import threading
from typing import TYPE_CHECKING

from dagster import DefaultRunLauncher
from dagster._core.launcher.base import CheckRunHealthResult, LaunchRunContext, WorkerStatus

from envpipeline.processes import process_running

if TYPE_CHECKING:
    from dagster import DagsterRun
    from dagster._core.instance.ref import InstanceRef

#: Imported by the fork server after the code location's module (see that module).
PRELOAD_MODULE = "assets.run_worker_preload"
#: Run tags: the warm worker's pid, and the host it runs on.
WORKER_PID_TAG = "envpipeline/worker_pid"
WORKER_HOST_TAG = "envpipeline/worker_host"
#: Run tag: a niceness (0-19) the warm worker takes before it executes the run (`os.nice`), so
#: that runs off a plan's longest chain fill idle cores without slowing that chain.
NICE_TAG = "envpipeline/nice"

#: The fork server of this process (one per process, as `multiprocessing` keeps it): what it
#: preloaded, as (interpreter, working directory, module).
_fork_server_lock = threading.Lock()
_fork_server_target: tuple[str, str, str] | None = None


def _module_target(run: DagsterRun) -> tuple[str, str, str] | None:
    """(interpreter, working directory, module) of a run whose code location is a Python module."""
    origin = run.job_code_origin
    if origin is None:
        return None
    pointer = origin.repository_origin.code_pointer
    module = getattr(pointer, "module", None)
    if not isinstance(module, str):
        return None
    working_directory = os.path.abspath(getattr(pointer, "working_directory", None) or os.getcwd())
    return origin.executable_path, working_directory, module


def start_fork_server(module: str, working_directory: str) -> bool:
    """Start this process's fork server for `module` now, before the first run asks for it
    (`assets.warm_daemon`); whether it serves that module."""
    return _fork_server_for((sys.executable, os.path.abspath(working_directory), module))


def _fork_server_for(target: tuple[str, str, str]) -> bool:
    """Start this process's fork server with `target`'s module imported; whether it serves `target`.

    The module is imported from the working directory of the code location: it is put on
    ``sys.path`` while the server starts (the server copies ``sys.path``), then taken off again."""
    global _fork_server_target
    executable, working_directory, module = target
    if executable != sys.executable:
        return False
    with _fork_server_lock:
        if _fork_server_target is None:
            multiprocessing.set_forkserver_preload([module, PRELOAD_MODULE])
            added = working_directory not in sys.path
            if added:
                sys.path.insert(0, working_directory)
            try:
                multiprocessing.forkserver.ensure_running()
            finally:
                if added:
                    sys.path.remove(working_directory)
            _fork_server_target = target
        return _fork_server_target == target


def _execute_run(run_id: str, instance_ref: InstanceRef, nice: int = 0) -> None:
    """The warm worker: what ``dagster api execute_run`` does, in a process forked warm."""
    from dagster import DagsterInstance
    from dagster._cli.api import _execute_run_command_body  # pyright: ignore[reportPrivateUsage]
    from dagster._utils.interrupts import capture_interrupts

    if nice > 0:  # the run's `NICE_TAG`
        os.nice(nice)

    with capture_interrupts(), DagsterInstance.from_ref(instance_ref) as instance:
        _execute_run_command_body(
            run_id, instance, write_stream_fn=lambda _event: None, set_exit_code_on_failure=False
        )


class WarmRunLauncher(DefaultRunLauncher):
    """Launches each run in a process forked from a fork server that imported its code location."""

    def launch_run(self, context: LaunchRunContext) -> None:
        run = context.dagster_run
        target = _module_target(run)
        if target is None or not _fork_server_for(target):
            super().launch_run(context)
            return
        process = multiprocessing.get_context("forkserver").Process(
            target=_execute_run,
            args=(run.run_id, self._instance.get_ref(), _niceness(run)),
            name=f"dagster-run-{run.run_id[:8]}",
        )
        process.start()
        self._instance.add_run_tags(
            run.run_id, {WORKER_PID_TAG: str(process.pid), WORKER_HOST_TAG: socket.gethostname()}
        )
        self._run_ids.add(run.run_id)

    def _worker_pid(self, run: DagsterRun) -> int | None:
        pid, host = run.tags.get(WORKER_PID_TAG), run.tags.get(WORKER_HOST_TAG)
        return int(pid) if pid and host == socket.gethostname() else None

    def terminate(self, run_id: str) -> bool:
        run = self._instance.get_run_by_id(run_id)
        if run is None or run.is_finished:
            return False
        pid = self._worker_pid(run)
        if pid is None:
            return super().terminate(run_id)
        self._instance.report_run_canceling(run)
        try:
            os.kill(pid, signal.SIGINT)  # the worker turns it into an interrupt at a safe point
        except ProcessLookupError:
            return False
        return True

    @property
    def supports_check_run_worker_health(self) -> bool:
        return True

    def check_run_worker_health(self, run: DagsterRun) -> CheckRunHealthResult:
        pid = self._worker_pid(run)
        if pid is None:
            # launched the default way, which Dagster does not check either (or on another host)
            return CheckRunHealthResult(WorkerStatus.RUNNING, "not a warm worker of this host")
        if process_running(pid):
            return CheckRunHealthResult(WorkerStatus.RUNNING)
        return CheckRunHealthResult(WorkerStatus.FAILED, f"the run worker (pid {pid}) is gone")


def _niceness(run: DagsterRun) -> int:
    """The run's `NICE_TAG` as a niceness in 0-19 (0 when missing or not a number)."""
    try:
        return min(max(int(run.tags.get(NICE_TAG, "0")), 0), 19)
    except ValueError:
        return 0
