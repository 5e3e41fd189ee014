"""Image resolution: known base images are substituted with a note, the rest are `needs_image`
and never run; registry builds get the host's pip settings as build args only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import pytest

from envpipeline.errors import ConfigError
from envpipeline.models.bundle import Bundle
from envpipeline.sandbox import replay
from envpipeline.sandbox.base import BASE_IMAGE, EnvironmentBuildError, ExecResult, Limits, Sandbox
from envpipeline.sandbox.dockerfile import parse_dockerfile
from envpipeline.sandbox.registries import (
    BuildNetwork,
    build_network_from_env,
    pip_build_args,
    with_build_args,
)
from envpipeline.terminal.bundle import read_bundle, write_files
from envpipeline.terminal.checks import check_bundle
from envpipeline.terminal.images import resolve_bundle_images, resolve_dockerfile, resolve_image
from envpipeline.terminal.offline import build_network_need
from envpipeline.terminal.seed_import import import_harbor_bundle
from envpipeline.terminal.verify import verify_bundle

SWEBENCH = "swebench/sweb.eval.x86_64.django_1776_django-11099:latest"
TEST_SH = "#!/bin/bash\nmkdir -p /logs/verifier\necho 1 > /logs/verifier/reward.txt\n"


def harbor_bundle(root: Path, dockerfile: str | None, docker_image: str | None = None) -> Path:
    """A minimal Harbor bundle whose image comes from `dockerfile` and/or `docker_image`."""
    toml = 'version = "1.0"\n\n[verifier]\ntimeout_sec = 60.0\n'
    if docker_image:
        toml += f'\n[environment]\ndocker_image = "{docker_image}"\n'
    files: dict[str, str | bytes] = {
        "task.toml": toml,
        "instruction.md": "Write the word done into /app/out.txt and nothing else, then stop.\n",
        "solution/solve.sh": "#!/bin/bash\necho done > /app/out.txt\n",
        "tests/test.sh": TEST_SH,
    }
    if dockerfile is not None:
        files["environment/Dockerfile"] = dockerfile
    write_files(root, files)
    return root


@pytest.mark.parametrize(
    ("image", "in_note"),
    [
        ("python:3.13-slim-bookworm", "instead of 3.13"),
        ("docker.io/library/python:3.12", "instead of 3.12"),
        ("ghcr.io/laude-institute/t-bench/python-3-13:20250620", "Python 3.11 instead of 3.13"),
        ("ghcr.io/laude-institute/t-bench/ubuntu-24-04:20250624", "instead of Ubuntu 24.04"),
        ("ubuntu:22.04", "Ubuntu 22.04"),
        ("debian:bookworm-slim", "same Debian release"),
        ("debian:bullseye", "instead of Debian bullseye"),
    ],
)
def test_known_images_are_substituted_with_a_note(image: str, in_note: str) -> None:
    resolution = resolve_image(image)
    assert resolution.kind == "substituted" and resolution.replacement == BASE_IMAGE
    assert in_note in resolution.note


@pytest.mark.parametrize(
    ("image", "in_note"),
    [
        (SWEBENCH, "SWE-bench"),
        ("ghcr.io/laude-institute/t-bench/deveval:latest", "DevEval"),
        ("python:3.12-alpine", "Alpine"),
        ("python:2.7", "Python 2"),
        ("acme/secret-toolchain:7", "no local equivalent"),
    ],
)
def test_task_specific_and_unknown_images_need_the_image(image: str, in_note: str) -> None:
    resolution = resolve_image(image)
    assert resolution.kind == "needs_image" and resolution.replacement is None
    assert in_note in resolution.note


def test_base_and_provided_images_run_as_they_are() -> None:
    assert resolve_image(BASE_IMAGE).kind == "base"
    provided = resolve_image(
        "acme/secret-toolchain:7", provided=lambda name: name == "acme/secret-toolchain:7"
    )
    assert (provided.kind, provided.replacement) == ("provided", "acme/secret-toolchain:7")


def test_dockerfile_resolution_keeps_stages_lines_and_unknown_images() -> None:
    text = (
        "ARG PY=python:3.12-slim\n"
        "FROM --platform=linux/amd64 ${PY} AS build\n"
        "RUN echo hi\n"
        "FROM build\n"
        "FROM \\\n  ubuntu:24.04\n"
        "FROM acme/tools:1 AS tools\n"
    )
    resolved, uses = resolve_dockerfile(text)
    assert [(u.line, u.resolution.image, u.resolution.kind) for u in uses] == [
        (2, "python:3.12-slim", "substituted"),
        (5, "ubuntu:24.04", "substituted"),
        (7, "acme/tools:1", "needs_image"),
    ]
    lines = resolved.splitlines()
    assert len(lines) == len(text.splitlines()), "line numbers stay as written"
    assert lines[1] == f"FROM {BASE_IMAGE} AS build" and lines[3] == "FROM build"
    assert lines[4] == f"FROM {BASE_IMAGE}" and lines[6] == "FROM acme/tools:1 AS tools"


class RecordingSandbox(Sandbox):
    """A sandbox that only records what it was asked to open (nothing may run a needs_image bundle)."""

    backend: ClassVar[str] = "recording"

    def __init__(self) -> None:
        self.opened: list[Bundle] = []

    def open(self, bundle: Bundle, limits: Limits):  # type: ignore[override]
        self.opened.append(bundle)
        raise EnvironmentBuildError("recording sandbox: not built")

    @classmethod
    def available(cls) -> bool:
        return True


@pytest.mark.parametrize(
    ("dockerfile", "docker_image"),
    [
        (f"FROM {BASE_IMAGE}\n", SWEBENCH),  # Harbor's prebuilt image names a SWE-bench instance
        (None, SWEBENCH),  # no Dockerfile: the image itself
        (f"FROM {SWEBENCH}\nWORKDIR /testbed\n", None),
    ],
)
def test_swebench_bundle_gets_needs_image_and_never_runs(
    tmp_path: Path, dockerfile: str | None, docker_image: str | None
) -> None:
    root = harbor_bundle(tmp_path / "swe", dockerfile, docker_image)
    sandbox = RecordingSandbox()
    result = verify_bundle(root, sandbox)
    assert result.verdict == "needs_image" and not result.passed
    assert sandbox.opened == [], "a needs_image bundle is never run"
    assert SWEBENCH in result.reasons[0] and "docker load" in result.reasons[0]
    check = check_bundle(root)
    failed = {c.name: c.reason for c in check.failed()}
    assert list(failed) == ["images"] and SWEBENCH in failed["images"] and "needs_image" in failed["images"]


def test_substituted_bundle_is_built_from_the_resolved_dockerfile(tmp_path: Path) -> None:
    root = harbor_bundle(tmp_path / "py", "FROM python:3.13-slim\nRUN python3 -V\n")
    sandbox = RecordingSandbox()
    result = verify_bundle(root, sandbox)
    assert result.verdict == "build_failed", "the recording sandbox builds nothing"
    assert sandbox.opened[0].dockerfile_text == f"FROM {BASE_IMAGE}\nRUN python3 -V\n"
    assert [(s.original, s.replacement) for s in result.substitutions] == [("python:3.13-slim", BASE_IMAGE)]
    check = check_bundle(root)
    assert check.passed and any("python:3.13-slim -> " in w for w in check.warnings)


def test_docker_image_without_dockerfile_builds_from_its_substitute(tmp_path: Path) -> None:
    root = harbor_bundle(tmp_path / "img", None, "ubuntu:24.04")
    images = resolve_bundle_images(read_bundle(root))
    assert images.dockerfile_text == f"FROM {BASE_IMAGE}\n"
    assert [s.file for s in images.substitutions()] == ["task.toml [environment].docker_image"]
    assert check_bundle(root).passed, "Harbor needs no Dockerfile when docker_image names the image"


def test_harbor_import_records_substitutions_and_flags(tmp_path: Path) -> None:
    dockerfile = (
        "FROM python:3.11-slim\nRUN apt-get update && apt-get install -y jq\n"
        "RUN curl -fsSL https://astral.sh/uv/install.sh | sh\n"
    )
    report = import_harbor_bundle(harbor_bundle(tmp_path / "src", dockerfile), tmp_path / "out")
    assert [(s.original, s.replacement) for s in report.substitutions] == [("python:3.11-slim", BASE_IMAGE)]
    written = (tmp_path / "out/environment/Dockerfile").read_text()
    assert written.startswith(f"FROM {BASE_IMAGE}\n")
    assert {f.network: f.lines for f in report.flags if f.name == "needs_network_build"} == {
        "package_registries": ["RUN apt-get update && apt-get install -y jq"],
        "unreachable_host": ["RUN curl -fsSL https://astral.sh/uv/install.sh | sh"],
    }
    swe = import_harbor_bundle(harbor_bundle(tmp_path / "swe", f"FROM {SWEBENCH}\n"), tmp_path / "swe-out")
    assert [f.name for f in swe.flags] == ["needs_image"] and swe.substitutions == []


@pytest.mark.parametrize(
    ("line", "need"),
    [
        ("RUN apt-get update && apt-get install -y --no-install-recommends tmux", "package_registries"),
        ("RUN pip install --no-cache-dir numpy==2.0", "package_registries"),
        ("RUN pip install https://files.pythonhosted.org/packages/x/six.whl", "package_registries"),
        ("RUN pip install git+https://github.com/psf/requests", "unreachable_host"),
        ("RUN curl -LsSf https://astral.sh/uv/install.sh | sh", "unreachable_host"),
        ("RUN git clone https://github.com/x/y && apt-get install -y make", "unreachable_host"),
        ("RUN npm install -g typescript", "unreachable_host"),
    ],
)
def test_build_network_need(line: str, need: str) -> None:
    assert build_network_need(line) == need


def test_pip_build_args_come_from_the_host_configuration(tmp_path: Path) -> None:
    conf = tmp_path / "pip.conf"
    conf.write_text(
        "[global]\nindex-url = https://mirror.example/simple\ncert = /etc/ssl/host-ca.pem\n"
        "find-links = /opt/wheels\n[install]\nretries = 2\n"
    )
    args = pip_build_args({"PIP_DEFAULT_TIMEOUT": "60", "PIP_FIND_LINKS": "/opt/wheels"}, [conf])
    assert args == {
        "PIP_INDEX_URL": "https://mirror.example/simple",
        "PIP_RETRIES": "2",
        "PIP_DEFAULT_TIMEOUT": "60",
        "PIP_TRUSTED_HOST": "mirror.example pypi.org files.pythonhosted.org",
    }, "host paths (cert, find-links) never reach the build"
    assert pip_build_args({}, [tmp_path / "missing.conf"]) == {}


def test_build_args_are_args_never_env() -> None:
    text = "FROM a AS one\nRUN pip install x\nFROM \\\n  b\nENV K=v\n"
    out = with_build_args(text, {"PIP_INDEX_URL": "https://mirror.example/simple"})
    assert out.splitlines() == [
        "FROM a AS one",
        "ARG PIP_INDEX_URL",
        "RUN pip install x",
        "FROM \\",
        "  b",
        "ARG PIP_INDEX_URL",
        "ENV K=v",
    ]
    assert "mirror.example" not in out, "values travel as --build-arg only"


def test_build_network_switch() -> None:
    assert build_network_from_env({}) is BuildNetwork.REGISTRIES
    assert build_network_from_env({"ENVPIPELINE_BUILD_NETWORK": "none"}) is BuildNetwork.NONE
    with pytest.raises(ConfigError, match="expected one of registries, none"):
        build_network_from_env({"ENVPIPELINE_BUILD_NETWORK": "offline-please"})


class FailingBuildSession:
    """A build session whose every command fails as an offline apt-get does."""

    def __init__(self) -> None:
        self.env: dict[str, str] = {}
        self.workdir = "/"
        self.base_image: str | None = None
        self.ignored: list[tuple[int, str]] = []

    def exec(self, command: str, timeout_sec: float, workdir: str = "/app") -> ExecResult:
        return ExecResult(exit_code=100, stderr="E: Unable to locate package jq")

    def extract(self, archive: object, directory: str) -> None:
        raise AssertionError("no COPY in this Dockerfile")

    def makedirs(self, directory: str) -> None:
        return None


def test_local_build_says_network_steps_need_the_docker_sandbox(tmp_path: Path) -> None:
    root = harbor_bundle(tmp_path / "apt", f"FROM {BASE_IMAGE}\nRUN apt-get install -y jq\n")
    bundle = read_bundle(root)
    steps = parse_dockerfile(bundle.paths.dockerfile.read_text())
    with pytest.raises(EnvironmentBuildError, match="builds without network; verify with --sandbox docker"):
        replay.replay(FailingBuildSession(), bundle, steps, 60)
    plain = parse_dockerfile(f"FROM {BASE_IMAGE}\nRUN false\n")
    with pytest.raises(EnvironmentBuildError) as error:
        replay.replay(FailingBuildSession(), bundle, plain, 60)
    assert "--sandbox docker" not in str(error.value), "only downloading steps point at Docker"


def test_seed_rows_carry_substitutions_and_needs_image(tmp_path: Path) -> None:
    """What the Dagster UI shows for a seeds-folder Harbor bundle: its swaps, or why it cannot run."""
    from envpipeline.terminal.seeds import import_folder_seed

    py = import_folder_seed(harbor_bundle(tmp_path / "py", "FROM python:3.13-slim\n"), tmp_path / "out-py")
    (sub,) = json.loads(py["substitutions"])
    assert (sub["original"], sub["replacement"]) == ("python:3.13-slim", BASE_IMAGE)
    assert "instead of 3.13" in sub["reason"]
    swe = import_folder_seed(harbor_bundle(tmp_path / "swe", None, SWEBENCH), tmp_path / "out-swe")
    assert [f["name"] for f in json.loads(swe["flags"])] == ["needs_image"]
