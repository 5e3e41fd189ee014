"""Every kind of Harbor export (each terminal family, composed, world) passes check, verify and Harbor."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envpipeline.export.harbor_sample import export_harbor_sample
from envpipeline.terminal.families.registry import all_families
from tests.unit.test_export_harbor import _harbor_python

REPO = Path(__file__).resolve().parents[2]


def envpipeline_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "envpipeline.cli", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=dict(os.environ),
        timeout=1200,
        check=False,
    )


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return export_harbor_sample(tmp_path_factory.mktemp("harbor-sample") / "out", composed=2, world=1)


def kind_of(path: Path) -> str:
    """The exporter that wrote `path`, told by the tool its image ships (or the family name)."""
    if (path / "environment" / "app" / "envtool.py").is_file():
        return "composed"
    if (path / "environment" / "app" / "worldtool.py").is_file():
        return "world"
    return "terminal" if path.name in all_families() else "unknown"


def test_the_sample_holds_every_family_and_both_task_kinds(sample: list[Path]) -> None:
    names = {p.name for p in sample}
    assert set(all_families()) <= names
    kinds = [kind_of(p) for p in sample]
    assert kinds.count("terminal") == len(all_families()) == 12
    assert kinds.count("composed") == 2 and kinds.count("world") == 1


@pytest.mark.slow
def test_every_export_passes_bundle_check_and_verify(sample: list[Path]) -> None:
    check = envpipeline_cli("bundle", "check", "--json", *map(str, sample))
    assert check.returncode == 0, check.stdout[-3000:] + check.stderr[-2000:]
    verify = envpipeline_cli("bundle", "verify", "--sandbox", "local", "--json", *map(str, sample))
    results = json.loads(verify.stdout)
    verdicts = {Path(r["path"]).name: (r["verdict"], r["reasons"]) for r in results}
    assert verify.returncode == 0, verdicts
    assert verdicts == {p.name: ("verified", []) for p in sample}
    assert all(r["oracle_rewards"] == [1.0, 1.0] and r["nop_reward"] == 0.0 for r in results)


@pytest.mark.slow
def test_a_broken_export_is_not_verified(sample: list[Path], tmp_path: Path) -> None:
    """The verify run above can fail: an export whose solution does nothing gets a reason, not a pass."""
    broken = {}
    for path in (sample[0], next(p for p in sample if kind_of(p) == "composed")):
        copy = shutil.copytree(path, tmp_path / path.name, symlinks=True)
        (copy / "solution" / "solve.sh").write_text("#!/bin/bash\ntrue\n")
        broken[copy.name] = copy
    verify = envpipeline_cli("bundle", "verify", "--sandbox", "local", "--json", *map(str, broken.values()))
    assert verify.returncode == 1
    for result in json.loads(verify.stdout):
        assert result["verdict"] != "verified" and result["reasons"], result
        assert result["oracle_rewards"][0] == 0.0


@pytest.mark.slow
def test_harbor_package_loads_every_export(sample: list[Path], tmp_path: Path) -> None:
    python = _harbor_python()
    if python is None:
        pytest.skip("no Python >= 3.12 interpreter for harbor (set HARBOR_PYTHON)")

    def validate(root: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", str(REPO / "scripts" / "harbor-validate.sh"), str(root)],
            env={**os.environ, "HARBOR_PYTHON": python},
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )

    run = validate(sample[0].parent)
    if run.returncode == 3:
        pytest.skip(f"harbor could not be installed: {run.stderr[-500:]}")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert f"{len(sample)}/{len(sample)} task directories valid" in run.stdout
    world = next(p for p in sample if kind_of(p) == "world")
    broken = shutil.copytree(world, tmp_path / "broken" / world.name, symlinks=True)
    (broken / "instruction.md").unlink()
    again = validate(broken.parent)
    assert again.returncode == 1 and f"FAIL {broken}" in again.stdout


@pytest.mark.slow
def test_harbor_package_validates_both_modes_with_a_separate_verifier(tmp_path: Path) -> None:
    """Offline and portable composed/world exports: Harbor's validator passes with no shared-verifier."""
    python = _harbor_python()
    if python is None:
        pytest.skip("no Python >= 3.12 interpreter for harbor (set HARBOR_PYTHON)")
    roots = []
    for mode in ("offline", "portable"):
        paths = export_harbor_sample(tmp_path / mode, composed=1, world=1, mode=mode)
        roots += [p for p in paths if kind_of(p) in ("composed", "world")]
    assert len(roots) == 4

    def validate(*paths: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", str(REPO / "scripts" / "harbor-validate.sh"), *map(str, paths)],
            env={**os.environ, "HARBOR_PYTHON": python},
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )

    run = validate(*roots)
    if run.returncode == 3:
        pytest.skip(f"harbor could not be installed: {run.stderr[-500:]}")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "4/4 task directories valid" in run.stdout and "shared-verifier" not in run.stdout
    # the check can fail: the same task with the verifier back in the agent's sandbox is refused
    shared = shutil.copytree(roots[-1], tmp_path / "shared" / roots[-1].name, symlinks=True)
    toml = shared / "task.toml"
    toml.write_text(toml.read_text().replace('environment_mode = "separate"\n', ""))
    again = validate(shared)
    assert again.returncode == 1 and "shared-verifier" in again.stdout
