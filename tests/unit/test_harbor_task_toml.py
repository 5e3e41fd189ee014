"""Real-format Harbor / Terminal-Bench 2 task.toml files: accepted, written back as read, malformed ones rejected."""

from __future__ import annotations

import os
import subprocess
import tomllib
from pathlib import Path

import pytest

from envpipeline.terminal.bundle import (
    BundleFormatError,
    dump_task_config,
    load_task_config,
    task_config_warnings,
)
from envpipeline.terminal.checks import check_bundle
from envpipeline.terminal.families.base import write_generated
from tests.unit.test_static_checks import tiny_task

#: Terminal-Bench 2 layout as published (schema 1.0 spelling, deprecated size strings, image).
TB2_TASK_TOML = """version = "1.0"

[metadata]
author_name = "Jane Doe"
author_email = "jane@example.com"
difficulty = "medium"
category = "software-engineering"
tags = ["c", "compilers", "debugging"]
expert_time_estimate_min = 45.0
junior_time_estimate_min = 180.0

[verifier]
timeout_sec = 900.0

[agent]
timeout_sec = 900.0

[environment]
build_timeout_sec = 600.0
docker_image = "alexgshaw/fix-the-compiler:20251031"
cpus = 1
memory = "4G"
storage = "10G"
"""

#: Harbor schema 1.3 with every section Harbor defines (and one key from the future).
HARBOR_13_TASK_TOML = """schema_version = "1.3"
source = "terminal-bench-2"
artifacts = ["/app/output.log", { source = "/app/results", destination = "results", exclude = ["*.tmp"] }]

[task]
name = "terminal-bench/fix-the-compiler"
description = "Fix a miscompiling C compiler"
authors = [{ name = "Jane Doe", email = "jane@example.com" }]
keywords = ["c", "compilers"]

[metadata]
difficulty = "hard"
category = "software-engineering"
expert_time_estimate_min = 45
difficulty_explanation = "needs reading generated assembly"

[verifier]
timeout_sec = 900.0
env = { STRICT = "1" }
user = "root"

[agent]
timeout_sec = 1800.0
user = "agent"

[solution.env]
SOLVER_THREADS = "4"

[environment]
build_timeout_sec = 1200.0
docker_image = "alexgshaw/fix-the-compiler:20251031"
cpus = 2
memory = "4G"
storage_mb = 10240
gpus = 0
allow_internet = false
network_mode = "no-network"
workdir = "/app"
env = { CC = "gcc" }
mount_cache = true

[environment.healthcheck]
command = "test -f /app/ready"
retries = 5

[[environment.mcp_servers]]
name = "docs"
transport = "streamable-http"
url = "http://docs:8000/mcp"

[[environment.mcp_servers]]
name = "shell"
transport = "stdio"
command = "mcp-shell"
args = ["--root", "/app"]
"""


@pytest.mark.parametrize("text", [TB2_TASK_TOML, HARBOR_13_TASK_TOML], ids=["tb2", "harbor-1.3"])
def test_real_task_toml_passes_bundle_check(tmp_path: Path, text: str) -> None:
    bundle = write_generated(tiny_task(), tmp_path / "bundle")
    (bundle / "task.toml").write_bytes(text.encode())
    report = check_bundle(bundle)
    assert report.passed, report.failed()


def test_tb2_values_are_read(tmp_path: Path) -> None:
    (tmp_path / "task.toml").write_text(TB2_TASK_TOML)
    config = load_task_config(tmp_path / "task.toml")
    env = config.environment
    assert env.docker_image == "alexgshaw/fix-the-compiler:20251031"
    assert env.memory_mb == 4096 and env.storage_mb == 10240 and env.cpus == 1
    assert config.metadata.model_extra == {
        "expert_time_estimate_min": 45.0,
        "junior_time_estimate_min": 180.0,
    }
    assert config.unknown_keys == {} and task_config_warnings(config) == []


