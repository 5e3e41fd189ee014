"""Nothing left behind: sessions of a killed process are reaped; SIGTERM cleans up on the way out."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from envpipeline.sandbox import ownership, reaper
from tests.unit.test_sandbox_contract import make_bundle

REPO = Path(__file__).resolve().parents[2]

#: Opens a session on the bundle, prints where it lives, then waits to be killed.
HOLDER = """
import sys, time
from envpipeline.sandbox import reaper
from envpipeline.sandbox.base import Limits
from envpipeline.sandbox.detect import select_sandbox
from envpipeline.terminal.bundle import read_bundle
if sys.argv[3] == "sigterm":
    reaper.exit_on_sigterm()
session = select_sandbox(sys.argv[1]).open(read_bundle(sys.argv[2]), Limits())
session.exec("sleep 600 &", 10)
print(getattr(session, "root", None) or session.container, flush=True)
time.sleep(600)
"""


@pytest.fixture
def bundle_dir(tmp_path: Path) -> Path:
    return make_bundle(tmp_path / "holder-task").paths.root


def start_holder(backend: str, bundle_dir: Path, tmp: Path, how: str) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(tmp)}
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, backend, str(bundle_dir), how],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    where = proc.stdout.readline().strip()
    assert where, "the holder opened a session"
    return proc, where


def container_exists(name: str) -> bool:
    return subprocess.run(["docker", "inspect", name], capture_output=True).returncode == 0


def test_a_killed_processs_local_root_is_reaped_and_a_live_ones_kept(local_sandbox, bundle_dir, tmp_path):
    temp = tmp_path / "temp"
    temp.mkdir()
    proc, root = start_holder("local", bundle_dir, temp, "sigkill")
    live = temp / f"{ownership.local_root_prefix()}mine"
    live.mkdir()
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert Path(root).is_dir(), "SIGKILL leaves the temp root behind"
    reaped = reaper.reap_stale_sessions(docker=False, temp=temp)
    assert reaped.roots == [Path(root)]
    assert not Path(root).exists()
    assert live.is_dir(), "a root of a live process is never reaped"


def test_sigterm_removes_the_local_root_on_the_way_out(local_sandbox, bundle_dir, tmp_path):
    temp = tmp_path / "temp"
    temp.mkdir()
    proc, root = start_holder("local", bundle_dir, temp, "sigterm")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 128 + signal.SIGTERM
    assert not Path(root).exists()
    assert not list(temp.iterdir())


@pytest.mark.docker
def test_a_killed_processs_container_is_reaped(docker_sandbox, bundle_dir, tmp_path):
    proc, container = start_holder("docker", bundle_dir, tmp_path, "sigkill")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert container_exists(container), "SIGKILL leaves the container running"
    assert container in reaper.stale_containers()
    reaped = reaper.reap_stale_sessions(temp=tmp_path)
    assert container in reaped.containers
    assert not container_exists(container)


@pytest.mark.docker
def test_a_live_owners_container_is_kept_until_it_expires(docker_sandbox, bundle_dir):
    from envpipeline.sandbox.base import Limits
    from envpipeline.terminal.bundle import read_bundle

    with docker_sandbox.open(read_bundle(bundle_dir), Limits()) as session:
        assert session.container not in reaper.stale_containers()
        owner = session.inspect(f'{{{{index .Config.Labels "{ownership.OWNER_LABEL}"}}}}').strip()
        expires = session.inspect(f'{{{{index .Config.Labels "{ownership.EXPIRES_LABEL}"}}}}').strip()
        assert owner == ownership.owner()
        assert not ownership.owner_gone(owner, expires, time.time())
        assert ownership.owner_gone(owner, expires, float(expires) + 1), "past its expiry it is stale"


def test_a_dead_owners_volume_image_is_an_orphan_and_a_live_ones_is_not(tmp_path):
    """A process killed while it made a Docker /app volume (e.g. a warm spare's) leaves its disk
    image behind without a labelled volume: the reaper finds it by the owner pid in its name."""
    from envpipeline.sandbox import docker_volume

    dead = subprocess.Popen(["true"])
    dead.wait()
    orphan = tmp_path / f"envpipeline-vol-{dead.pid}-0123456789ab.img"
    live = tmp_path / f"envpipeline-vol-{os.getpid()}-ba9876543210.img"
    other = tmp_path / f"envpipeline-root-{dead.pid}-x.img"
    for path in (orphan, live, other):
        path.write_bytes(b"")
    assert docker_volume.orphan_images(tmp_path) == [("envpipeline-0123456789ab-app", orphan)]
