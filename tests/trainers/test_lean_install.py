"""Installing the lean core (`pip install envpipeline`, no extras) next to TRL replaces nothing with
an older version and brings none of the application's heavy stack.

Runs in a trainer's environment (`make test-trainers`: .venv-trainers, which `make trainers-env`
builds with the trainer libraries first, freezes, then installs the core). Two views:

- before/after: the freeze `make trainers-env` took before installing the core vs. what is installed
  now (skipped in a venv that make did not build);
- what pip would do now: ``pip install --dry-run --report`` of this repository, read for versions
  lower than the installed ones (pip's resolver, as a lab's `pip install envpipeline` runs it).

The last test builds a project that must downgrade pydantic and checks that the same reading flags it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO = Path(__file__).resolve().parents[2]
FREEZE_BEFORE = Path(sys.prefix) / "freeze-before-envpipeline.txt"
#: the application's stack, which the lean core must not pull into a trainer's environment
HEAVY = {"dagster", "dagster-webserver", "dagster-docker", "litellm", "pyscipopt", "duckdb", "mcp"}
#: the libraries whose downgrade the issue saw (huggingface_hub, protobuf, pydantic) and the trainers'
WATCHED = ("huggingface-hub", "protobuf", "pydantic", "transformers", "torch", "trl", "datasets")


def installed_versions() -> dict[str, str]:
    """Canonical name -> version of every distribution in this environment."""
    return {canonicalize_name(d.metadata["Name"]): d.version for d in metadata.distributions()}


def frozen_versions(freeze: str) -> dict[str, str]:
    """Canonical name -> version from `pip freeze` output (`name==version` lines; others ignored)."""
    versions = {}
    for line in freeze.splitlines():
        if "==" in line and not line.startswith("#"):
            requirement = Requirement(line.strip())
            versions[canonicalize_name(requirement.name)] = str(requirement.specifier).removeprefix("==")
    return versions


def downgrades(after: dict[str, str], before: dict[str, str]) -> list[str]:
    """`name before -> after` for every package whose version in `after` is lower than in `before`."""
    return [
        f"{name} {before[name]} -> {version}"
        for name, version in sorted(after.items())
        if name in before and Version(version) < Version(before[name])
    ]


def planned_installs(report: dict[str, Any]) -> dict[str, str]:
    """Canonical name -> version of what a `pip install --report` would install."""
    return {
        canonicalize_name(item["metadata"]["name"]): item["metadata"]["version"] for item in report["install"]
    }


def dry_run(target: Path, tmp_path: Path) -> dict[str, Any]:
    """pip's installation report for `target` in this environment (nothing is installed)."""
    report = tmp_path / "report.json"
    command = [sys.executable, "-m", "pip", "install", "--dry-run", "--quiet", "--no-build-isolation"]
    done = subprocess.run([*command, "--report", str(report), str(target)], capture_output=True, text=True)
    assert done.returncode == 0, f"pip cannot install {target} here:\n{done.stderr[-3000:]}"
    return json.loads(report.read_text())


def test_installing_the_lean_core_downgraded_nothing_and_added_no_heavy_stack():
    if not FREEZE_BEFORE.is_file():
        pytest.skip(f"{FREEZE_BEFORE} is missing: this venv was not built by `make trainers-env`")
    before = frozen_versions(FREEZE_BEFORE.read_text())
    now = installed_versions()
    assert "envpipeline" in now and "trl" in before, "expected TRL before and envpipeline after"
    assert downgrades(now, before) == []
    assert sorted(HEAVY & (set(now) - set(before))) == []
    for name in WATCHED:
        assert now.get(name) == before.get(name), f"{name} changed: {before.get(name)} -> {now.get(name)}"


def test_pip_would_install_the_lean_core_here_without_downgrades(tmp_path):
    planned = planned_installs(dry_run(REPO, tmp_path))
    assert "envpipeline" in planned
    assert downgrades(planned, installed_versions()) == []
    assert sorted(HEAVY & set(planned)) == []


def test_a_project_pinning_an_older_pydantic_is_flagged(tmp_path):
    """The case of the issue: an exact pin below the trainer's pydantic makes pip downgrade it."""
    installed = Version(metadata.version("pydantic"))
    older = next(
        (v for v in ("2.12.5", "2.11.10", "2.10.6") if Version(v) < installed), None
    )  # published releases
    assert older is not None, f"pydantic {installed} is older than the probe's pins"
    project = tmp_path / "pins-old-pydantic"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n'
        f'[project]\nname = "pins-old-pydantic"\nversion = "0"\ndependencies = ["pydantic=={older}"]\n'
        "[tool.setuptools]\npy-modules = []\n"
    )
    flagged = downgrades(planned_installs(dry_run(project, tmp_path)), installed_versions())
    assert any(line.startswith(f"pydantic {installed} -> {older}") for line in flagged), flagged
