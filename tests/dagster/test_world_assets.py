"""WildAWM in Dagster: personas add partitions, worlds build per persona, tasks are gated."""

import json

from dagster import AssetKey, AssetRecordsFilter, instance_for_test, materialize

from assets.worlds import (
    gated_tasks_cover_interfaces,
    gated_tasks_fail_careless_agents,
    gated_tasks_resist_red_team,
    gated_world_tasks,
    persona_worlds,
    personas,
    world_checks_pass,
    world_tasks,
)
from envpipeline.store.lake import Lineage
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
            [
                gated_world_tasks,
                gated_tasks_cover_interfaces,
                gated_tasks_resist_red_team,
                gated_tasks_fail_careless_agents,
            ],
            instance=instance,
            resources=resources,
        )
        assert gated.success
        resist = next(
            c for c in gated.get_asset_check_evaluations() if c.check_name == "gated_tasks_resist_red_team"
        )
        assert resist.passed and resist.metadata["hack_pass_rate"].value == 0.0
        careless = next(
            c
            for c in gated.get_asset_check_evaluations()
            if c.check_name == "gated_tasks_fail_careless_agents"
        )
        assert careless.passed and careless.metadata["templates_probed"].value > 0
        assert careless.metadata["slips_that_changed_the_world"].value > 0
        meta = gated.asset_materializations_for_node("gated_world_tasks")[0].metadata
        assert meta["accepted"].value > 0
        assert meta["vendi_tasks_raw"].value >= meta["vendi_tasks"].value > 0  # masked headline
        assert set(meta["gate_pass_rates"].value) >= {
            "diversity",
            "judge_consistency",
            "initial_unsatisfaction",
            "solvability",
            "difficulty",
            "counterfactual_probe",
            "red_team",
        }
        assert meta["accepted_hack_pass_rate"].value == 0.0
        assert isinstance(meta["red_team_rejections_by_policy"].value, dict)
    lake = resources["store"].lake()
    days = lake.read("persona_worlds")
    assert len(days) == 2 * 3 and all(r["passed"] for r in days)
    accepted = [r for r in lake.read("gated_world_tasks") if r["status"] == "accepted"]
    assert all(all(g["passed"] for g in json.loads(r["gates"])) for r in accepted)
    # a stored red-team break on an accepted task fails the check
    row = {k: v for k, v in accepted[0].items() if not k.startswith("_") and k != "partition"}
    gates = json.loads(row["gates"])
    next(g for g in gates if g["name"] == "red_team")["evidence"]["policies"]["nop"].update(binary=1.0)
    row["gates"] = json.dumps(gates)
    lake.write_partition("gated_world_tasks", "all", [row], Lineage("test", "test"))
    broken = gated_tasks_resist_red_team(store=resources["store"])
    assert not broken.passed and row["task_id"] in broken.metadata["broken"].value


def _rows_without_home(rows: list[dict], home) -> list[str]:
    """Rows as text, without the run that wrote them or the data folder they name (nor the row hash,
    which covers that folder)."""
    kept = [{k: v for k, v in r.items() if k not in ("_run_id", "_row_hash")} for r in rows]
    return sorted(json.dumps(r, sort_keys=True, default=str).replace(str(home), "HOME") for r in kept)


def test_a_range_run_builds_each_persona_world_as_a_run_of_that_persona_alone(tmp_path, local_sandbox):
    """What the default job's range runs do (a run over personas a..b) against a run per persona."""
    worlds = WorldsResource(personas=2, days=2, live_health=False)
    ranged, single = tmp_path / "ranged", tmp_path / "single"
    for home in (ranged, single):
        resources = {"store": LakeResource(home=str(home)), "worlds": worlds}
        with instance_for_test() as instance:
            assert materialize([personas], instance=instance, resources=resources).success
            keys = instance.get_dynamic_partitions("personas")
            assert len(keys) == 2
            selection = [persona_worlds, world_tasks, world_checks_pass]
            if home == ranged:
                tags = {
                    "dagster/asset_partition_range_start": keys[0],
                    "dagster/asset_partition_range_end": keys[1],
                }
                result = materialize(selection, instance=instance, resources=resources, tags=tags)
                assert result.success
                [check] = result.get_asset_check_evaluations()
                assert check.passed and check.metadata["days"].value == 2 * 3  # both worlds judged
                for key in keys:  # each persona keeps its own materialization and metadata
                    [event] = instance.fetch_materializations(
                        AssetRecordsFilter(asset_key=AssetKey("world_tasks"), asset_partitions=[key]),
                        limit=1,
                    ).records
                    assert event.asset_materialization is not None
                    assert event.asset_materialization.metadata["candidates"].value > 0
            else:
                for key in keys:
                    assert materialize(
                        selection, instance=instance, resources=resources, partition_key=key
                    ).success
    for asset in ("persona_worlds", "world_tasks"):
        got = _rows_without_home(LakeResource(home=str(ranged)).lake().read(asset), ranged)
        want = _rows_without_home(LakeResource(home=str(single)).lake().read(asset), single)
        assert got and got == want, asset


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
