"""DockerSandbox through the Engine API (#16): no ``docker`` CLI process per session, killed and
timed-out commands, and the warm spare container never outliving its sandbox or process.

Needs a Docker engine and the offline base image (``make base-image``); skipped otherwise.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from envpipeline.models.bundle import Bundle
from envpipeline.sandbox import ownership, reaper
from envpipeline.sandbox.base import BASE_IMAGE, Limits
from envpipeline.sandbox.docker import SESSION_LABEL, DockerSandbox, image_exists
from envpipeline.sandbox.docker_cli import docker
from tests.docker.test_docker_sandbox import make_bundle

REPO = Path(__file__).resolve().parents[2]


def _skip_reason() -> str | None:
    if not DockerSandbox.available():
        return "no Docker engine answers"
    if not image_exists(BASE_IMAGE):
        return f"base image {BASE_IMAGE} is missing: run `make base-image`"
    return None


_REASON = _skip_reason()
pytestmark = [pytest.mark.docker, pytest.mark.skipif(_REASON is not None, reason=_REASON or "")]


def session_containers(owner: str | None = None) -> set[str]:
    """Names of the containers carrying the sandbox's session label and `owner`'s owner label (this process
    by default; the engine is shared with other runs), listed with the CLI, independently."""
    owned = f"label={ownership.OWNER_LABEL}={owner or ownership.owner()}"
    listed = subprocess.run(
        [
            "docker",
            "ps",
            "-a",
            "--format",
            "{{.Names}}",
            "--filter",
            f"label={SESSION_LABEL}",
            "--filter",
            owned,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return set(listed.stdout.split())


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    built = make_bundle(tmp_path_factory.mktemp("engine-bundle"))
    DockerSandbox().ensure_image(built)
    return built


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[list[str]]]:
    """The argv of every process started through subprocess from now on (all threads)."""
    started: list[list[str]] = []
    real = subprocess.Popen

    class Recording(real):  # type: ignore[type-arg, valid-type, misc]
        def __init__(self, args: Any, *rest: Any, **kwargs: Any) -> None:
            started.append([str(a) for a in args] if isinstance(args, list | tuple) else [str(args)])
            super().__init__(args, *rest, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", Recording)
    yield started


def docker_cli_calls(started: list[list[str]]) -> list[list[str]]:
    return [argv for argv in started if argv and os.path.basename(argv[0]) == "docker"]


def test_the_recorder_sees_a_docker_cli_process(spawned: list[list[str]]) -> None:
    """The check below would catch the CLI: a `docker` process started the old way is recorded."""
    docker(["version", "--format", "{{.Server.Version}}"], timeout=30)
    assert docker_cli_calls(spawned) == [["docker", "version", "--format", "{{.Server.Version}}"]]


def test_a_session_runs_without_docker_cli_processes(bundle: Bundle, spawned: list[list[str]]) -> None:
    sandbox = DockerSandbox()
    try:
        for _ in range(2):  # the second session is the spare started ahead
            with sandbox.open(bundle, Limits()) as session:
                session.upload(bundle.paths.solution, "/solution")
                assert session.exec("bash /solution/solve.sh", 30).exit_code == 0
                session.upload(bundle.paths.tests, "/tests")
                session.make_read_only("/tests")
                session.upload(bundle.paths.tests, "/logs/verifier")  # the tmpfs path
                assert session.exec("bash /tests/test.sh", 30).exit_code == 0
                assert session.read_file("/logs/verifier/reward.txt") == b"1\n"
                session.clear("/logs/verifier")
                assert session.read_file("/logs/verifier/reward.txt") is None
                session.kill_all()
        assert sandbox.spares_used == 1
    finally:
        sandbox.close()
    assert docker_cli_calls(spawned) == [], "sessions must talk to the engine, not spawn the CLI"


def test_exec_reports_output_and_exit_codes(bundle: Bundle) -> None:
    sandbox = DockerSandbox(warm_spare=False)
    with sandbox.open(bundle, Limits(output_bytes=1000)) as session:
        done = session.exec("echo out; echo err >&2; exit 7", 10)
        assert (done.exit_code, done.stdout, done.stderr, done.timed_out) == (7, "out\n", "err\n", False)
        assert session.exec("pwd", 10, workdir="/tests").stdout == "/tests\n"
        killed = session.exec("echo before; kill -9 $$", 10)
        assert killed.exit_code == 137 and not killed.timed_out, "a killed command is not a timeout"
        assert killed.stdout == "before\n"
        timed = session.exec("echo started; sleep 30", 1.0)
        assert timed.timed_out and timed.exit_code is None and timed.stdout == "started\n"
        assert 1.0 <= timed.duration_sec < 5
        assert session.exec("echo alive", 10).stdout == "alive\n"


class _DroppedStreams:
    """A stream client whose exec output ends at once, as a connection dropped under load does:
    the command starts (or, with `start` False, never does) and runs on unseen."""

    def __init__(self, real: Any, start: bool) -> None:
        self.real, self.start = real, start

    def exec_start(self, exec_id: str, **kwargs: Any) -> Iterator[tuple[bytes | None, bytes | None]]:
        if self.start:
            self.real.exec_start(exec_id, **kwargs).close()
        return (frame for frame in ())  # a generator: it has close(), as the real stream does


def test_a_dropped_stream_is_not_taken_for_a_finished_command(
    bundle: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a command writes is read after it exits, not when its output stream happens to end;
    a command the engine never started is an error, not an exit status of None."""
    from envpipeline.errors import SandboxError
    from envpipeline.sandbox import docker_engine

    sandbox = DockerSandbox(warm_spare=False)
    with sandbox.open(bundle, Limits()) as session:
        real = docker_engine.stream_engine()
        monkeypatch.setattr(docker_engine, "stream_engine", lambda: _DroppedStreams(real, start=True))
        ran = docker_engine.run(
            session.container, ["sh", "-c", "sleep 6; echo 1 > /tmp/reward"], wait_sec=30, limit=100
        )
        assert (ran.exit_code, ran.cut) == (0, False) and ran.duration_sec >= 6
        monkeypatch.setattr(docker_engine, "stream_engine", lambda: real)
        assert session.read_file("/tmp/reward") == b"1\n"
        monkeypatch.setattr(docker_engine, "stream_engine", lambda: _DroppedStreams(real, start=False))
        with pytest.raises(SandboxError, match="never ran"):
            docker_engine.run(session.container, ["true"], wait_sec=1, limit=100)