def test_harbor_13_values_and_future_key(tmp_path: Path) -> None:
    (tmp_path / "task.toml").write_text(HARBOR_13_TASK_TOML)
    config = load_task_config(tmp_path / "task.toml")
    assert config.effective_schema == "1.3" and config.task is not None
    assert config.solution is not None and config.solution.env == {"SOLVER_THREADS": "4"}
    assert [s.transport for s in config.environment.mcp_servers or []] == ["streamable-http", "stdio"]
    assert config.environment.allow_internet is False and config.environment.network_mode == "no-network"
    assert config.environment.memory_mb == 4096 and config.agent.user == "agent"
    assert config.artifacts is not None and config.artifacts[0] == "/app/output.log"
    assert config.unknown_keys == {"environment.mount_cache": True}
    report = check_bundle_with(tmp_path, HARBOR_13_TASK_TOML)
    assert report.warnings == ["schema: unknown keys kept as written (not used): environment.mount_cache"]


def check_bundle_with(tmp_path: Path, text: str):
    bundle = write_generated(tiny_task(), tmp_path / "bundle")
    (bundle / "task.toml").write_text(text)
    return check_bundle(bundle)


@pytest.mark.parametrize("text", [TB2_TASK_TOML, HARBOR_13_TASK_TOML], ids=["tb2", "harbor-1.3"])
def test_written_back_as_read(tmp_path: Path, text: str) -> None:
    (tmp_path / "task.toml").write_text(text)
    written = dump_task_config(load_task_config(tmp_path / "task.toml"))
    assert tomllib.loads(written) == tomllib.loads(text)
    (tmp_path / "task.toml").write_text(written)
    assert dump_task_config(load_task_config(tmp_path / "task.toml")) == written


def test_newer_schema_warns(tmp_path: Path) -> None:
    (tmp_path / "task.toml").write_text('schema_version = "1.9"\n')
    (warning,) = task_config_warnings(load_task_config(tmp_path / "task.toml"))
    assert "schema 1.9 is newer than the known 1.4" in warning


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (
            TB2_TASK_TOML.replace('memory = "4G"', 'memory = "lots"'),
            "environment: Value error, invalid size 'lots'",
        ),
        (TB2_TASK_TOML.replace("cpus = 1", "cpus = -2"), "environment.cpus"),
        (
            HARBOR_13_TASK_TOML.replace('url = "http://docs:8000/mcp"\n', ""),
            "environment.mcp_servers.0: Value error, 'url' is required for transport 'streamable-http'",
        ),
        (
            HARBOR_13_TASK_TOML.replace('memory = "4G"', 'memory = "4G"\nmemory_mb = 1024'),
            "conflicts with memory_mb",
        ),
        (
            TB2_TASK_TOML.replace('version = "1.0"', 'version = "2.0"'),
            "version: Value error, unsupported schema version '2.0'",
        ),
    ],
    ids=["bad-size", "negative-cpus", "mcp-without-url", "conflicting-memory", "major-version-2"],
)
def test_malformed_real_task_toml_rejected_with_reason(tmp_path: Path, text: str, reason: str) -> None:
    (tmp_path / "task.toml").write_text(text)
    with pytest.raises(BundleFormatError, match="task.toml: ") as err:
        load_task_config(tmp_path / "task.toml")
    assert reason in str(err.value)
    report = check_bundle_with(tmp_path, text)
    assert not report.passed and reason in report.checks[0].reason


@pytest.mark.slow
def test_harbor_itself_accepts_the_fixtures(tmp_path: Path) -> None:
    """The fixtures are real Harbor: its own package (scripts/harbor-validate.sh) loads both."""
    from tests.unit.test_export_harbor import REPO, _harbor_python

    python = _harbor_python()
    if python is None:
        pytest.skip("no Python >= 3.12 interpreter for harbor (set HARBOR_PYTHON)")
    known_only = HARBOR_13_TASK_TOML.replace("mount_cache = true\n", "")  # harbor's lint flags it too
    for name, text in (("tb2", TB2_TASK_TOML), ("harbor-13", known_only)):
        bundle = write_generated(tiny_task(), tmp_path / "tasks" / name)
        (bundle / "task.toml").write_text(text)
    run = subprocess.run(
        ["bash", str(REPO / "scripts" / "harbor-validate.sh"), str(tmp_path / "tasks")],
        env={**os.environ, "HARBOR_PYTHON": python},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if run.returncode == 3:
        pytest.skip(f"harbor could not be installed: {run.stderr[-500:]}")
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert run.stdout.count("OK ") == 2
