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
from resources.llm import LLMResource
from resources.store import LakeResource
from resources.worlds import WorldsResource
from tests.llm_server import llm_server_fixture  # noqa: F401  # pytest fixture, requested as llm_server


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


def test_the_llm_configured_on_the_resource_reviews_every_world_day(tmp_path, local_sandbox, llm_server):
    """The reviewer LLM reaches WildAWM through the Dagster resources, and its verdict can reject a day."""
    llm_server.default = '{"ok": false, "issues": ["the persona pays rent twice on day 1"]}'
    llm = LLMResource(model="openai/reviewer", api_base=llm_server.api_base, num_retries=0)
    resources = {
        "store": LakeResource(home=str(tmp_path)),
        "worlds": WorldsResource(personas=1, days=1, live_health=False, llm=llm),
    }
    with instance_for_test() as instance:
        assert materialize([personas], instance=instance, resources=resources).success
        [key] = instance.get_dynamic_partitions("personas")
        result = materialize(
            [persona_worlds, world_checks_pass], instance=instance, resources=resources, partition_key=key
        )
        assert result.success
        [check] = result.get_asset_check_evaluations()
        assert not check.passed
    assert llm_server.requests, "the reviewer never called the configured endpoint"
    days = resources["store"].lake().read("persona_worlds")
    reviews = [g for r in days for g in json.loads(r["checks"]) if g["name"] == "llm_reviewer"]
    assert reviews and not all(g["passed"] for g in reviews)
    assert any("pays rent twice" in g["reason"] for g in reviews)