def test_output_held_open_by_an_escaped_process_is_cut(bundle: Bundle) -> None:
    """A setsid'd child keeps the exec's output open past the timeout; the session still returns
    (at the timeout or the host-side backstop), killing it."""
    sandbox = DockerSandbox(warm_spare=False)
    with sandbox.open(bundle, Limits()) as session:
        result = session.exec("setsid sleep 100 & sleep 100", 1.0)
        assert result.timed_out and result.exit_code is None
        assert result.duration_sec < 1.0 + 10.0 + 5
        assert "sleep 100" not in session.exec("ps -eo args=", 10).stdout


def test_the_spare_is_removed_with_its_sandbox(bundle: Bundle) -> None:
    before = session_containers()
    sandbox = DockerSandbox()
    first = sandbox.open(bundle, Limits())
    first.close()
    spare = sandbox._spare  # pyright: ignore[reportPrivateUsage]
    assert spare is not None
    spare_session = spare[1].result(timeout=120)
    assert session_containers() - before == {spare_session.container}, "the spare waits"
    other = sandbox.open(bundle, Limits(memory_mb=256))  # other limits: the spare is not used
    assert sandbox.spares_used == 0
    assert other.inspect("{{.HostConfig.Memory}}") == str(256 * 1024 * 1024)
    other.close()
    sandbox.close()
    assert session_containers() == before, "no container outlives the sandbox"


HOLDER = """
import os, sys
from envpipeline.sandbox.base import Limits
from envpipeline.sandbox.docker import DockerSandbox
from envpipeline.terminal.bundle import read_bundle
sandbox = DockerSandbox()
session = sandbox.open(read_bundle(sys.argv[1]), Limits())
sandbox._spare[1].result()  # the spare is up
print(session.exec("echo ran", 10).stdout, end="", flush=True)
if sys.argv[2] == "hard":
    os._exit(0)  # no finalizers: what the reaper is for
"""


def run_holder(bundle: Bundle, how: str) -> str:
    """Run HOLDER to its end; the owner label value of its containers."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(bundle.paths.root), how],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, err = holder.communicate(timeout=300)
    assert holder.returncode == 0, err
    assert out == "ran\n"
    return f"{socket.gethostname()}:{holder.pid}"


def test_the_session_and_spare_are_removed_when_the_process_exits(bundle: Bundle) -> None:
    """A process that never closes its sandbox or session leaves no container when it exits."""
    assert session_containers(run_holder(bundle, "normal")) == set()


def test_the_listing_sees_what_a_hard_exit_leaves(bundle: Bundle, tmp_path: Path) -> None:
    """The check above can fail: skipping the finalizers leaves the session and its spare, which
    the reaper then removes (their owner is gone)."""
    owner = run_holder(bundle, "hard")
    left = session_containers(owner)
    reaped = reaper.reap_stale_sessions(temp=tmp_path)
    assert len(left) == 2
    assert set(reaped.containers) >= left
    assert session_containers(owner) == set()
