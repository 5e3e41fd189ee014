"""The local backend's fast paths: host-side uploads/reads, the one-exec helper, the spare keeper."""

from __future__ import annotations

import io
import os
import stat
import tarfile
from pathlib import Path

import pytest

from envpipeline.models.bundle import Bundle, TaskConfig
from envpipeline.sandbox import enter, hostio
from envpipeline.sandbox.base import Limits
from envpipeline.sandbox.local import SHARED_UID_NPROC
from envpipeline.terminal.bundle import dump_task_config, read_bundle, write_files
from envpipeline.terminal.families.base import STANDARD_DOCKERFILE

LIMITS = Limits(memory_mb=256, pids=64, file_size_mb=16, output_bytes=20_000)
MOUNTS = {"app": "/app", "tests": "/tests"}
UID = GID = 65534


def tar_of(files: dict[str, bytes], links: dict[str, str] | None = None) -> io.BytesIO:
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o755 if name.endswith(".sh") else 0o644
            tar.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
    return archive


@pytest.fixture
def root(tmp_path: Path) -> Path:
    if os.geteuid() != 0:
        pytest.skip("host-side copies hand files to the sandbox uid: needs root")
    for name in MOUNTS:
        (tmp_path / name).mkdir()
        os.chown(tmp_path / name, UID, GID)
    return tmp_path


def test_host_extract_creates_sandbox_owned_files(root: Path) -> None:
    archive = tar_of({"sub/run.sh": b"echo hi\n", "data.txt": b"x"}, {"link": "/etc/passwd"})
    hostio.extract(archive, root, MOUNTS, "/tests/deep", UID, GID)
    script = root / "tests" / "deep" / "sub" / "run.sh"
    assert script.read_bytes() == b"echo hi\n"
    for path in (script, script.parent, root / "tests" / "deep" / "data.txt"):
        info = path.stat()
        assert (info.st_uid, info.st_gid) == (UID, GID)
    assert stat.S_IMODE(script.stat().st_mode) == 0o755
    assert os.readlink(root / "tests" / "deep" / "link") == "/etc/passwd"
    assert os.lstat(root / "tests" / "deep" / "link").st_uid == UID


@pytest.mark.parametrize("plant", ["symlinked-dir", "existing-file", "unwritable-dir"])
def test_host_extract_refuses_what_the_sandbox_could_have_planted(root: Path, plant: str) -> None:
    outside = root / "outside"
    outside.mkdir()
    tests = root / "tests"
    if plant == "symlinked-dir":
        (tests / "sub").symlink_to(outside)
    elif plant == "existing-file":
        (tests / "sub").mkdir()
        os.chown(tests / "sub", UID, GID)
        (tests / "sub" / "run.sh").write_text("old\n")
    else:
        (tests / "sub").mkdir(mode=0o555)
        os.chown(tests / "sub", UID, GID)
    with pytest.raises(hostio.Unsafe):
        hostio.extract(tar_of({"sub/run.sh": b"new\n"}), root, MOUNTS, "/tests", UID, GID)
    assert list(outside.iterdir()) == []


def test_host_read_refuses_symlinks_and_special_paths(root: Path, tmp_path: Path) -> None:
    (root / "app" / "reward.txt").write_text("1\n")
    (root / "app" / "link").symlink_to(tmp_path / "secret")
    (tmp_path / "secret").write_text("secret\n")
    assert hostio.read(root, MOUNTS, "/app/reward.txt", UID, GID, 1) == b"1"
    assert hostio.read(root, MOUNTS, "/app/missing", UID, GID, 100) is None
    assert hostio.read(root, MOUNTS, "/app", UID, GID, 100) is None
    for path in ("/app/link", "/app/../etc/passwd", "/etc/passwd", "/app/link/x"):
        with pytest.raises(hostio.Unsafe):
            hostio.read(root, MOUNTS, path, UID, GID, 100)


def bundle_at(root: Path) -> Bundle:
    write_files(
        root,
        {
            "task.toml": dump_task_config(TaskConfig()),
            "instruction.md": "x\n",
            "environment/Dockerfile": STANDARD_DOCKERFILE,
            "environment/app/data.txt": "hello\n",
        },
    )
    return read_bundle(root)


ISOLATION_CHECK = "id -u; id -G; ulimit -u; env | sort | tr '\\n' ' '; echo; grep -E 'CapEff|CapBnd|NoNewPrivs' /proc/self/status"


