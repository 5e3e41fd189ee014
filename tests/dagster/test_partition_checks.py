"""Asset checks of partitioned assets judge the partition their run wrote, and still fail a bad one.

Each case plants one good and one bad partition in the lake, then materializes a stand-in for the
asset (same key and partitions, writes nothing) with the real check: the run of the bad partition
fails the check, the run of the good one passes although the bad partition sits beside it, and
the check invoked outside a partitioned run (whole asset, counted in DuckDB) fails.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from dagster import (
    AssetChecksDefinition,
    DagsterInstance,
    DynamicPartitionsDefinition,
    asset,
    build_asset_check_context,
    materialize,
)

import assets.compose as compose_assets
from assets.compose import (
    accepted_tasks_defeat_red_team,
    accepted_tasks_meet_rubric_floor,
    composition_batches,
    rollouts_are_consistent,
)
from assets.forge import verified_bundles_defeat_red_team
from assets.terminal import (
    no_quarantined_seeds,
    nop_scores_zero,
    oracle_scores_one,
    seeds_defeat_red_team,
    static_checks_pass,
    terminal_seed_partitions,
)
from assets.worlds import persona_partitions, world_checks_pass
from envpipeline.compose.pipeline import compose_task
from envpipeline.models.task import TaskRecord
from envpipeline.store.lake import Lineage
from envpipeline.store.records import task_to_row
from resources.sandbox import SandboxResource
from resources.store import LakeResource
from tests.unit.conftest import SEEDS, pick_config

LINEAGE = Lineage("test", "test")
HELD = json.dumps([{"policy": "tamper", "binary": 0.0, "moot": False}])
BROKEN = json.dumps([{"policy": "tamper", "binary": 1.0, "moot": False}])
VERIFICATION = {
    "seed_key": "",
    "status": "verified",
    "oracle_rewards": "[1.0, 1.0]",
    "nop_reward": 0.0,
    "reasons": "[]",
    "red_team": HELD,
}
ROLLOUT = {"task_id": "", "sft_messages": "[]", "pass_matrix": "[[true], [false]]", "rewards": "[1.0, 0.5]"}
GATES = json.dumps([{"name": "solvable", "passed": True}])


@dataclass
class Case:
    check: AssetChecksDefinition
    asset: str
    partitions: DynamicPartitionsDefinition
    #: the asset's rows of a good partition, and of a bad one (keyed by partition)
    good: dict[str, list[dict[str, Any]]]
    bad: dict[str, list[dict[str, Any]]]


def seed_case(check, bad: dict[str, Any], asset: str = "seed_verification") -> Case:
    return Case(
        check,
        asset,
        terminal_seed_partitions,
        {asset: [{**VERIFICATION, "seed_key": "good"}]},
        {asset: [{**VERIFICATION, "seed_key": "bad", **bad}]},
    )


CASES = [
    Case(
        static_checks_pass,
        "terminal_seeds",
        terminal_seed_partitions,
        {"terminal_seeds": [{"seed_key": "good", "static_passed": True}]},
        {"terminal_seeds": [{"seed_key": "bad", "static_passed": False}]},
    ),
    seed_case(oracle_scores_one, {"oracle_rewards": "[1.0, 0.0]"}),
    seed_case(nop_scores_zero, {"nop_reward": 1.0}),
    seed_case(no_quarantined_seeds, {"status": "quarantined", "reasons": '["oracle 0"]'}),
    seed_case(seeds_defeat_red_team, {"red_team": BROKEN}),
    Case(
        world_checks_pass,
        "persona_worlds",
        persona_partitions,
        {"persona_worlds": [{"persona_id": "good", "day": d, "passed": True} for d in (0, 1)]},
        {"persona_worlds": [{"persona_id": "bad", "day": d, "passed": d == 0} for d in (0, 1)]},
    ),
    Case(
        rollouts_are_consistent,
        "composed_rollouts",
        composition_batches,
        {"composed_rollouts": [{**ROLLOUT, "task_id": "good"}]},
        {"composed_rollouts": [{**ROLLOUT, "task_id": "bad", "rewards": "[0.5, 1.0]"}]},
    ),
    Case(
        accepted_tasks_meet_rubric_floor,
        "verified_composed_tasks",
        composition_batches,
        {
            "verified_composed_tasks": [
                {"task_id": "good", "status": "accepted", "gates": GATES, "n_criteria": 4, "n_services": 3}
            ]
        },
        {
            "verified_composed_tasks": [
                {"task_id": "bad", "status": "accepted", "gates": GATES, "n_criteria": 2, "n_services": 3}
            ]
        },
    ),
    Case(
        verified_bundles_defeat_red_team,
        "verified_bundles",
        terminal_seed_partitions,
        {
            "verified_bundles": [
                {"seed_id": "good", "accepted": True, "bundle_path": "/b/good", "red_team": HELD}
            ]
        },
        {
            "verified_bundles": [
                {"seed_id": "bad", "accepted": True, "bundle_path": "/b/bad", "red_team": BROKEN}
            ]
        },
    ),
]


def plant(store: LakeResource, case: Case) -> None:
    lake = store.lake()
    for key, tables in (("good", case.good), ("bad", case.bad)):
        for asset_name, rows in tables.items():
            lake.write_partition(asset_name, key, rows, LINEAGE)
    if case.check is seeds_defeat_red_team:  # it looks up each seed's bundle path
        for key in ("good", "bad"):
            lake.write_partition(
                "terminal_seeds", key, [{"seed_key": key, "bundle_path": f"/b/{key}"}], LINEAGE
            )


def verdicts(case: Case, resources: dict[str, Any]) -> dict[str, bool]:
    """{"good": passed, "bad": passed} of the check in each partition's run, and "whole" outside one."""

    @asset(name=case.asset, partitions_def=case.partitions)
    def stand_in() -> None:
        """Writes nothing: the partition is already in the lake."""

    found: dict[str, bool] = {}
    with DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions(case.partitions.name or "", ["good", "bad"])
        for key in ("good", "bad"):
            result = materialize(
                [stand_in, case.check], instance=instance, resources=resources, partition_key=key
            )
            [evaluation] = result.get_asset_check_evaluations()
            found[key] = evaluation.passed
    needed = {k: v for k, v in resources.items() if k in case.check.required_resource_keys}
    whole = case.check(build_asset_check_context(), **needed)
    found["whole"] = whole.passed
    return found


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.check.check_key.name)
def test_a_check_fails_its_bad_partition_and_passes_a_good_one_beside_it(case, tmp_path):
    store = LakeResource(home=str(tmp_path))
    plant(store, case)
    resources = {"store": store, "sandbox": SandboxResource(backend="local")}
    assert verdicts(case, resources) == {"good": True, "bad": False, "whole": False}


def two_accepted_tasks() -> list[TaskRecord]:
    tasks = (compose_task(seed, pick_config()) for seed in SEEDS)
    return [t for t in tasks if t.status == "accepted"][:2]


def test_the_red_team_rerun_judges_only_the_runs_tasks(tmp_path, monkeypatch):
    """accepted_tasks_defeat_red_team re-runs the suite: here a stand-in suite breaks one task."""
    good, bad = two_accepted_tasks()

    def suite(task):
        return [type("Outcome", (), {"broke": task.task_id == bad.task_id, "policy": "tamper"})()]

    monkeypatch.setattr(compose_assets, "red_team", suite)
    rows = {key: [task_to_row(t)] for key, t in (("good", good), ("bad", bad))}
    case = Case(
        accepted_tasks_defeat_red_team,
        "verified_composed_tasks",
        composition_batches,
        {"verified_composed_tasks": rows["good"]},
        {"verified_composed_tasks": rows["bad"]},
    )
    store = LakeResource(home=str(tmp_path))
    plant(store, case)
    assert verdicts(case, {"store": store}) == {"good": True, "bad": False, "whole": False}
