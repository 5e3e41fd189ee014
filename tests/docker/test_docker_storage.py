"""storage_mb on Docker: /app is an ext4 volume of that size, /logs a tmpfs of it; nothing is left behind.

The engine here stores containers on fuse-overlayfs (no ``--storage-opt size``), so the quota comes
from `envpipeline.sandbox.docker_volume`. Needs a Docker engine, the base image and root (loop
devices); skipped otherwise.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from envpipeline.sandbox import docker_volume, reaper
from envpipeline.sandbox.base import BASE_IMAGE, Limits
from envpipeline.sandbox.docker import SESSION_LABEL, DockerSandbox, image_exists
from tests.docker.test_docker_sandbox import make_bundle

REPO = Path(__file__).resolve().parents[2]


def _skip_reason() -> str | None:
    if not DockerSandbox.available():
        return "no Docker engine answers"
    if not image_exists(BASE_IMAGE):
        return f"base image {BASE_IMAGE} is missing: run `make base-image`"
    if os.geteuid() != 0:
        return "loop devices need root"
    return None


_REASON = _skip_reason()
pytestmark = [pytest.mark.docker, pytest.mark.skipif(_REASON is not None, reason=_REASON or "")]

WRITE_100_MB = "dd if=/dev/zero of={path}/big bs=1M count=100 2>&1; echo rc=$?"


def _volumes(label: str) -> list[str]:
    listed = subprocess.run(
        ["docker", "volume", "ls", "-q", "--filter", f"label={label}"], capture_output=True, text=True
    )
    return listed.stdout.split()


def _loop_devices_of(image: str) -> str:
    return subprocess.run(["losetup", "-j", image], capture_output=True, text=True).stdout.strip()


def test_a_docker_session_cannot_write_past_its_storage(tmp_path: Path) -> None:
    bundle = make_bundle(tmp_path / "task", marker="from the image")
    with DockerSandbox().open(bundle, Limits(storage_mb=64)) as session:
        assert session.app_volume is not None, "root with losetup here: /app must get its volume"
        assert session.exec("cat /app/marker.txt", 10).stdout == "from the image", (
            "Docker copies the image's /app into the empty volume"
        )
        for folder in ("/app", "/logs"):
            wrote = session.exec(WRITE_100_MB.format(path=folder), 60)
            assert "No space left on device" in wrote.stdout and "rc=1" in wrote.stdout, (
                folder,
                wrote.stdout,
            )
        session.exec("rm -f /app/big /logs/big", 10)
        assert session.exec("echo ok > /app/after && cat /app/after", 10).stdout == "ok\n"
        image = _image_of(session.app_volume)
        assert Path(image).exists() and _loop_devices_of(image)
    assert _volumes(f"{docker_volume.VOLUME_LABEL}={session.session_id}") == []
    assert not Path(image).exists() and _loop_devices_of(image) == ""


def test_clearing_the_verifier_folder_works_on_the_tmpfs(tmp_path: Path) -> None:
    with DockerSandbox().open(make_bundle(tmp_path / "task"), Limits(storage_mb=64)) as session:
        session.exec("mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt", 10)
        session.clear("/logs/verifier")
        session.clear("/logs")
        assert session.exec("ls -A /logs", 10).stdout == ""


def _image_of(volume: str) -> str:
    template = f'{{{{index .Labels "{docker_volume.IMAGE_LABEL}"}}}}'
    done = subprocess.run(["docker", "volume", "inspect", "--format", template, volume], capture_output=True)
    return done.stdout.decode().strip()


HOLDER = """
import sys, time
from envpipeline.sandbox.base import Limits
from envpipeline.sandbox.docker import DockerSandbox
from envpipeline.terminal.bundle import read_bundle
session = DockerSandbox().open(read_bundle(sys.argv[1]), Limits(storage_mb=64))
print(session.session_id, session.app_volume, flush=True)
time.sleep(600)
"""


def test_a_killed_sessions_volume_is_reaped(tmp_path: Path) -> None:
    bundle = make_bundle(tmp_path / "task")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(bundle.paths.root)], env=env, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None
    session_id, volume = holder.stdout.readline().split()
    image = _image_of(volume)
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    assert _volumes(f"{docker_volume.VOLUME_LABEL}={session_id}") == [volume]
    reaped = reaper.reap_stale_sessions(docker=True, temp=tmp_path)
    assert volume in reaped.volumes
    assert _volumes(f"{docker_volume.VOLUME_LABEL}={session_id}") == []
    containers = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label={SESSION_LABEL}={session_id}"],
        capture_output=True,
        text=True,
    )
    assert containers.stdout.split() == []
    assert not Path(image).exists() and _loop_devices_of(image) == ""
