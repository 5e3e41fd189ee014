"""Terminal seeds in Dagster: materialize and verify a seed, quarantine on rot, sensors and schedule."""

import datetime
import json
import shutil

from dagster import (
    DagsterInstance,
    build_asset_check_context,
    build_schedule_context,
    build_sensor_context,
    instance_for_test,
    materialize,
)

from assets.terminal import (
    no_quarantined_seeds,
    nop_scores_zero,
    oracle_scores_one,
    seed_verification,
    static_checks_pass,
    terminal_seeds,
)
from assets.terminal_sensors import oracle_rot_schedule, reverification_sensor, seed_folder_sensor
from envpipeline.terminal.families.base import write_generated
from envpipeline.terminal.families.registry import get_family
from resources.sandbox import SandboxResource
from resources.store import LakeResource

KEY = "fam-csv-json-merge-easy-0"


def _resources(home):
    return {"store": LakeResource(home=str(home)), "sandbox": SandboxResource(backend="local")}


def _materialize(instance, resources, key):
    return materialize(
        [
            terminal_seeds,
            seed_verification,
            static_checks_pass,
            oracle_scores_one,
            nop_scores_zero,
            no_quarantined_seeds,
        ],
        instance=instance,
        resources=resources,
        partition_key=key,
    )


def test_a_seed_is_checked_verified_and_quarantined_when_it_rots(tmp_path, local_sandbox):
    resources = _resources(tmp_path)
    lake = resources["store"].lake()
    with DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions("terminal_seeds", [KEY])
        first = _materialize(instance, resources, KEY)
        assert first.success
        assert all(c.passed for c in first.get_asset_check_evaluations())
        row = lake.read("seed_verification", KEY)[0]
        assert row["status"] == "verified" and row["backend"] == "local"
        assert json.loads(row["oracle_rewards"]) == [1.0, 1.0] and row["nop_reward"] == 0.0
        assert json.loads(row["trials"])[0]["durations"]["total"] > 0

        # The oracle rots: its bundle now fails; re-verification quarantines the seed.
        bundle = resources["store"].bundles_root / KEY
        (bundle / "solution" / "solve.sh").write_text("#!/bin/bash\nexit 0\n")
        again = materialize(
            [seed_verification, oracle_scores_one, no_quarantined_seeds],
            instance=instance,
            resources=resources,
            partition_key=KEY,
            selection=[seed_verification, oracle_scores_one, no_quarantined_seeds],
        )
        assert again.success
        row = lake.read("seed_verification", KEY)[0]
        assert row["status"] == "quarantined" and row["verdict"] == "oracle_failed"
        checks = {c.check_name: c for c in again.get_asset_check_evaluations()}
        assert not checks["no_quarantined_seeds"].passed
        assert not checks["oracle_scores_one"].passed
        event = again.asset_materializations_for_node("seed_verification")[0]
        assert event.metadata["status"].value == "quarantined"


def test_seed_folder_sensor_adds_partitions_and_requests_runs(tmp_path):
    resources = _resources(tmp_path)
    family = get_family("text-parsing")
    write_generated(family.generate(0, family.knobs_for("easy"), "easy"), tmp_path / "seeds" / "my task")
    with DagsterInstance.ephemeral() as instance:
        context = build_sensor_context(instance=instance, resources=resources)
        result = seed_folder_sensor(context)
        assert [r.partition_key for r in result.run_requests] == ["my-task"]
        assert result.dynamic_partitions_requests[0].partition_keys == ["my-task"]
        instance.add_dynamic_partitions(
            "terminal_seeds", ["my-task"]
        )  # what the daemon does with the request
        # Nothing changed: the next tick skips; a changed bundle requests a rerun.
        context = build_sensor_context(instance=instance, resources=resources, cursor=result.cursor)
        assert seed_folder_sensor(context).skip_message
        (tmp_path / "seeds" / "my task" / "instruction.md").write_text("Changed instruction for the task.\n")
        changed = seed_folder_sensor(context)
        assert [r.partition_key for r in changed.run_requests] == ["my-task"]
        assert not changed.dynamic_partitions_requests


def test_reverification_sensor_and_rot_schedule(tmp_path, local_sandbox, monkeypatch):
    resources = _resources(tmp_path)
    with instance_for_test() as instance:
        instance.add_dynamic_partitions("terminal_seeds", [KEY])
        assert _materialize(instance, resources, KEY).success
        context = build_sensor_context(instance=instance, resources=resources)
        assert reverification_sensor(context).skip_message, "a fresh verdict is current"
        monkeypatch.setattr("assets.terminal_sensors.VERIFIER_VERSION", "gold-verify-next")
        stale = reverification_sensor(build_sensor_context(instance=instance, resources=resources))
        assert [r.partition_key for r in stale.run_requests] == [KEY]
        assert stale.run_requests[0].tags["envpipeline/reverify_reason"] == "verifier code version changed"
        when = datetime.datetime(2026, 12, 2, 4, tzinfo=datetime.UTC)
        requests = list(
            oracle_rot_schedule(build_schedule_context(instance=instance, scheduled_execution_time=when))
        )
        assert [r.partition_key for r in requests] == [KEY]


