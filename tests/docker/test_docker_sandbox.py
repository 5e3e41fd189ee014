"""DockerSandbox against a real engine: content-addressed images, limits, timeouts, cleanup.

Needs a Docker engine and the offline base image (``make base-image``); skipped otherwise.
"""

from __future__ import annotations

import dataclasses
import hashlib
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from envpipeline.errors import SandboxError
from envpipeline.models.bundle import Bundle
from envpipeline.sandbox import docker_engine
from envpipeline.sandbox.base import BASE_IMAGE, EnvironmentBuildError, Limits
from envpipeline.sandbox.checked import OUTPUT_TRIES
from envpipeline.sandbox.docker import (
    SESSION_LABEL,
    DockerSandbox,
    DockerSession,
    base_image_id,
    environment_digest,
    image_exists,
    image_tag,
)
from envpipeline.sandbox.registries import BuildNetwork
from envpipeline.terminal.bundle import read_bundle, write_files
from envpipeline.terminal.families.base import STANDARD_DOCKERFILE


def _skip_reason() -> str | None:
    if not DockerSandbox.available():
        return "no Docker engine answers (docker version failed or timed out)"
    if not image_exists(BASE_IMAGE):
        return f"base image {BASE_IMAGE} is missing: run `make base-image`"
    return None


_REASON = _skip_reason()
pytestmark = [pytest.mark.docker, pytest.mark.skipif(_REASON is not None, reason=_REASON or "")]

SOLVE_SH = "#!/bin/bash\ntr a-z A-Z < /app/input.txt > /app/output.txt\n"
TEST_SH = """#!/bin/bash
mkdir -p /logs/verifier
if [ "$(cat /app/output.txt)" = "HELLO" ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
"""


def make_bundle(root: Path, dockerfile: str = STANDARD_DOCKERFILE, marker: str = "") -> Bundle:
    """A tiny bundle: uppercase /app/input.txt into /app/output.txt."""
    files: dict[str, str | bytes] = {
        "task.toml": 'version = "1.0"\n\n[verifier]\ntimeout_sec = 60.0\n',
        "instruction.md": "Uppercase /app/input.txt into /app/output.txt.\n",
        "environment/Dockerfile": dockerfile,
        "environment/app/input.txt": "hello",
        "solution/solve.sh": SOLVE_SH,
        "tests/test.sh": TEST_SH,
    }
    if marker:
        files["environment/app/marker.txt"] = marker
    write_files(root, files)
    return read_bundle(root)


def containers_of(session: DockerSession) -> list[str]:
    """Ids of the containers (running or not) labelled with this session."""
    listed = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label={SESSION_LABEL}={session.session_id}"],
        capture_output=True,
        text=True,
        check=True,
    )
    return listed.stdout.split()


@pytest.fixture(scope="module")
def sandbox() -> DockerSandbox:
    return DockerSandbox()


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    return make_bundle(tmp_path_factory.mktemp("bundle"))


@pytest.fixture
def session(sandbox: DockerSandbox, bundle: Bundle) -> Iterator[DockerSession]:
    with sandbox.open(
        bundle, Limits(cpus=1, memory_mb=512, pids=128, file_size_mb=8, output_bytes=10_000)
    ) as opened:
        yield opened


def test_tag_is_content_addressed(tmp_path: Path) -> None:
    a = make_bundle(tmp_path / "a")
    b = make_bundle(tmp_path / "b")
    assert image_tag(a.paths.environment) == image_tag(b.paths.environment)
    combined = hashlib.sha256(
        f"{environment_digest(a.paths.environment)}:{base_image_id()}".encode()
    ).hexdigest()
    assert image_tag(a.paths.environment) == f"envpipeline-env:{combined[:16]}", "base image id is in the tag"
    (b.paths.environment / "app" / "input.txt").chmod(0o600)
    assert image_tag(a.paths.environment) != image_tag(b.paths.environment), "modes are part of the hash"
    (b.paths.environment / "app" / "input.txt").chmod(0o644)
    (b.paths.environment / "app" / "input.txt").write_text("hellO")
    assert image_tag(a.paths.environment) != image_tag(b.paths.environment), "bytes are part of the hash"


