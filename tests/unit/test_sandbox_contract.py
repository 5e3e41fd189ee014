"""The contract every sandbox backend keeps: it runs the bundle, and untrusted code cannot get out.

Each test runs against the local backend (bubblewrap, and plain namespaces when that fallback
works here) and Docker (``-m docker``; skipped with a reason where the engine or the base image
is missing). Escape attempts must fail, loops and fork bombs must be killed, output is capped and
the operator's environment never reaches the sandbox. Network checks only target loopback (a
server in this process) and 10.255.255.1 from inside an isolated network namespace (no route, so
no packet leaves the machine).
"""

from __future__ import annotations

import io
import os
import random
import socket
import subprocess
import tarfile
import threading
import time
import uuid
from pathlib import Path

import pytest

from envpipeline.errors import SandboxError
from envpipeline.models.bundle import Bundle, TaskConfig
from envpipeline.sandbox.base import EnvironmentBuildError, Limits, Sandbox, SandboxSession
from envpipeline.terminal.bundle import dump_task_config, read_bundle, write_files
from envpipeline.terminal.families.base import STANDARD_DOCKERFILE

LIMITS = Limits(memory_mb=256, pids=64, file_size_mb=16, output_bytes=20_000)

BACKENDS = [
    pytest.param("local", id="local"),
    pytest.param("unshare", id="local-unshare"),
    pytest.param("docker", id="docker", marks=pytest.mark.docker),
]


@pytest.fixture(params=BACKENDS)
def sandbox(request: pytest.FixtureRequest) -> Sandbox:
    if request.param == "docker":
        return request.getfixturevalue("docker_sandbox")
    if request.param == "unshare":
        from envpipeline.sandbox.isolation import isolation_works
        from envpipeline.sandbox.local import LocalSandbox

        if not isolation_works("unshare"):
            pytest.skip("the unshare fallback does not work here (needs root and util-linux)")
        return LocalSandbox(isolation="unshare")
    return request.getfixturevalue("local_sandbox")


def make_bundle(
    root: Path, dockerfile: str = STANDARD_DOCKERFILE, extra: dict[str, str] | None = None
) -> Bundle:
    """A minimal bundle: standard Dockerfile plus one fixture under /app."""
    files: dict[str, str | bytes] = {
        "task.toml": dump_task_config(TaskConfig()),
        "instruction.md": "Print the fixture.\n",
        "environment/Dockerfile": dockerfile,
        "environment/app/data.txt": "hello fixture\n",
    }
    write_files(root, files | (extra or {}))
    return read_bundle(root)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    return make_bundle(tmp_path_factory.mktemp("bundle") / "contract-task")


@pytest.fixture
def session(sandbox: Sandbox, bundle: Bundle):
    with sandbox.open(bundle, LIMITS) as opened:
        yield opened