def test_bundle_input_change_makes_a_verdict_stale(tmp_path, local_sandbox):
    from assets.terminal_sensors import stale_seeds

    resources = _resources(tmp_path)
    family = get_family("text-parsing")
    write_generated(family.generate(1, family.knobs_for("easy"), "easy"), tmp_path / "seeds" / "t1")
    with DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions("terminal_seeds", ["t1"])
        assert _materialize(instance, resources, "t1").success
        environment = resources["sandbox"].fingerprint()
        assert stale_seeds(resources["store"], ["t1"], environment) == {}
        shutil.copy(tmp_path / "seeds" / "t1" / "instruction.md", tmp_path / "seeds" / "t1" / "NOTES.md")
        assert stale_seeds(resources["store"], ["t1"], environment) == {"t1": "bundle inputs changed"}
        assert stale_seeds(resources["store"], ["t1"], "docker:other")["t1"].startswith("sandbox")


def test_red_team_check_passes_a_verified_seed_and_fails_on_a_weak_one(tmp_path, local_sandbox):
    from assets.terminal import seeds_defeat_red_team
    from envpipeline.store.lake import Lineage
    from tests.unit.test_redteam_terminal import weak_bundle

    resources = _resources(tmp_path / "home")
    lake = resources["store"].lake()
    with DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions("terminal_seeds", [KEY])
        result = materialize(
            [terminal_seeds, seed_verification, seeds_defeat_red_team],
            instance=instance,
            resources=resources,
            partition_key=KEY,
        )
        assert result.success
        [check] = result.get_asset_check_evaluations()
        assert check.passed and check.metadata["hack_pass_rate"].value == 0.0
        outcomes = json.loads(lake.read("seed_verification", KEY)[0]["red_team"])
        assert {o["policy"] for o in outcomes} == {"nop", "tamper", "garbage-reward"}
        assert not any(o["binary"] for o in outcomes)
        event = result.asset_materializations_for_node("seed_verification")[0]
        assert event.metadata["red_team_broke"].value == []

    # a seed verified before the gate existed (no stored outcomes) whose verifier trusts /app code
    weak = weak_bundle(tmp_path, "checker-in-app")
    lineage = Lineage("test", "test")
    lake.write_partition("terminal_seeds", "weak", [{"seed_key": "weak", "bundle_path": str(weak)}], lineage)
    row = {"seed_key": "weak", "status": "verified", "verdict": "verified", "red_team": "[]"}
    lake.write_partition("seed_verification", "weak", [row], lineage)
    check = seeds_defeat_red_team(build_asset_check_context(), **resources)
    assert not check.passed
    assert check.metadata["broken"].value == {"weak": ["tamper"]}


def test_seed_folder_bundles_are_imported_with_their_flags_and_a_solutionless_one_fails(
    tmp_path, local_sandbox
):
    """A TB1 task in <home>/seeds is imported like `bundle import` (rewrites and substitutions in
    the row and the UI metadata); a Harbor bundle without solution/ becomes a failed seed with a
    reason, not an exception."""
    from tests.unit.test_importer import make_tb1

    make_tb1(tmp_path / "seeds", "tb1-hello")
    family = get_family("csv-json-merge")
    harbor = write_generated(
        family.generate(0, family.knobs_for("easy"), "easy"), tmp_path / "seeds" / "unsolved"
    )
    shutil.rmtree(harbor / "solution")
    resources = _resources(tmp_path)
    lake = resources["store"].lake()
    with DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions("terminal_seeds", ["tb1-hello", "unsolved"])
        tb1 = materialize(
            [terminal_seeds, seed_verification],
            instance=instance,
            resources=resources,
            partition_key="tb1-hello",
        )
        assert tb1.success
        row = lake.read("terminal_seeds", "tb1-hello")[0]
        assert row["source_kind"] == "terminal-bench" and row["import_status"] == "imported"
        assert json.loads(row["rewrites"]) and json.loads(row["substitutions"])
        event = tb1.asset_materializations_for_node("terminal_seeds")[0]
        assert event.metadata["import_status"].value == "imported" and event.metadata["rewrites"].value > 0
        assert event.metadata["substitutions"].value
        # the fixture's test only checks that TEST_DIR is set, so doing nothing passes it too: now that
        # the local sandbox runs pytest from the image's tree, gold verification says so
        assert lake.read("seed_verification", "tb1-hello")[0]["verdict"] == "nop_passed"

        unsolved = materialize(
            [terminal_seeds, seed_verification],
            instance=instance,
            resources=resources,
            partition_key="unsolved",
        )
        assert unsolved.success
        row = lake.read("terminal_seeds", "unsolved")[0]
        assert row["import_status"] == "failed" and "solution" in row["import_error"]
        verification = lake.read("seed_verification", "unsolved")[0]
        assert verification["verdict"] == "no_solution" and verification["status"] == "failed"
        assert "solve.sh does not exist" in json.loads(verification["reasons"])[0]