def test_second_open_reuses_the_image(tmp_path: Path) -> None:
    bundle = make_bundle(tmp_path, marker=uuid.uuid4().hex)
    tag = image_tag(bundle.paths.environment)
    sandbox = DockerSandbox()
    try:
        with sandbox.open(bundle, Limits()) as first:
            assert first.image == tag
        assert sandbox.builds == 1
        created = subprocess.run(
            ["docker", "image", "inspect", "--format", "{{.Created}}", tag], capture_output=True, text=True
        ).stdout
        with sandbox.open(bundle, Limits()) as second:
            assert second.image == tag
            assert (
                second.exec("cat /app/marker.txt", 10).stdout
                == (bundle.paths.environment / "app/marker.txt").read_text()
            )
        assert sandbox.builds == 1, "a cached image must not be rebuilt"
        assert DockerSandbox().ensure_image(bundle) == tag
        again = subprocess.run(
            ["docker", "image", "inspect", "--format", "{{.Created}}", tag], capture_output=True, text=True
        ).stdout
        assert again == created
    finally:
        subprocess.run(["docker", "rmi", "-f", tag], capture_output=True)


@pytest.mark.parametrize(
    "step",
    [
        "RUN curl -fsS http://deb.debian.org/debian/ -o /tmp/index",
        "RUN apt-get update && apt-get install -y --no-install-recommends cowsay",
    ],
)
def test_dockerfile_needing_network_fails(tmp_path: Path, step: str) -> None:
    """With the operator switch set to offline, a build that downloads fails."""
    bundle = make_bundle(tmp_path, dockerfile=f"FROM {BASE_IMAGE}\n{step}\n")
    with pytest.raises(EnvironmentBuildError, match="docker build failed"):
        DockerSandbox(build_network=BuildNetwork.NONE).open(bundle, Limits())


def test_missing_dockerfile_fails(tmp_path: Path) -> None:
    bundle = make_bundle(tmp_path)
    bundle.paths.dockerfile.unlink()
    with pytest.raises(EnvironmentBuildError, match="Dockerfile"):
        DockerSandbox().open(bundle, Limits())


def test_limits_are_applied(session: DockerSession) -> None:
    assert session.inspect("{{.HostConfig.NetworkMode}}") == "none"
    assert session.inspect("{{.HostConfig.PidsLimit}}") == "128"
    assert session.inspect("{{.HostConfig.Memory}}") == str(512 * 1024 * 1024)
    assert session.inspect("{{.HostConfig.MemorySwap}}") == str(512 * 1024 * 1024)
    assert session.inspect("{{.HostConfig.NanoCpus}}") == str(10**9)
    # 30 s as the other commands here: under the suite's load a 10 s exec once came back empty
    listed = session.exec("ls /sys/class/net", 30)
    assert listed.stdout.split() == ["lo"], listed
    assert session.inspect("{{range .HostConfig.Ulimits}}{{.Name}}={{.Hard}} {{end}}").split() == [
        f"fsize={8 * 1024 * 1024}",
        "nofile=1024",
    ]
    big = session.exec("head -c 9M /dev/zero > /app/big", 30)
    assert big.exit_code != 0, "writes beyond file_size_mb must fail"


def test_reward_file_round_trip(session: DockerSession, bundle: Bundle) -> None:
    session.upload(bundle.paths.solution, "/solution")
    session.upload(bundle.paths.tests, "/tests")
    assert session.read_file("/logs/verifier/reward.txt") is None
    assert session.exec("bash /solution/solve.sh", 30).exit_code == 0
    result = session.exec("bash /tests/test.sh", 30)
    assert result.exit_code == 0, result.stderr
    assert session.read_file("/logs/verifier/reward.txt") == b"1\n"


