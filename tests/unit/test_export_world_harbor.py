"""Harbor export of WildAWM world tasks: gated tasks -> static checks -> oracle 1.0 twice, nop 0.0."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envpipeline.errors import ConfigError
from envpipeline.export.harbor import export_harbor
from envpipeline.export.world_harbor import export_world_task
from envpipeline.models.world_task import GatedTask, WorldTask
from envpipeline.sandbox.local import LocalSandbox
from envpipeline.terminal.bundle import read_bundle
from envpipeline.terminal.checks import check_bundle
from envpipeline.terminal.verify import verify_bundle
from envpipeline.worlds import worldstore
from envpipeline.worlds.pipeline import build_and_gate
from envpipeline.worlds.templates import all_templates
from tests.world_fixture import find_task


@pytest.fixture(scope="module")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[GatedTask]]:
    root = tmp_path_factory.mktemp("worlds")
    # seed 2: a persona whose two days give four accepted templates, two with trajectory criteria
    build_and_gate(1, 2, 2, root, tasks_per_world_day=2, live_health=False, replay=False)
    gated = [GatedTask.model_validate_json(line) for line in (root / "tasks.jsonl").read_text().splitlines()]
    return root, [g for g in gated if g.status == "accepted"]


@pytest.fixture(scope="module")
def exported(worlds, tmp_path_factory: pytest.TempPathFactory) -> list[tuple[GatedTask, Path]]:
    root, accepted = worlds
    paths = export_harbor(accepted, tmp_path_factory.mktemp("harbor"), world_root=root)
    return list(zip(accepted, paths, strict=True))


def test_several_templates_are_accepted(worlds) -> None:
    assert len({g.task.template for g in worlds[1]}) >= 3


def test_world_layout(exported) -> None:
    gated, path = exported[0]
    bundle = read_bundle(path)
    assert bundle.config.metadata.envpipeline["task_id"] == gated.task.task_id
    assert gated.task.instruction.strip() in bundle.instruction and "worldtool" in bundle.instruction
    app = path / "environment" / "app"
    assert (app / "worldtool.py").is_file() and (app / "worldstore.py").is_file()
    assert (app / "home").is_dir() and (app / "apps" / "shop.sqlite").is_file()
    assert "envpipeline" not in (app / "worldstore.py").read_text().split("\n", 1)[1]
    tests = {p.name for p in (path / "tests").iterdir()}
    assert {"test.sh", "initial.tar.gz", "checklist.json"} <= tests
    scripted = {c.id for c in gated.task.criteria if c.kind != "calls_through"}
    assert {f"criterion_{c}.py" for c in scripted} == {t for t in tests if t.startswith("criterion_")}


def test_trajectory_criteria_are_dropped_from_the_export_by_name_not_scripted_to_pass(exported) -> None:
    dropped_somewhere = False
    for gated, path in exported:
        trajectory = [c.id for c in gated.task.criteria if c.kind == "calls_through"]
        checklist = json.loads((path / "tests" / "checklist.json").read_text())
        listed = set(checklist["criteria"]) | {c for i in checklist["checklist"] for c in i["criteria"]}
        assert not listed & set(trajectory) and listed
        assert not any((path / "tests" / f"criterion_{c}.py").exists() for c in trajectory)
        meta = read_bundle(path).config.metadata.envpipeline
        named = meta.get("not_exported") or {}
        assert isinstance(named, dict) and named.get("criteria", []) == trajectory
        dropped_somewhere = dropped_somewhere or bool(trajectory)
    assert dropped_somewhere


def _top_level_imports(source: str) -> set[str]:
    """The first dotted part of every module a source file imports (relative imports as '.')."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            found.add("." if node.level else (node.module or "").split(".")[0])
    return found


def test_the_exported_worldstore_is_the_stdlib_source_module_byte_for_byte(exported) -> None:
    source = Path(worldstore.__file__).read_bytes()
    for gated, path in exported:
        shipped = (path / "environment" / "app" / "worldstore.py").read_bytes()
        assert shipped == source, gated.task.template
    imports = _top_level_imports(source.decode("utf-8"))
    assert {"sqlite3", "json"} <= imports
    assert imports <= set(sys.stdlib_module_names), imports - set(sys.stdlib_module_names)


