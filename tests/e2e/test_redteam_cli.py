"""`envpipeline redteam` as a user runs it: a clean store passes, a weak task in it is caught."""

from __future__ import annotations

import json
from pathlib import Path

from envpipeline.models.task import Condition, Criterion
from envpipeline.redteam.registry import get_policy
from envpipeline.store.lake import Lake, Lineage
from envpipeline.store.records import row_to_task, task_to_row
from tests.e2e.test_cli import run_cli


def test_bad_compose_settings_fail_before_any_work(tmp_path: Path):
    result = run_cli("compose", "--tasks", "3", "--services", "2", "--out", str(tmp_path / "c"), check=False)
    assert result.returncode == 2
    assert "min_action_services" in result.stderr and not (tmp_path / "c").exists()


def test_redteam_passes_accepted_tasks_and_catches_a_weakened_one(tmp_path: Path):
    home = tmp_path / "home"
    run_cli("compose", "--tasks", "4", "--out", str(tmp_path / "c"), "--home", str(home))
    report = json.loads(run_cli("redteam", "--home", str(home), "--json").stdout)
    assert report["accepted_tasks"] == 4 and report["broken_accepted_tasks"] == []
    assert all(p["broke"] == 0 for p in report["policies"].values())
    everywhere = {"nop", "enumerate", "shotgun", "over-act", "early-stop"}  # attack every task
    assert all(report["policies"][name]["attacked"] == 4 for name in everywhere)

    # the same tasks with the old answer check ("the reply contains the value") are weak again
    lake = Lake(home)
    rows = [r for r in lake.read("verified_composed_tasks") if r["status"] == "accepted"]
    # a task whose writes state nothing beyond the chain's values has nothing to change: the
    # policy attacks exactly the others (three of these four: seed 0 states no such detail)
    careless = get_policy("careless-constants")
    stating = sum(careless.applies_to(row_to_task(r)) for r in rows)
    assert report["policies"]["careless-constants"]["attacked"] == stating == 3
    weak = []
    for row in rows:
        task = row_to_task(row)
        task.criteria = [
            c
            if c.kind != "final_answer"
            else Criterion(
                id=c.id,
                description=c.description,
                kind="output_contains",
                match={"text": Condition(op="icontains", value=c.match["text"].value)},
            )
            for c in task.criteria
        ]
        weak.append(task_to_row(task))
    lake.write_partition("verified_composed_tasks", "weak", weak, Lineage("test", "test"))
    result = run_cli("redteam", "--home", str(home), "--json", check=False)
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["policies"]["enumerate"]["broke"] == 4 and len(report["broken_accepted_tasks"]) == 4


def test_redteam_says_what_is_missing(tmp_path: Path):
    unknown = run_cli("redteam", "--family", "gui", "--home", str(tmp_path), check=False)
    assert unknown.returncode == 2 and "compose" in unknown.stderr and "world" in unknown.stderr
    for family, hint in (("world", "no gated world tasks"), ("compose", "no verified_composed_tasks")):
        empty = run_cli("redteam", "--family", family, "--home", str(tmp_path), check=False)
        assert empty.returncode == 2 and hint in " ".join(empty.stderr.split())


def _verified_seed(lake: Lake, key: str, bundle: Path) -> None:
    """A terminal seed row and a verified seed_verification row (as verified before the gate: no outcomes)."""
    lineage = Lineage("test", "test")
    lake.write_partition("terminal_seeds", key, [{"seed_key": key, "bundle_path": str(bundle)}], lineage)
    row = {
        "seed_key": key,
        "bundle": bundle.name,
        "status": "verified",
        "verdict": "verified",
        "red_team": "[]",
    }
    lake.write_partition("seed_verification", key, [row], lineage)


def test_redteam_terminal_passes_family_bundles_and_catches_a_weak_one(tmp_path: Path):
    from envpipeline.terminal.families.base import write_generated
    from envpipeline.terminal.families.registry import get_family
    from tests.unit.test_redteam_terminal import weak_bundle

    home, lake = tmp_path / "home", Lake(tmp_path / "home")
    for name in ("json-transform", "text-parsing"):
        family = get_family(name)
        task = family.generate(0, family.knobs_for("easy"), "easy")
        _verified_seed(lake, name, write_generated(task, tmp_path / "bundles" / name))
    args = ("redteam", "--family", "terminal", "--sandbox", "local", "--home", str(home), "--json")
    report = json.loads(run_cli(*args).stdout)
    assert report["accepted_tasks"] == 2 and report["broken_accepted_tasks"] == []
    assert set(report["policies"]) == {"nop", "tamper", "garbage-reward"}
    assert all(p["attacked"] == 2 and p["broke"] == 0 for p in report["policies"].values())

    _verified_seed(lake, "weak", weak_bundle(tmp_path / "bundles", "checker-in-app"))
    result = run_cli(*args, check=False)
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["broken_accepted_tasks"] == ["weak"] and report["policies"]["tamper"]["broke"] == 1


def test_bundle_verify_names_the_policy_and_rejects_the_planted_reward(tmp_path: Path):
    from tests.unit.test_redteam_terminal import false_pass_bundle, weak_bundle

    bundles = [weak_bundle(tmp_path, "checker-in-app"), false_pass_bundle(tmp_path)]
    result = run_cli("bundle", "verify", *map(str, bundles), "--sandbox", "local", "--json", check=False)
    assert result.returncode == 1
    weak, planted = json.loads(result.stdout)
    assert weak["verdict"] == "red_team_broken" and weak["red_team"]["tamper"]["reward"] == 1.0
    assert "tamper" in weak["reasons"][-1]
    assert planted["verdict"] == "tampered" and planted["oracle_rewards"] == [None, None]
    assert "reward.json" in planted["reasons"][0]