def test_chain_and_helper_isolate_alike(
    local_sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = bundle_at(tmp_path / "b")
    outputs = []
    for helper in (True, False):
        if not helper:
            monkeypatch.setattr(enter, "helper_path", lambda: None)
        with local_sandbox.open(bundle, LIMITS) as session:
            result = session.exec(ISOLATION_CHECK, timeout_sec=20)
            # a session cgroup counts the processes; the per-uid rlimit is lifted then
            nproc = LIMITS.pids if session.cgroup() is None else SHARED_UID_NPROC
        assert result.exit_code == 0, result.stderr
        outputs.append(result.stdout)
    assert outputs[0] == outputs[1]
    lines = outputs[0].splitlines()
    assert lines[:3] == ["65534", "65534", str(nproc)]
    assert "NoNewPrivs:\t1" in lines and "CapEff:\t0000000000000000" in lines


def test_spare_sessions_share_nothing(local_sandbox, tmp_path: Path) -> None:
    bundle = bundle_at(tmp_path / "b")
    with local_sandbox.open(bundle, LIMITS) as first:
        assert first.exec("echo left > /tmp/mark; sleep 300 &", timeout_sec=20).exit_code == 0
        root = first.root
    assert not root.exists()
    with local_sandbox.open(bundle, LIMITS) as second:
        assert second.root != root
        result = second.exec("cat /tmp/mark; pgrep -fc 'slee[p] 300'; ls /app", timeout_sec=20)
        assert result.stdout.split() == ["0", "data.txt"]
    local_sandbox.close()
    assert local_sandbox._spare is None


def _listing(archive: bytes) -> list[tuple[str, bytes, int, str, bytes]]:
    """(name, type, mode, link target, bytes) of every member; hard links read as the file."""
    rows = []
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        for member in tar:
            data = tar.extractfile(member) if member.isreg() or member.islnk() else None
            kind = tarfile.REGTYPE if member.islnk() else member.type
            name = member.name.removeprefix("./").rstrip("/") or "."
            link = member.linkname if member.issym() else ""
            rows.append((name, kind, member.mode, link, data.read() if data is not None else b""))
    return sorted(rows)


def _recorded_spawns(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The commands local sessions start inside their sandbox from now on (each one recorded)."""
    from envpipeline.sandbox.local import LocalSession

    spawned: list[list[str]] = []
    real_spawn = LocalSession._spawn
    monkeypatch.setattr(
        LocalSession,
        "_spawn",
        lambda self, argv, **kw: spawned.append(argv) or real_spawn(self, argv, **kw),
    )
    return spawned


def test_host_pack_matches_the_sandbox_tar_without_a_process(
    local_sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from envpipeline.sandbox.base import SandboxSession

    with local_sandbox.open(bundle_at(tmp_path / "b"), LIMITS) as session:
        made = session.exec(
            "mkdir -p a/b/c empty && echo hi > a/b/c/f.txt && printf 'x\\0y' > bin && chmod 640 bin "
            "&& chmod 700 a/b && ln -s a/b/c/f.txt near && ln -s /etc/passwd far && touch a/e && ln a/e a/h",
            timeout_sec=20,
        )
        assert made.exit_code == 0, made.stderr
        inside = SandboxSession.pack(session, "/app")  # tar run by the sandbox user
        spawned = _recorded_spawns(monkeypatch)
        host = session.pack("/app")
    assert spawned == []
    assert _listing(host) == _listing(inside)


@pytest.mark.parametrize("plant", ["unreadable-file", "unlistable-dir", "fifo"])
def test_host_pack_leaves_the_sandbox_to_decide(root: Path, plant: str) -> None:
    app = root / "app"
    (app / "ok.txt").write_text("fine\n")
    if plant == "unreadable-file":
        (app / "secret.txt").write_text("x\n")
        os.chown(app / "secret.txt", UID, GID)
        os.chmod(app / "secret.txt", 0)
    elif plant == "unlistable-dir":
        (app / "dir").mkdir(mode=0o311)
        os.chown(app / "dir", UID, GID)
    else:
        os.mkfifo(app / "pipe")
    with pytest.raises(hostio.Unsafe):
        hostio.pack(root, MOUNTS, "/app", UID, GID, 1 << 20)


def test_host_pack_never_follows_a_planted_link(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("TOPSECRET\n")
    (root / "app" / "sub").symlink_to(outside)
    archive = hostio.pack(root, MOUNTS, "/app", UID, GID, 1 << 20)
    assert _listing(archive) == [
        (".", tarfile.DIRTYPE, 0o755, "", b""),
        ("sub", tarfile.SYMTYPE, 0o777, str(outside), b""),
    ]
    with pytest.raises(hostio.Unsafe):  # a link on the way to the folder itself
        hostio.pack(root, MOUNTS, "/app/sub", UID, GID, 1 << 20)
    with pytest.raises(hostio.Unsafe):  # past the size limit: the sandbox's tar decides
        (root / "app" / "big.bin").write_bytes(b"0" * 4096)
        hostio.pack(root, MOUNTS, "/app", UID, GID, 1024)


def test_host_empty_needs_no_process_and_other_paths_go_to_the_sandbox(
    local_sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with local_sandbox.open(bundle_at(tmp_path / "b"), LIMITS) as session:
        made = session.exec("mkdir -p sub/x && touch sub/x/f top && chmod 555 sub/x", timeout_sec=20)
        assert made.exit_code == 0, made.stderr
        spawned = _recorded_spawns(monkeypatch)
        session.empty("/app")  # a folder the sandbox user could not empty (sub/x is read-only)
        assert spawned == [] and list((session.root / "app").iterdir()) == []
        session.exec("mkdir -p sub && touch sub/f", timeout_sec=20)
        spawned.clear()
        session.empty("/app/sub")
        assert len(spawned) == 1 and list((session.root / "app" / "sub").iterdir()) == []


def test_host_empty_reports_what_it_could_not_remove(
    local_sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder swapped for a link while it is removed makes rmtree refuse (it never follows
    one): the session says so as a SandboxError naming the folder."""
    from envpipeline.errors import SandboxError
    from envpipeline.sandbox import local

    with local_sandbox.open(bundle_at(tmp_path / "b"), LIMITS) as session:
        assert session.exec("mkdir -p sub && touch sub/f", timeout_sec=20).exit_code == 0

        def refuses(path: str, **_: object) -> None:
            raise OSError("Cannot call rmtree on a symbolic link")

        with monkeypatch.context() as patch:  # only while emptying: closing the session removes trees
            patch.setattr(local.shutil, "rmtree", refuses)
            with pytest.raises(SandboxError, match="cannot empty /app: Cannot call rmtree"):
                session.empty("/app")