def processes_with(token: str) -> list[int]:
    """Host pids whose command line contains `token` (this test's unique marker)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                cmdline = (
                    Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                )
            except OSError:
                continue
            if token in cmdline:
                found.append(int(entry))
    return found


def wait_until(predicate, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def test_command_runs_in_app_and_sees_fixtures(session: SandboxSession) -> None:
    result = session.exec("pwd && cat data.txt && touch made-here", timeout_sec=20)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == ["/app", "hello fixture"]
    assert not result.timed_out and not result.truncated
    assert session.read_file("/app/made-here") == b""
    assert session.read_file("/app/no-such-file") is None


def test_upload_then_exec_a_script(session: SandboxSession, tmp_path: Path) -> None:
    write_files(
        tmp_path / "solution", {"solve.sh": "#!/bin/bash\necho solved > /app/answer.txt\necho done\n"}
    )
    session.upload(tmp_path / "solution", "/solution")
    result = session.exec("bash /solution/solve.sh", timeout_sec=20)
    assert (result.exit_code, result.stdout.strip()) == (0, "done"), result.stderr
    assert session.read_file("/app/answer.txt") == b"solved\n"
    with pytest.raises(Exception, match="upload destination"):
        session.upload(tmp_path / "solution", "/etc")


def _members(archive: bytes) -> dict[str, tuple[str, str | bytes]]:
    """name -> ("dir", ""), ("link", target) or ("file", bytes) of a tar archive."""
    found: dict[str, tuple[str, str | bytes]] = {}
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        for member in tar:
            name = member.name.removeprefix("./").rstrip("/") or "."
            if member.isdir():
                found[name] = ("dir", "")
            elif member.issym():
                found[name] = ("link", member.linkname)
            else:
                data = tar.extractfile(member)
                found[name] = ("file", data.read() if data is not None else b"")
    return found


def test_pack_reads_a_folder_back_with_links_kept_as_links(session: SandboxSession, tmp_path: Path) -> None:
    secret = tmp_path / "host-secret.txt"
    secret.write_text("TOPSECRET-SENTINEL\n")
    made = session.exec(
        "mkdir -p notes/deep && echo hi > notes/deep/a.txt && ln -s notes/deep/a.txt near "
        f"&& ln -s {secret} far && ln -s / root-link && mkdir empty",
        timeout_sec=20,
    )
    assert made.exit_code == 0, made.stderr
    members = _members(session.pack("/app"))
    assert members["notes/deep/a.txt"] == ("file", b"hi\n")
    assert members["data.txt"] == ("file", b"hello fixture\n")
    assert members["near"] == ("link", "notes/deep/a.txt")
    assert members["far"] == ("link", str(secret))  # stored as a link: the host file is not read
    assert members["root-link"] == ("link", "/")  # never walked into
    assert members["empty"] == ("dir", "")
    assert not any(name.startswith("root-link/") for name in members)
    assert all(b"TOPSECRET" not in value for kind, value in members.values() if kind == "file")
    # the archive is gone from the sandbox once read
    assert session.exec("ls -A /tmp", timeout_sec=20).stdout.strip() == ""


def test_pack_refuses_what_the_sandbox_user_cannot_read(session: SandboxSession) -> None:
    if session.exec("id -u", timeout_sec=20).stdout.strip() == "0":
        pytest.skip("this backend's commands run as root, who reads every file")
    made = session.exec("echo private > locked.txt && chmod 000 locked.txt", timeout_sec=20)
    assert made.exit_code == 0, made.stderr
    with pytest.raises(SandboxError, match="locked.txt"):
        session.pack("/app")


def test_empty_removes_what_a_command_left_and_nothing_outside(
    session: SandboxSession, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("host file\n")
    made = session.exec(
        f"mkdir -p deep/er && echo x > deep/er/f && ln -s {outside} link-dir && ln -s {outside}/keep.txt link-file "
        "&& touch /tmp/scratch && mkdir /tmp/d && touch /tmp/d/x",
        timeout_sec=20,
    )
    assert made.exit_code == 0, made.stderr
    session.empty("/app", "/tmp")
    listed = session.exec("ls -A /app /tmp; touch /app/again /tmp/again && echo writable", timeout_sec=20)
    assert listed.stdout.split() == ["/app:", "/tmp:", "writable"], listed.stdout + listed.stderr
    assert (outside / "keep.txt").read_text() == "host file\n"


def test_reads_outside_fail(session: SandboxSession, tmp_path: Path) -> None:
    secret = tmp_path / "host-secret.txt"
    secret.write_text("TOPSECRET-SENTINEL\n")
    direct = session.exec(f"cat {secret}", timeout_sec=20)
    assert direct.exit_code != 0 and "TOPSECRET-SENTINEL" not in direct.stdout
    # whatever /root and /etc hold inside, they are not the host's copies of the sentinel
    result = session.exec(
        f"ls -la /root; cat /etc/shadow; grep -r TOPSECRET {tmp_path} /root", timeout_sec=20
    )
    assert "TOPSECRET-SENTINEL" not in result.stdout + result.stderr


def test_writes_outside_fail(session: SandboxSession, tmp_path: Path) -> None:
    sentinel = tmp_path / "host-sentinel.txt"
    sentinel.write_text("unchanged\n")
    name = f"envpipeline-pwned-{uuid.uuid4().hex[:8]}"
    command = (
        f"echo pwned > {sentinel}; echo pwned > /usr/{name}; echo pwned > /etc/{name}; echo pwned > /{name}"
    )
    session.exec(command, timeout_sec=20)
    assert sentinel.read_text() == "unchanged\n"
    for folder in ("/usr", "/etc", "/"):
        assert not (Path(folder) / name).exists(), f"the sandbox wrote {folder}/{name} on the host"


def test_network_is_unreachable(session: SandboxSession) -> None:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    server.settimeout(0.2)
    port = server.getsockname()[1]
    accepted: list[object] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                accepted.append(server.accept())
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        probe = "timeout 2 bash -c 'echo hi > /dev/tcp/{}/{}' && echo CONNECTED-{}"
        command = "; ".join(
            [probe.format("127.0.0.1", port, "loopback"), probe.format("10.255.255.1", 80, "external")]
        )
        started = time.monotonic()
        result = session.exec(command, timeout_sec=15)
        assert time.monotonic() - started < 10
        assert "CONNECTED" not in result.stdout, result.stdout
        assert not accepted, "a sandboxed process reached a server on the host's loopback"
    finally:
        stop.set()
        thread.join(2)
        server.close()


def test_fork_bomb_is_contained(session: SandboxSession) -> None:
    token = f"forkbomb{uuid.uuid4().hex[:8]}"
    result = session.exec(f"bomb() {{ bomb | bomb & }}; bomb; sleep 30 # {token}", timeout_sec=2)
    assert result.timed_out or result.exit_code is not None
    assert result.duration_sec < 15
    assert subprocess.run(["true"], timeout=10).returncode == 0, "the host cannot spawn processes"
    again = session.exec("echo still-alive", timeout_sec=20)
    assert again.stdout.strip() == "still-alive"
    session.close()
    assert wait_until(lambda: not processes_with(token)), "fork bomb processes survived close()"


def test_memory_hog_fails(session: SandboxSession) -> None:
    size = 4 * LIMITS.memory_mb * 1024 * 1024
    result = session.exec(f"python3 -c 'x = \"a\" * {size}; print(len(x))'", timeout_sec=30)
    assert result.exit_code not in (0, None)
    assert str(size) not in result.stdout


def test_infinite_loop_is_killed_at_the_timeout(session: SandboxSession) -> None:
    token = f"loop{uuid.uuid4().hex[:8]}"
    result = session.exec(f"while :; do :; done # {token}", timeout_sec=1.5)
    assert result.timed_out and result.exit_code is None
    assert 1.4 <= result.duration_sec < 10
    assert wait_until(lambda: not processes_with(token)), "the loop survived its timeout"


def test_setsid_escapee_dies_with_the_session(sandbox: Sandbox, session: SandboxSession) -> None:
    seconds = f"{random.randint(1000, 1999)}.{random.randint(100000, 999999)}"
    result = session.exec(f"setsid sleep {seconds} > /dev/null 2>&1 & echo started", timeout_sec=20)
    assert result.stdout.strip() == "started"
    if sandbox.backend == "local":
        assert wait_until(lambda: bool(processes_with(f"sleep {seconds}"))), "the escapee never started"
    session.close()
    assert wait_until(lambda: not processes_with(f"sleep {seconds}")), "a setsid escapee survived close()"


def test_output_flood_is_truncated(session: SandboxSession) -> None:
    finite = session.exec("yes | head -c 50000000; echo done >&2", timeout_sec=30)
    assert finite.exit_code == 0 and finite.truncated
    assert len(finite.stdout) <= LIMITS.output_bytes and finite.stderr.strip() == "done"
    assert finite.duration_sec < 15
    endless = session.exec("yes", timeout_sec=2)
    assert endless.timed_out and endless.truncated
    assert len(endless.stdout) <= LIMITS.output_bytes and endless.duration_sec < 10


def test_operator_environment_does_not_leak(
    sandbox: Sandbox, bundle: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-envpipeline-leak-check")
    with sandbox.open(bundle, LIMITS) as opened:
        result = opened.exec("env; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'", timeout_sec=20)
    assert "PATH=" in result.stdout
    assert "sk-envpipeline-leak-check" not in result.stdout + result.stderr
    assert "OPENAI_API_KEY" not in result.stdout


@pytest.mark.parametrize(
    "dockerfile",
    [
        pytest.param(STANDARD_DOCKERFILE + "FROBNICATE everything\n", id="unknown-instruction"),
        pytest.param(STANDARD_DOCKERFILE + "RUN echo about to fail && exit 3\n", id="failing-run"),
        pytest.param(STANDARD_DOCKERFILE + "COPY ../outside.txt /app/\n", id="copy-outside-context"),
    ],
)
def test_bad_dockerfile_is_a_build_error(sandbox: Sandbox, tmp_path: Path, dockerfile: str) -> None:
    (tmp_path / "outside.txt").write_text("outside the context\n")
    broken = make_bundle(tmp_path / f"broken-{uuid.uuid4().hex[:8]}", dockerfile=dockerfile)
    with pytest.raises(EnvironmentBuildError):
        sandbox.open(broken, LIMITS).close()


# ---- tamper probes: what sits in the verifier's folders before it runs is a `tampered` verdict --

#: The real check: passes only when the agent wrote "done" to /app/out.txt.
PROBE_TEST_SH = (
    "#!/bin/bash\nmkdir -p /logs/verifier\n"
    "grep -qx done /app/out.txt && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n"
)
#: Each probe: (solve.sh, extra Dockerfile lines, agent, the tampered files expected, reason words).
TAMPER_PROBES = {
    "planted-reward": (
        "mkdir -p /logs/verifier; echo '{\"reward\": 1}' > /logs/verifier/reward.json\n",
        "",
        "oracle",
        ["/logs/verifier/reward.json"],
        "oracle solution wrote",
    ),
    "stale-reward": (
        # a stale reward.txt kept alive by a background writer, and a planted test file
        "mkdir -p /logs/verifier /tests; echo 1 > /tests/test.sh\n"
        "(setsid bash -c 'while :; do echo 1 > /logs/verifier/reward.txt; sleep 0.05; done' "
        "</dev/null >/dev/null 2>&1 &)\nsleep 0.3\n",
        "",
        "oracle",
        ["/logs/verifier/reward.txt", "/tests/test.sh"],
        "oracle solution wrote",
    ),
    "pre-seeded-image": (
        "true\n",
        "RUN mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt\n",
        "nop",
        ["/logs/verifier/reward.txt"],
        "image pre-seeds",
    ),
}


@pytest.mark.parametrize("probe", sorted(TAMPER_PROBES))
def test_tamper_probes_give_a_tampered_verdict(sandbox: Sandbox, tmp_path: Path, probe: str) -> None:
    from envpipeline.terminal.trial import run_trial

    solve, docker_lines, agent, planted, words = TAMPER_PROBES[probe]
    bundle = make_bundle(
        tmp_path / probe,
        dockerfile=STANDARD_DOCKERFILE + docker_lines,
        extra={"solution/solve.sh": "#!/bin/bash\n" + solve, "tests/test.sh": PROBE_TEST_SH},
    )
    trial = run_trial(sandbox, bundle, agent, LIMITS)
    assert trial.verdict == "tampered", trial.reason
    assert trial.reward is None and trial.verifier_reward == 0.0, (
        f"{trial.reason}; verifier: {trial.verifier_exec}"
    )
    assert trial.planted == planted and words in trial.reason, trial.reason


def test_a_clean_trial_is_not_tampered(sandbox: Sandbox, tmp_path: Path) -> None:
    from envpipeline.terminal.trial import run_trial

    bundle = make_bundle(
        tmp_path / "clean",
        extra={
            "solution/solve.sh": "#!/bin/bash\necho done > /app/out.txt\n",
            "tests/test.sh": PROBE_TEST_SH,
        },
    )
    trial = run_trial(sandbox, bundle, "oracle", LIMITS)
    assert (trial.verdict, trial.reward, trial.planted) == ("ok", 1.0, []), trial
