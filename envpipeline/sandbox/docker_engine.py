"""The Docker Engine API as the sandbox calls it: one client per process, no ``docker`` CLI process.

Every session call (create, start, exec, copy, remove) is an HTTP request to the engine's socket
through the ``docker`` SDK's low-level `docker.APIClient`, instead of a ``docker`` CLI process per
call. Two clients share the connection settings of the CLI (``DOCKER_HOST``, ``DOCKER_TLS_VERIFY``,
``DOCKER_CERT_PATH``): `engine` for short requests, with a timeout, and `stream_engine` for exec
output, which blocks as long as a command runs (its timeout is the command's own, kept by `run`).
Engine errors become `SandboxError`.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from envpipeline.errors import MissingExtraError, SandboxError

try:
    import docker
    import docker.errors
    import requests.exceptions
    from docker.utils import kwargs_from_env
except ImportError as missing:
    raise MissingExtraError("sandbox", missing, needed_by=__name__) from missing

#: Seconds a short request (create, start, inspect, remove, copy) may take.
REQUEST_TIMEOUT_SEC = 120.0
#: Seconds `run` waits for the engine to report an exec's status once its output ended.
EXIT_STATUS_WAIT_SEC = 5.0

T = TypeVar("T")

_clients: dict[str, docker.APIClient] = {}
_clients_guard = threading.Lock()

#: What a failed engine request raises (the SDK's errors, and the transport's under them).
ENGINE_ERRORS: tuple[type[BaseException], ...] = (
    docker.errors.DockerException,
    requests.exceptions.RequestException,
    OSError,
)


def _client(kind: str, timeout: float | None) -> docker.APIClient:
    with _clients_guard:
        client = _clients.get(kind)
        if client is None:
            version = _clients["control"].api_version if "control" in _clients else None
            settings = cast(dict[str, Any], kwargs_from_env())
            client = docker.APIClient(version=version, timeout=timeout, **settings)  # pyright: ignore[reportArgumentType]
            _clients[kind] = client
        return client


def engine() -> docker.APIClient:
    """The process's client for short requests (SandboxError when no engine answers)."""
    return call(lambda: _client("control", REQUEST_TIMEOUT_SEC))


def stream_engine() -> docker.APIClient:
    """The process's client for exec output streams (no read timeout: `run` keeps the time)."""
    engine()  # the control client first: the stream client reuses its negotiated API version
    return call(lambda: _client("stream", None))


def call(request: Callable[[], T], what: str = "docker engine") -> T:
    """`request()`, its engine errors raised as SandboxError."""
    try:
        return request()
    except ENGINE_ERRORS as e:
        raise SandboxError(f"{what} failed: {e}") from e


def ping(timeout: float) -> bool:
    """Whether an engine answers within `timeout` seconds (a throwaway client: no version lookup)."""
    try:
        settings = cast(dict[str, Any], kwargs_from_env())
        probe = docker.APIClient(version="1.24", timeout=timeout, **settings)  # pyright: ignore[reportArgumentType]
        try:
            return bool(probe.ping())
        finally:
            probe.close()
    except ENGINE_ERRORS:
        return False


@dataclass
class Ran:
    """The outcome of one exec."""

    exit_code: int | None
    stdout: bytes
    stderr: bytes
    truncated: bool
    #: the host gave up waiting (the stream was cut; `exit_code` is None)
    cut: bool
    duration_sec: float


class _Drain:
    """Starts an exec and reads its demultiplexed output in a thread (so the caller's wait covers
    the start request too), keeping the first `limit` bytes of each stream."""

    def __init__(self, start: Callable[[], Any], limit: int) -> None:
        self.out, self.err = bytearray(), bytearray()
        self.truncated = False
        self.stream: Any = None
        self.error: BaseException | None = None
        self._start, self._limit = start, limit
        self.thread = threading.Thread(target=self._drain, daemon=True)
        self.thread.start()

    def _keep(self, into: bytearray, chunk: bytes | None) -> None:
        if not chunk:
            return
        room = self._limit - len(into)
        if len(chunk) > room:
            self.truncated = True
        if room > 0:
            into += chunk[:room]

    def _drain(self) -> None:
        try:
            self.stream = self._start()
        except ENGINE_ERRORS as e:
            self.error = e
            return
        frames: Iterator[tuple[bytes | None, bytes | None]] = iter(self.stream)
        with contextlib.suppress(*ENGINE_ERRORS, ValueError, AttributeError):  # a cut stream ends here
            for out, err in frames:
                self._keep(self.out, out)
                self._keep(self.err, err)

    def close(self) -> None:
        if self.stream is not None:
            with contextlib.suppress(*ENGINE_ERRORS):
                self.stream.close()


def run(
    container: str,
    argv: Sequence[str],
    *,
    wait_sec: float,
    limit: int,
    workdir: str | None = None,
    on_cut: Callable[[], None] | None = None,
) -> Ran:
    """Run `argv` in `container` (no TTY, no stdin, the image's environment only).

    Waits `wait_sec` for the output to end; past it, calls `on_cut` (which should kill the command)
    and cuts the stream, and the result has ``cut`` and no exit code.
    """
    control = engine()
    created = call(
        lambda: control.exec_create(container, list(argv), stdout=True, stderr=True, workdir=workdir),
        "docker exec",
    )
    exec_id = created["Id"]
    streams = stream_engine()
    started = time.monotonic()
    drain = _Drain(lambda: streams.exec_start(exec_id, stream=True, demux=True), limit)
    drain.thread.join(wait_sec)
    cut = drain.thread.is_alive()
    if cut and on_cut is not None:
        on_cut()
    drain.close()
    drain.thread.join(5.0)
    if drain.error is not None:
        raise SandboxError(f"docker exec failed: {drain.error}") from drain.error
    code = None
    if not cut:
        # the output ended; a stream dropped under load ends it too, while the command still runs:
        # what it writes is read only once the engine says it exited
        code = _exit_code(control, exec_id, started + wait_sec)
        if code is None:
            cut = True
            if on_cut is not None:
                on_cut()
    duration = time.monotonic() - started
    return Ran(code, bytes(drain.out), bytes(drain.err), drain.truncated, cut, duration)


def _exit_code(control: docker.APIClient, exec_id: str, deadline: float) -> int | None:
    """The exec's exit status once the engine reports it ended; None if it still runs at
    `deadline` (waiting EXIT_STATUS_WAIT_SEC at least); SandboxError if it never started.

    An exec not started yet also reads "not running" (with no exit status and no pid): a stream
    that ended before the engine started the command must not pass for a command that finished."""
    deadline = max(deadline, time.monotonic() + EXIT_STATUS_WAIT_SEC)
    while True:
        state = call(lambda: control.exec_inspect(exec_id), "docker exec inspect")
        code = state.get("ExitCode")
        if not state.get("Running") and isinstance(code, int):
            return code
        if time.monotonic() > deadline:
            if state.get("Running"):
                return None
            raise SandboxError(f"docker exec {exec_id[:12]} never ran: {state}")
        time.sleep(0.01)
