"""Shared fixtures: sandbox backends (skipped with a reason where they cannot run)."""

import subprocess

import pytest

from envpipeline.sandbox.base import BASE_IMAGE


@pytest.fixture(scope="session")
def local_sandbox():
    from envpipeline.sandbox.local import LocalSandbox

    if not LocalSandbox.available():
        pytest.skip("no bubblewrap or namespaces: the local sandbox cannot isolate here")
    return LocalSandbox()


@pytest.fixture(scope="session")
def docker_sandbox():
    try:
        from envpipeline.sandbox.docker import DockerSandbox
    except ImportError as e:  # pragma: no cover - the module ships with the package
        pytest.skip(f"docker backend not importable: {e}")
    if not DockerSandbox.available():
        pytest.skip("no Docker engine answers here")
    probe = subprocess.run(["docker", "image", "inspect", BASE_IMAGE], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"base image {BASE_IMAGE} missing: run `make base-image`")
    return DockerSandbox()


@pytest.fixture(scope="session")
def template_worlds(tmp_path_factory):
    """Five-day persona worlds that together give every registered world template a task."""
    from tests.world_fixture import build_template_worlds

    return build_template_worlds(tmp_path_factory.mktemp("template-worlds"))
