"""`docker build` of an untrusted Dockerfile is held to the operator's ceiling."""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

import pytest

from envpipeline.models.bundle import TaskConfig
from envpipeline.sandbox.base import BASE_IMAGE, EnvironmentBuildError
from envpipeline.sandbox.build_limits import build_cgroup_parent
from envpipeline.sandbox.ceiling import OperatorCeiling
from envpipeline.terminal.bundle import dump_task_config, read_bundle, write_files

pytestmark = pytest.mark.docker

CEILING = OperatorCeiling(cpus=1, memory_mb=256, pids=64, storage_mb=100_000, timeout_sec=600)


def bundle_with(root: Path, run: str):
    marker = uuid.uuid4().hex  # a fresh image each time: never a cached build
    write_files(
        root,
        {
            "task.toml": dump_task_config(TaskConfig()),
            "instruction.md": "x\n",
            "environment/Dockerfile": f"FROM {BASE_IMAGE}\nRUN echo {marker} > /marker\nRUN {run}\n",
        },
    )
    return read_bundle(root)


@pytest.fixture
def limited(docker_sandbox):
    from envpipeline.sandbox.docker import DockerSandbox

    return DockerSandbox(ceiling=CEILING)


def test_a_build_past_the_memory_ceiling_fails(limited, tmp_path):
    hog = "python3 -c 'b = bytearray(700 * 2**20); b[::4096] = b\"x\" * len(b[::4096])'"
    with pytest.raises(EnvironmentBuildError, match="docker build failed"):
        limited.ensure_image(bundle_with(tmp_path / "hog", hog))
    fine = limited.ensure_image(bundle_with(tmp_path / "fine", "python3 -c 'b = bytearray(50 * 2**20)'"))
    assert fine


def test_a_build_past_the_process_ceiling_fails(limited, tmp_path):
    from envpipeline.sandbox.docker import cgroup_driver

    if build_cgroup_parent(CEILING.pids, cgroup_driver()) is None:
        pytest.skip("no cgroupfs driver or writable pids hierarchy: builds are not pids-limited here")
    # long sleeps: on a loaded machine 300 forks can take longer than a short sleep, and the flood
    # would never hold more than the ceiling at once
    flood = "for i in $(seq 300); do sleep 20 & done; wait"
    with pytest.raises(EnvironmentBuildError, match="docker build failed"):
        limited.ensure_image(bundle_with(tmp_path / "flood", flood))


def test_a_build_under_another_ceiling_leaves_this_ceilings_process_limit_alone():
    """Builds under different ceilings get cgroup parents of their own: with one parent for all, a
    build under the default ceiling rewrote pids.max to its own count while a 64-process build ran,
    and the 300-process flood above passed (the suite, two workers building at once)."""
    from envpipeline.sandbox.build_limits import PIDS_ROOT
    from envpipeline.sandbox.docker import cgroup_driver

    mine = build_cgroup_parent(CEILING.pids, cgroup_driver())
    if mine is None:
        pytest.skip("no cgroupfs driver or writable pids hierarchy: builds are not pids-limited here")
    other = build_cgroup_parent(4096, cgroup_driver())
    assert other is not None and other != mine
    limits = [root / mine.lstrip("/") / "pids.max" for root in (PIDS_ROOT, Path("/sys/fs/cgroup"))]
    assert next(p for p in limits if p.exists()).read_text().strip() == str(CEILING.pids)


def env_images(digest: str | None = None) -> set[str]:
    """Environment images (of one content digest, when given: the other Docker tests of the run
    build and remove theirs meanwhile)."""
    label = "label=envpipeline.env.digest" + (f"={digest}" if digest else "")
    listed = subprocess.run(["docker", "images", "-q", "--filter", label], capture_output=True, text=True)
    return set(listed.stdout.split())


def test_an_image_past_the_storage_ceiling_is_removed(docker_sandbox, tmp_path):
    from envpipeline.sandbox.docker import DockerSandbox, image_digest

    inspect = ["docker", "image", "inspect", "-f", "{{.Size}}", BASE_IMAGE]
    base_mb = int(subprocess.run(inspect, capture_output=True, text=True).stdout) // 2**20
    small = DockerSandbox(ceiling=CEILING.model_copy(update={"storage_mb": base_mb + 20}))
    bundle = bundle_with(tmp_path / "big", "head -c 60000000 /dev/urandom > /big.bin")
    digest = image_digest(bundle.paths.environment)  # its Dockerfile is built as written
    with pytest.raises(EnvironmentBuildError, match="above the operator's storage ceiling"):
        small.ensure_image(bundle)
    assert small.builds == 1
    assert env_images(digest) == set(), "the oversized image was kept"
