"""The local backend beyond the shared contract: its Dockerfile subset, uid drop, symlink safety, detection."""

from __future__ import annotations

import contextlib
import io
import tarfile
from pathlib import Path

import pytest

from envpipeline.errors import ConfigError, SandboxError
from envpipeline.models.bundle import Bundle, TaskConfig
from envpipeline.sandbox.base import EnvironmentBuildError, Limits
from envpipeline.sandbox.detect import available_backends, select_sandbox
from envpipeline.sandbox.dockerfile import expand, parse_dockerfile, parse_env
from envpipeline.sandbox.local import SHARED_UID_NPROC
from envpipeline.terminal.bundle import dump_task_config, read_bundle, write_files
from envpipeline.terminal.families.base import STANDARD_DOCKERFILE

LIMITS = Limits(memory_mb=256, pids=64, file_size_mb=16, output_bytes=20_000)


def bundle_with(root: Path, dockerfile: str, files: dict[str, str | bytes] | None = None) -> Bundle:
    write_files(
        root,
        {
            "task.toml": dump_task_config(TaskConfig()),
            "instruction.md": "x\n",
            "environment/Dockerfile": dockerfile,
            "environment/app/data.txt": "hello\n",
        }
        | (files or {}),
    )
    return read_bundle(root)


def test_parse_joins_continuations_and_keeps_line_numbers() -> None:
    text = "# comment\nFROM base\n\nRUN echo a \\\n  # inner comment\n  && echo b\nenv A=1\n"
    parsed = parse_dockerfile(text)
    assert [(i.line, i.keyword) for i in parsed] == [(2, "FROM"), (4, "RUN"), (7, "ENV")]
    assert parsed[1].value == "echo a && echo b"


def test_variables_and_env_forms() -> None:
    assert expand("${A}/$B/${C:-dflt}/${A:+set}/\\$A", {"A": "x", "B": "y"}) == "x/y/dflt/set/$A"
    assert parse_env('A=1 B="two words"', 1, {}) == [("A", "1"), ("B", "two words")]
    assert parse_env("LEGACY some value", 1, {}) == [("LEGACY", "some value")]
    with pytest.raises(EnvironmentBuildError, match="line 5"):
        parse_env("1BAD=x", 5, {})


def test_dockerfile_subset_is_replayed(local_sandbox, tmp_path: Path) -> None:
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w:gz") as tar:
        payload = b"from the archive\n"
        info = tarfile.TarInfo("packed/inside.txt")
        info.size = len(payload)
        tar.addfile(info, io.BytesIO(payload))
    dockerfile = (
        STANDARD_DOCKERFILE
        + "LABEL maintainer=x\nEXPOSE 80\nUSER nobody\nARG LEVEL=3\nENV GREETING=hi TARGET=/app/sub\n"
        + "WORKDIR $TARGET\nCOPY app/data.txt renamed.txt\nADD bundle.tar.gz /app/\n"
        + 'RUN pwd > /app/where && echo "$GREETING $LEVEL" > level.txt\nCMD ["bash"]\n'
    )
    bundle = bundle_with(tmp_path / "b", dockerfile, {"environment/bundle.tar.gz": archive.getvalue()})
    with local_sandbox.open(bundle, LIMITS) as session:
        assert session.base_image == "envpipeline/base:bookworm"
        assert [k for _, k in session.ignored] == ["LABEL", "EXPOSE", "USER", "ARG", "CMD"]
        assert session.read_file("/app/where") == b"/app/sub\n"
        assert session.read_file("/app/sub/renamed.txt") == b"hello\n"
        assert session.read_file("/app/sub/level.txt") == b"hi 3\n"
        assert session.read_file("/app/packed/inside.txt") == b"from the archive\n"
        result = session.exec("id -u; echo $GREETING; ulimit -u; touch /app/sub/renamed.txt", timeout_sec=20)
        group = session.cgroup()
        # processes are limited by the session's cgroup where there is one (the per-uid rlimit,
        # shared by every local session, is then lifted), else by that rlimit
        nproc = LIMITS.pids if group is None else SHARED_UID_NPROC
        assert result.stdout.split() == ["65534", "hi", str(nproc)], result.stderr
        if group is not None:
            pids_max = [f for f in group.folders if (f / "pids.max").exists()][0] / "pids.max"
            assert pids_max.read_text().strip() == str(LIMITS.pids)
        assert result.exit_code == 0, "files in /app must be writable by the sandbox user"


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        ("COPY --from=builder /x /app/\n", "line 4: COPY --from"),
        ("WORKDIR /root\n", "line 4: /root"),
        ('SHELL ["/bin/bash", "-c"]\n', "line 4: SHELL"),
        ("FROM other\n", "line 4: multi-stage"),
        ("ADD https://example.com/x /app/\n", "line 4: ADD https"),
        ("RUN sleep 30\n", "line 4: RUN exceeded"),
    ],
)
def test_unsupported_steps_name_their_line(tmp_path: Path, extra: str, match: str) -> None:
    from envpipeline.sandbox.local import LocalSandbox

    if not LocalSandbox.available():
        pytest.skip("no bubblewrap or namespaces here")
    bundle = bundle_with(tmp_path / "b", STANDARD_DOCKERFILE + extra)
    with pytest.raises(EnvironmentBuildError, match=match):
        LocalSandbox(build_timeout_sec=1).open(bundle, LIMITS).close()


def test_planted_symlinks_do_not_redirect_host_writes_or_reads(local_sandbox, tmp_path: Path) -> None:
    target = tmp_path / "host-target"
    target.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret\n")
    write_files(tmp_path / "upload", {"evil/x.txt": "payload\n"})
    with local_sandbox.open(bundle_with(tmp_path / "b", STANDARD_DOCKERFILE), LIMITS) as session:
        planted = session.exec(f"ln -s {target} /tests/evil && ln -s {secret} /app/link", timeout_sec=20)
        assert planted.exit_code == 0, planted.stderr
        with contextlib.suppress(SandboxError):
            session.upload(tmp_path / "upload", "/tests")
        assert session.read_file("/app/link") is None
    assert list(target.iterdir()) == []


def test_refuses_root_and_unknown_isolation() -> None:
    from envpipeline.sandbox.local import LocalSandbox

    with pytest.raises(SandboxError, match="root"):
        LocalSandbox(uid=0)
    with pytest.raises(SandboxError, match="isolation"):
        LocalSandbox(isolation="chroot")


def test_select_sandbox(local_sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    assert select_sandbox("local").backend == "local"
    assert "local" in available_backends()
    with pytest.raises(ConfigError, match="unknown sandbox backend"):
        select_sandbox("podman")
    monkeypatch.setenv("ENVPIPELINE_SANDBOX", "local")
    assert select_sandbox().backend == "local"
    monkeypatch.setenv("ENVPIPELINE_SANDBOX", "nonsense")
    with pytest.raises(ConfigError, match="ENVPIPELINE_SANDBOX"):
        select_sandbox()