def test_worldtool_runs_on_plain_python(exported) -> None:
    app = exported[0][1] / "environment" / "app"
    listing = subprocess.run(
        [sys.executable, "-I", str(app / "worldtool.py"), "chat", "channels"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(listing.stdout)["channels"]
    missing = subprocess.run(
        [sys.executable, "-I", str(app / "worldtool.py"), "mail", "read", "999999"],
        capture_output=True,
        text=True,
    )
    assert missing.returncode == 1 and json.loads(missing.stdout)["status"] == 404


def test_every_export_passes_checks_and_verifies(exported) -> None:
    if not LocalSandbox.available():
        pytest.skip("no local sandbox on this machine")
    sandbox = LocalSandbox()
    for gated, path in exported:
        report = check_bundle(path)
        assert report.passed, (gated.task.template, [c.reason for c in report.failed()])
        result = verify_bundle(path, sandbox)
        rewards = [(t.agent, t.reward) for t in result.trials]
        assert result.verdict == "verified", (gated.task.template, result.reasons, rewards)
        assert rewards == [("oracle", 1.0), ("oracle", 1.0), ("nop", 0.0)]


@pytest.fixture(scope="module")
def one_task_per_template(template_worlds: list[Path]) -> list[tuple[WorldTask, Path]]:
    """For every registered template, its task on the first world day where it applies."""
    return [find_task(name, template_worlds) for name in sorted(all_templates())]


def test_every_template_round_trips_through_harbor(one_task_per_template, tmp_path: Path) -> None:
    assert {task.template for task, _ in one_task_per_template} == set(all_templates())
    if not LocalSandbox.available():
        pytest.skip("no local sandbox on this machine")
    sandbox = LocalSandbox()
    paths = export_harbor(one_task_per_template, tmp_path / "harbor")
    for (task, _), path in zip(one_task_per_template, paths, strict=True):
        report = check_bundle(path)
        assert report.passed, (task.template, [c.reason for c in report.failed()])
        result = verify_bundle(path, sandbox)
        rewards = [(t.agent, t.reward) for t in result.trials]
        assert result.verdict == "verified", (task.template, result.reasons, rewards)
        assert rewards == [("oracle", 1.0), ("oracle", 1.0), ("nop", 0.0)]


def test_export_refuses_what_it_cannot_place(worlds, tmp_path: Path) -> None:
    root, accepted = worlds
    with pytest.raises(ConfigError, match="world_root"):
        export_harbor([accepted[0]], tmp_path / "out")
    with pytest.raises(ConfigError, match="not a world day"):
        export_world_task(accepted[0], tmp_path, tmp_path / "x")
    rejected = accepted[0].model_copy(update={"status": "rejected"})
    with pytest.raises(ConfigError, match="rejected"):
        export_world_task(rejected, root / accepted[0].task.persona_id / "day-01", tmp_path / "y")


def test_tamper_broke_the_old_export_and_cannot_break_the_new_one(exported, tmp_path: Path) -> None:
    """The old test.sh ran its scoring python from /app without -I, so tamper's /app/json.py won."""
    from envpipeline.redteam.registry import get_policy
    from envpipeline.redteam.terminal import red_team
    from envpipeline.sandbox.base import Limits
    from envpipeline.terminal.bundle import read_bundle

    if not LocalSandbox.available():
        pytest.skip("no local sandbox on this machine")
    sandbox, tamper = LocalSandbox(), get_policy("tamper")
    _, path = exported[0]
    new = shutil.copytree(path, tmp_path / "new")
    old = shutil.copytree(path, tmp_path / "old")
    test_sh = old / "tests" / "test.sh"
    assert "python3 -I" in test_sh.read_text()
    test_sh.write_text(test_sh.read_text().replace("python3 -I", "python3"))
    rewards = {}
    for name, folder in (("old", old), ("new", new)):
        [outcome] = red_team(read_bundle(folder), sandbox, Limits(memory_mb=2048), policies=[tamper])
        rewards[name] = outcome.reward
    assert rewards == {"old": 1.0, "new": 0.0}
