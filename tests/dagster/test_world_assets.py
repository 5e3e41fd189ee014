"""WildAWM in Dagster: personas add partitions, worlds build per persona, tasks are gated."""

import json

from dagster import instance_for_test, materialize

from assets.worlds import (
    gated_tasks_cover_interfaces,
    gated_world_tasks,
    persona_worlds,
    personas,
    world_checks_pass,
    world_tasks,
)
from resources.store import LakeResource
from resources.worlds import WorldsResource


def test_personas_worlds_tasks_and_gates(tmp_path, local_sandbox):
    resources = {"store": LakeResource(home=str(tmp_path)), "worlds": WorldsResource(personas=2, days=2)}
    with instance_for_test() as instance:
        assert materialize([personas], instance=instance, resources=resources).success
        keys = instance.get_dynamic_partitions("personas")
        assert len(keys) == 2
        for key in keys:
            result = materialize(
                [persona_worlds, world_tasks, world_checks_pass],
                instance=instance,
                resources=resources,
                partition_key=key,
            )
            assert result.success and all(c.passed for c in result.get_asset_check_evaluations())
        gated = materialize(
            [gated_world_tasks, gated_tasks_cover_interfaces], instance=instance, resources=resources
        )
        assert gated.success
        meta = gated.asset_materializations_for_node("gated_world_tasks")[0].metadata
        assert meta["accepted"].value > 0
        assert set(meta["gate_pass_rates"].value) >= {
            "diversity",
            "judge_consistency",
            "initial_unsatisfaction",
            "solvability",
            "difficulty",
            "counterfactual_probe",
        }
    lake = resources["store"].lake()
    days = lake.read("persona_worlds")
    assert len(days) == 2 * 3 and all(r["passed"] for r in days)
    accepted = [r for r in lake.read("gated_world_tasks") if r["status"] == "accepted"]
    assert all(all(g["passed"] for g in json.loads(r["gates"])) for r in accepted)
