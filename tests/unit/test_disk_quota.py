"""A local session's folders live on a volume of storage_mb: writing past it fails inside, the host is untouched."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from envpipeline.sandbox import disk_quota, reaper
from envpipeline.sandbox.base import Limits
from tests.unit.test_sandbox_contract import make_bundle

REPO = Path(__file__).resolve().parents[2]


def mounts() -> str:
    return Path("/proc/mounts").read_text()


@pytest.fixture
def volume_root(tmp_path: Path):
    root = tmp_path / "envpipeline-root-probe"
    root.mkdir()
    if not disk_quota.mount_volume(root, 32):
        pytest.skip("no root, loop device or mkfs.ext4 here: sessions run without a disk quota")
    yield root
    disk_quota.release(root)


def test_a_volume_holds_its_size_and_release_leaves_nothing(volume_root: Path):
    assert os.path.ismount(volume_root)
    done = subprocess.run(
        ["dd", "if=/dev/zero", f"of={volume_root / 'big'}", "bs=1M", "count=64"], capture_output=True
    )
    assert done.returncode != 0 and b"No space left" in done.stderr
    used = disk_quota.used_mb(volume_root)
    assert used is not None and used <= 32
    disk_quota.release(volume_root)
    assert not os.path.ismount(volume_root)
    assert not disk_quota.image_path(volume_root).exists()


def test_a_session_cannot_write_past_its_storage(local_sandbox, tmp_path: Path):
    bundle = make_bundle(tmp_path / "task")
    with local_sandbox.open(bundle, Limits(storage_mb=64)) as session:
        if session.storage_mb is None:
            pytest.skip("no disk quota here (documented fallback: the per-file limit alone)")
        assert session.storage_mb == 64
        # many small files: the per-file limit alone would let all of them through
        done = session.exec("for i in $(seq 20); do head -c 8000000 /dev/zero > /app/f$i || exit 1; done", 60)
        assert done.exit_code != 0 and "No space left" in done.stderr, done
        spill = session.exec("head -c 80000000 /dev/zero > /tmp/spill", 60)
        assert spill.exit_code != 0, "/tmp is on the same volume"
        root = session.root
        assert str(root) in mounts()
    assert str(root) not in mounts() and not root.exists()
    assert not disk_quota.image_path(root).exists()


HOLDER = """
import sys, time
from envpipeline.sandbox.base import Limits
from envpipeline.sandbox.local import LocalSandbox
from envpipeline.terminal.bundle import read_bundle
session = LocalSandbox().open(read_bundle(sys.argv[1]), Limits(storage_mb=64))
session.exec("true", 10)
print(session.root, flush=True)
time.sleep(600)
"""


def test_a_killed_sessions_volume_is_reaped(local_sandbox, tmp_path: Path):
    bundle = make_bundle(tmp_path / "task")
    temp = tmp_path / "temp"
    temp.mkdir()
    env = {**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(temp)}
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(bundle.paths.root)], env=env, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None
    root = Path(holder.stdout.readline().strip())
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    if not disk_quota.image_path(root).exists():
        pytest.skip("no disk quota here")
    assert os.path.ismount(root)
    reaped = reaper.reap_stale_sessions(docker=False, temp=temp)
    assert root in reaped.roots
    assert not root.exists() and not disk_quota.image_path(root).exists()
    assert str(root) not in mounts()
