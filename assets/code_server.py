"""One code server for a plan's daemon and its submitter, instead of three.

Left to itself, ``dagster-daemon`` starts a code server for the workspace's code location and,
to pick up code changes, starts a new one every 60 s (Dagster's ``RELOAD_WORKSPACE_INTERVAL``);
the plan's `RunSubmitter` starts one more. Each loads the project: about 3 s of CPU on this
project, so a 100 s plan paid for three loads. `shared_code_server` starts one server for the
workspace's module location (``dagster api grpc``, kept alive by the plan's heartbeats: it stops
itself 30 s after the plan is gone) and a workspace file that points both at it, as a deployment
with a standing code server does; the daemon then only asks that server for the repository again
every 60 s. A workspace of anything else than one module location is used as it is.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

from envpipeline.processes import process_running

#: The server stops itself when no heartbeat came for this long (the plan that started it died).
HEARTBEAT_TIMEOUT_SEC = 30
HEARTBEAT_EVERY_SEC = 5.0
SERVE_TIMEOUT_SEC = 120.0


@dataclass(frozen=True)
class ModuleLocation:
    """A workspace's code location loaded from a Python module."""

    module: str
    #: absolute: a relative one is taken from the workspace file's folder, where `running_daemon`
    #: starts the daemon (whose code servers resolve it against their current directory)
    working_directory: str
    location_name: str


@dataclass(frozen=True)
class SharedCodeServer:
    location: ModuleLocation
    socket: Path
    #: a workspace file whose only location is this server
    workspace_file: Path
    pid: int
    log_file: Path

    def wait_until_serving(self, timeout_s: float = SERVE_TIMEOUT_SEC) -> None:
        wait_until_serving(self.socket, timeout_s, self.pid, self.log_file)

    def request_shutdown(self) -> None:
        """Ask the server to shut down, without waiting for it (the plan's daemon, which stops at
        the same time, may still have calls open); `shared_code_server` waits for it at exit."""
        _request_shutdown(self.socket)


def workspace_location(workspace_file: Path) -> ModuleLocation | None:
    """The workspace's only code location, when it is a Python module; None otherwise."""
    try:
        entries = (yaml.safe_load(workspace_file.read_text()) or {}).get("load_from") or []
    except (OSError, AttributeError, yaml.YAMLError):
        return None
    if len(entries) != 1 or not isinstance(entries[0], dict) or "python_module" not in entries[0]:
        return None
    entry = entries[0]["python_module"]
    settings = entry if isinstance(entry, dict) else {"module_name": entry}
    module, folder = settings.get("module_name"), settings.get("working_directory")
    if not isinstance(module, str):
        return None
    return ModuleLocation(
        module=module,
        working_directory=str((workspace_file.parent / folder).resolve())
        if isinstance(folder, str)
        else str(workspace_file.parent.resolve()),
        location_name=str(settings.get("location_name") or module),
    )


def wait_until_serving(
    socket: Path, timeout_s: float = SERVE_TIMEOUT_SEC, pid: int | None = None, log_file: Path | None = None
) -> None:
    """Block until the code server on `socket` answers (it loaded the project first); fail at
    once when its process `pid` exits first (a project that does not load)."""
    from dagster._grpc.client import DagsterGrpcClient

    client = DagsterGrpcClient(socket=str(socket))
    deadline = time.monotonic() + timeout_s
    see = f"; see {log_file}" if log_file is not None else ""
    while True:
        try:
            client.ping("")
            return
        except Exception as error:  # not listening yet: grpc's errors have no common public base
            if pid is not None and not process_running(pid):
                raise RuntimeError(f"the code server (pid {pid}) exited before it answered{see}") from error
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"the code server on {socket} did not answer in {timeout_s:.0f} s{see}"
                ) from error
            time.sleep(0.2)


@contextlib.contextmanager
def shared_code_server(workspace_file: Path, log_file: Path) -> Iterator[SharedCodeServer | None]:
    """A code server for the workspace's module location and a workspace pointing at it (stopped
    at exit); None, and nothing started, when the workspace is not a single module location."""
    location = workspace_location(workspace_file)
    if location is None:
        yield None
        return
    folder = Path(tempfile.mkdtemp(prefix="envpipeline-code-"))  # short: a socket path has 107 bytes
    socket = folder / "server.sock"
    workspace = folder / "workspace.yaml"
    grpc_server = {"socket": str(socket), "location_name": location.location_name}
    workspace.write_text(yaml.safe_dump({"load_from": [{"grpc_server": grpc_server}]}))
    command = [
        # (through `quick_exit`: the server exits without the interpreter's last collections)
        sys.executable, "-m", "envpipeline.quick_exit", "dagster", "api", "grpc",
        "--module-name", location.module,
        "--working-directory", location.working_directory,
        "--location-name", location.location_name,
        "--socket", str(socket),
        "--heartbeat", "--heartbeat-timeout", str(HEARTBEAT_TIMEOUT_SEC),
        "--log-level", "warning",
    ]  # fmt: skip
    path = os.pathsep.join(p for p in (location.working_directory, os.environ.get("PYTHONPATH", "")) if p)
    with log_file.open("ab") as out:
        process = subprocess.Popen(
            command,
            cwd=location.working_directory,
            env={**os.environ, "PYTHONPATH": path},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    served = SharedCodeServer(location, socket, workspace, process.pid, log_file)
    done = threading.Event()
    beats = threading.Thread(
        target=_heartbeats, args=(socket, done), name="code-server-heartbeat", daemon=True
    )
    beats.start()
    try:
        yield served
    finally:
        done.set()
        beats.join(timeout=HEARTBEAT_EVERY_SEC + 1)
        _stop(process, socket)
        shutil.rmtree(folder, ignore_errors=True)


def _heartbeats(socket: Path, done: threading.Event) -> None:
    from dagster._grpc.client import DagsterGrpcClient

    client = DagsterGrpcClient(socket=str(socket))
    while not done.wait(HEARTBEAT_EVERY_SEC):
        with contextlib.suppress(Exception):  # not serving yet, or stopping
            client.heartbeat("envpipeline-plan")


def _request_shutdown(socket: Path) -> None:
    from dagster._grpc.client import DagsterGrpcClient

    with contextlib.suppress(Exception):  # gone already, or shutting down
        DagsterGrpcClient(socket=str(socket)).shutdown_server(timeout=5)


def _stop(process: subprocess.Popen[bytes], socket: Path) -> None:
    """Ask the server to shut down (a SIGTERM leaves it waiting up to 60 s for open calls, the
    daemon's among them), and kill it if it is still there 2 s later: it holds no state."""
    if process.poll() is not None:
        return
    _request_shutdown(socket)
    try:
        process.wait(2.0)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