def _losing_reads(monkeypatch: pytest.MonkeyPatch, times: int) -> list[int]:
    """The engine drops the output of the next `times` file reads (exit 0, no bytes), as a lost
    exec stream does under load; returns a counter of reads."""
    real, reads = docker_engine.run, [0]

    def run(container: str, argv: list[str], **kwargs: object) -> docker_engine.Ran:
        ran = real(container, argv, **kwargs)  # type: ignore[arg-type]
        if "read_file" in argv:
            reads[0] += 1
            if reads[0] <= times:
                return dataclasses.replace(ran, stdout=b"")
        return ran

    monkeypatch.setattr(docker_engine, "run", run)
    return reads


def test_a_reward_whose_output_was_lost_is_read_again(
    session: DockerSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert session.exec("mkdir -p /logs/verifier && echo 0 > /logs/verifier/reward.txt", 30).exit_code == 0
    reads = _losing_reads(monkeypatch, times=OUTPUT_TRIES - 1)
    assert session.read_file("/logs/verifier/reward.txt") == b"0\n"
    assert reads[0] == OUTPUT_TRIES


def test_a_reward_lost_every_time_is_an_error_not_an_empty_file(
    session: DockerSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert session.exec("mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt", 30).exit_code == 0
    _losing_reads(monkeypatch, times=OUTPUT_TRIES)
    with pytest.raises(SandboxError, match="lost in the exec stream"):
        session.read_file("/logs/verifier/reward.txt")


def test_timeout_kills_everything(session: DockerSession) -> None:
    result = session.exec("setsid sleep 100 & sleep 100", 1.0)
    assert result.timed_out and result.exit_code is None
    assert result.duration_sec < 10
    processes = session.exec("ps -eo args=", 10).stdout
    assert "sleep 100" not in processes
    assert session.exec("echo alive", 10).stdout == "alive\n", "the session survives a timeout"


def test_kill_all_returns_once_every_background_writer_is_gone(session: DockerSession) -> None:
    writer = ": reward-writer; while :; do echo 1 > /logs/verifier/reward.txt; sleep 0.02; done"
    session.exec(f"(setsid bash -c '{writer}' </dev/null >/dev/null 2>&1 &); sleep 0.2", 10)
    session.kill_all()
    session.clear("/logs/verifier")
    time.sleep(0.3)
    assert session.read_file("/logs/verifier/reward.txt") is None, "a writer outlived kill_all"
    assert "reward-writer" not in session.exec("ps -eo args=", 10).stdout


def test_kill_all_with_survivors_is_an_error_not_a_silent_return(
    session: DockerSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    import envpipeline.sandbox.docker as docker_backend

    monkeypatch.setattr(docker_backend, "KILL_ALL_ATTEMPTS", 2)
    monkeypatch.setattr(docker_backend, "KILL_ALL_SCRIPT", 'echo "still running: 42" >&2; exit 2')
    with pytest.raises(SandboxError, match="still running: 42"):
        session.kill_all()


def test_no_container_left_after_close(sandbox: DockerSandbox, bundle: Bundle) -> None:
    session = sandbox.open(bundle, Limits())
    assert len(containers_of(session)) == 1
    assert session.exec("sleep 100", 0.5).timed_out
    session.close()
    session.close()
    assert containers_of(session) == []
    with pytest.raises(SandboxError):
        session.exec("true", 1)


def test_operator_environment_is_not_passed(session: DockerSession, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENVPIPELINE_FAKE_API_KEY", "sk-do-not-leak")
    assert "sk-do-not-leak" not in session.exec("env", 10).stdout


def test_output_is_capped(session: DockerSession) -> None:
    result = session.exec("head -c 50000 /dev/zero | tr '\\0' x; echo done >&2", 30)
    assert result.exit_code == 0
    assert result.truncated and len(result.stdout) == 10_000
    assert result.stderr == "done\n"


def test_upload_destinations_are_restricted(session: DockerSession, bundle: Bundle) -> None:
    for destination in ("/etc", "/app/../etc", "tests", "/"):
        with pytest.raises(SandboxError):
            session.upload(bundle.paths.tests, destination)
    session.upload(bundle.paths.tests / "test.sh", "/logs/extra")
    assert session.read_file("/logs/extra/test.sh") == bundle.paths.test_sh.read_bytes()
    session.exec("rm -rf /tests /logs", 10)
    session.upload(bundle.paths.test_sh, "/tests")
    session.upload(bundle.paths.tests, "/logs/verifier")
    assert session.exec("ls /tests /logs/verifier", 10).stdout.split() == [
        "/logs/verifier:",
        "test.sh",
        "/tests:",
        "test.sh",
    ]


FORK_COUNT = """
import os, time
started = 0
try:
    for _ in range(100):
        if os.fork() == 0:
            time.sleep(3)
            os._exit(0)
        started += 1
except OSError:
    pass
print(started)
"""


def test_memory_and_pids_limits_are_enforced(sandbox: DockerSandbox, bundle: Bundle) -> None:
    with sandbox.open(bundle, Limits(memory_mb=128, pids=32)) as session:
        hog = session.exec("python3 -c 'x = bytearray(400 * 1024 * 1024); print(len(x))'", 30)
        assert hog.exit_code == 137 and hog.stdout == "", (
            "the OOM killer stops a process over the memory limit"
        )
        forks = session.exec(f"python3 -c '{FORK_COUNT}' > /tmp/forks; cat /tmp/forks", 30)
        assert 0 < int(forks.stdout) < 32


def test_base_image_has_python_pip_and_tmux(session: DockerSession) -> None:
    done = session.exec("python --version && python -m pip --version && tmux -V", 30)
    assert done.exit_code == 0, done.stderr
    assert done.stdout.startswith("Python 3.11") and "tmux" in done.stdout


REGISTRY_DOCKERFILE = """FROM python:3.12-slim-bookworm
RUN apt-get update && apt-get install -y --no-install-recommends hello && rm -rf /var/lib/apt/lists/*
RUN pip install --no-cache-dir six==1.16.0
"""
#: Scores 1 only when the registry-built tools are there and the verifier cannot reach the mirror.
OFFLINE_VERIFIER_SH = """#!/bin/bash
mkdir -p /logs/verifier
reward=0
if [ "$(cat /app/out.txt 2>/dev/null)" = "Hello, world!" ] && python -c "import six"; then reward=1; fi
if curl -sS -m 5 -o /dev/null http://deb.debian.org/debian/; then reward=0; fi
echo $reward > /logs/verifier/reward.txt
"""


def test_registry_build_with_an_offline_verifier(tmp_path: Path) -> None:
    """The build of a python:3.12 bundle (substituted) installs a Debian and a PyPI package; the
    verifier phase still has no network (its network probe would zero the reward)."""
    from envpipeline.terminal.images import resolve_bundle_images
    from envpipeline.terminal.verify import verify_bundle

    files: dict[str, str | bytes] = {
        "task.toml": 'version = "1.0"\n\n[verifier]\ntimeout_sec = 60.0\n',
        "instruction.md": "Write the greeting of GNU hello into /app/out.txt.\n",
        "environment/Dockerfile": REGISTRY_DOCKERFILE,
        "solution/solve.sh": "#!/bin/bash\nhello > /app/out.txt\n",
        "tests/test.sh": OFFLINE_VERIFIER_SH,
    }
    write_files(tmp_path / "registry", files)
    sandbox = DockerSandbox(build_network=BuildNetwork.REGISTRIES)
    bundle = read_bundle(tmp_path / "registry")
    resolved = dataclasses.replace(bundle, dockerfile_text=resolve_bundle_images(bundle).dockerfile_text)
    try:
        result = verify_bundle(tmp_path / "registry", sandbox, with_red_team=False)
        assert result.verdict == "verified", (result.reasons, result.tails())
        assert [s.original for s in result.substitutions] == ["python:3.12-slim-bookworm"]
        with sandbox.open(resolved, Limits()) as opened:
            probe = opened.exec("curl -sS -m 5 -o /dev/null http://deb.debian.org/debian/", 30)
            assert probe.exit_code != 0, "sessions have no network"
            assert "ARG" not in opened.inspect("{{json .Config.Env}}")
            assert "PIP_" not in opened.inspect("{{json .Config.Env}}"), "pip settings are never baked in"
    finally:
        subprocess.run(["docker", "rmi", "-f", sandbox.ensure_image(resolved)], capture_output=True)
