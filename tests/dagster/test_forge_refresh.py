"""The refresh re-estimates pass rates with the configured policy, then re-selects."""

import json
from datetime import UTC, datetime

from dagster import (
    AssetMaterialization,
    DagsterInstance,
    DagsterRun,
    DagsterRunStatus,
    build_schedule_context,
    build_sensor_context,
    instance_for_test,
    materialize,
)

from assets.definitions import defs
from assets.forge import forge_refresh_schedule, seed_pass_rates
from assets.forge_sensors import forge_reselect_sensor
from assets.terminal import seed_verification, terminal_seeds
from resources.forge import ForgeResource
from resources.sandbox import SandboxResource
from resources.store import LakeResource

KEYS = ["fam-text-parsing-easy-0", "fam-json-transform-medium-0"]


def test_the_refresh_requests_every_seed_then_the_sensor_reselects_once_they_are_done():
    with instance_for_test() as instance:
        instance.add_dynamic_partitions("terminal_seeds", KEYS)
        when = datetime(2026, 12, 7, 5, tzinfo=UTC)
        requests = list(
            forge_refresh_schedule(build_schedule_context(instance=instance, scheduled_execution_time=when))
        )
        assert sorted(r.partition_key for r in requests) == sorted(KEYS)
        assert forge_refresh_schedule.job_name == "pass_rate_job"

        def sense():
            return forge_reselect_sensor(build_sensor_context(instance=instance))

        assert "no pass rate" in sense().skip_message
        for key in KEYS:
            instance.report_runless_asset_event(AssetMaterialization("seed_pass_rates", partition=key))
        running = DagsterRun(job_name="pass_rate_job", run_id="a" * 32, status=DagsterRunStatus.STARTED)
        instance.add_run(running)
        assert "waiting for 1 pass-rate run" in sense().skip_message
        instance.delete_run(running.run_id)
        first = sense()
        assert first.run_key and first.run_key.startswith("reselect:")
        instance.report_runless_asset_event(AssetMaterialization("selector_decisions"))
        assert "newer than every pass rate" in sense().skip_message
        instance.report_runless_asset_event(AssetMaterialization("seed_pass_rates", partition=KEYS[0]))
        second = sense()
        assert second.run_key and second.run_key != first.run_key
    assert defs.resolve_sensor_def("forge_reselect_sensor").job_name == "selector_job"


def test_pass_rates_are_estimated_with_the_configured_policy(tmp_path, local_sandbox):
    key = KEYS[0]
    table = tmp_path / "rollouts.jsonl"
    rows = [{"task_id": key, "policy": "harness-x", "reward": r} for r in (1, 0, 0)]
    table.write_text("".join(json.dumps(r) + "\n" for r in rows))
    resources = {
        "store": LakeResource(home=str(tmp_path / "home")),
        "sandbox": SandboxResource(backend="local"),
        "forge": ForgeResource(policy_kind="recorded", rollouts_table=str(table), rollouts=2),
    }
    with DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions("terminal_seeds", [key])
        assert materialize(
            [terminal_seeds, seed_verification, seed_pass_rates],
            instance=instance,
            resources=resources,
            partition_key=key,
        ).success
    [row] = resources["store"].lake().read("seed_pass_rates", key)
    assert row["policy"] == "harness-x" and row["pass_rate"] == 0.5
    rollouts = json.loads(row["rollouts"])
    assert [(r["kind"], r["reward"], r["seed_id"]) for r in rollouts] == [
        ("recorded", 1.0, key),
        ("recorded", 0.0, key),
    ]
