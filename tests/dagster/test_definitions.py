"""The Dagster shell: definitions load, assets materialize into the lake, checks run."""

import ast
import os
import subprocess
import sys
from pathlib import Path

import duckdb
from dagster import DagsterInstance, build_asset_check_context, materialize

from assets.catalog import catalog
from assets.compose import (
    accepted_tasks_defeat_red_team,
    accepted_tasks_meet_rubric_floor,
    composed_task_specs,
    service_contract_passes,
    service_library,
    verified_composed_tasks,
)
from assets.definitions import defs
from resources.composer import ComposerResource
from resources.store import LakeResource

REPO = Path(__file__).resolve().parents[2]


def test_definitions_load_with_every_asset_job_and_check():
    keys = {k.to_user_string() for k in defs.resolve_asset_graph().get_all_asset_keys()}
    assert {"service_library", "composed_task_specs", "verified_composed_tasks", "catalog"} <= keys
    for job in ("library_job", "compose_batch_job", "catalog_job"):
        assert defs.resolve_job_def(job) is not None


def test_materializing_a_batch_writes_the_lake_and_catalog(tmp_path):
    home = tmp_path / "data"
    resources = {"store": LakeResource(home=str(home)), "composer": ComposerResource(candidates_per_batch=12)}
    with DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions("composition_batches", ["batch-0007"])
        library = materialize(
            [service_library, service_contract_passes], instance=instance, resources=resources
        )
        assert library.success
        checks = library.get_asset_check_evaluations()
        assert checks and all(c.passed for c in checks)
        batch = materialize(
            [composed_task_specs, verified_composed_tasks, accepted_tasks_meet_rubric_floor],
            instance=instance,
            resources=resources,
            partition_key="batch-0007",
            selection=[composed_task_specs, verified_composed_tasks, accepted_tasks_meet_rubric_floor],
        )
        assert batch.success
        verified = batch.asset_materializations_for_node("verified_composed_tasks")[0].metadata
        assert verified["accepted"].value + verified["rejected"].value == 12
        assert verified["accepted"].value > 0
        assert "Instruction" in verified["preview"].value
        assert all(c.passed for c in batch.get_asset_check_evaluations())
        assert materialize([catalog], instance=instance, resources=resources).success
    con = duckdb.connect(str(home / "catalog.duckdb"), read_only=True)
    n = con.execute(
        "select count(*) from verified_composed_tasks where _partition = 'batch-0007'"
    ).fetchone()[0]
    assert n == 12
    seeds = con.execute("select distinct _partition from composed_task_specs").fetchall()
    assert seeds == [("batch-0007",)]


def test_the_red_team_check_passes_accepted_tasks_and_fails_a_weakened_one(tmp_path):
    from envpipeline.models.task import Criterion
    from envpipeline.store.lake import Lineage
    from envpipeline.store.records import row_to_task, task_to_row

    home = tmp_path / "data"
    resources = {"store": LakeResource(home=str(home)), "composer": ComposerResource(candidates_per_batch=6)}
    selection = [composed_task_specs, verified_composed_tasks, accepted_tasks_defeat_red_team]
    with DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions("composition_batches", ["batch-0001"])
        batch = materialize(
            selection, instance=instance, resources=resources, partition_key="batch-0001", selection=selection
        )
        assert batch.success
        metadata = batch.asset_materializations_for_node("verified_composed_tasks")[0].metadata
        assert metadata["accepted_hack_pass_rate"].value == 0.0
        (check,) = batch.get_asset_check_evaluations()
        assert check.passed and check.metadata["accepted_checked"].value == metadata["accepted"].value

        # a row whose answer check is only "the reply contains the value" is broken by `enumerate`
        lake = LakeResource(home=str(home)).lake()
        task = row_to_task(next(r for r in lake.read("verified_composed_tasks") if r["status"] == "accepted"))
        task.criteria = [
            Criterion(
                id=c.id, description=c.description, kind="output_contains", match={"text": c.match["text"]}
            )
            if c.kind == "final_answer"
            else c
            for c in task.criteria
        ]
        lake.write_partition("verified_composed_tasks", "batch-weak", [task_to_row(task)], Lineage("t", "t"))
        check = accepted_tasks_defeat_red_team(
            build_asset_check_context(), store=LakeResource(home=str(home))
        )
        assert not check.passed and task.task_id in check.metadata["broken"].value


def test_the_training_files_leave_the_harbor_tasks_folder_to_its_own_asset(tmp_path):
    """`training_datasets` rebuilds ``datasets/`` but keeps ``datasets/harbor``, which
    `harbor_tasks` writes (the two run side by side in the default job)."""
    from assets.datasets import HARBOR_FOLDER, clear_folder

    out = tmp_path / "datasets"
    (out / HARBOR_FOLDER / "cw-1").mkdir(parents=True)
    (out / HARBOR_FOLDER / "cw-1" / "task.toml").write_text("x")
    (out / "verl").mkdir()
    (out / "verl" / "rl.parquet").write_text("old")
    (out / "README.md").write_text("old card")
    (out / "stale-link").symlink_to(out / "verl")
    clear_folder(out, keep=(HARBOR_FOLDER,))
    assert sorted(p.name for p in out.iterdir()) == [HARBOR_FOLDER]
    assert (out / HARBOR_FOLDER / "cw-1" / "task.toml").read_text() == "x"
    clear_folder(tmp_path / "new")
    assert (tmp_path / "new").is_dir()


_INTERVALS = (
    "from assets.definitions import defs; "
    "print({s.name: s.minimum_interval_seconds for s in defs.get_repository_def().sensor_defs})"
)


def _sensor_intervals(**env: str) -> subprocess.CompletedProcess[str]:
    """The sensors' intervals as a fresh code location loads them under `env`."""
    return subprocess.run(
        [sys.executable, "-c", _INTERVALS],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), **env},
        timeout=120,
    )


def test_one_variable_sets_every_sensors_interval_and_a_bad_value_is_refused():
    default = ast.literal_eval(_sensor_intervals(ENVPIPELINE_SENSOR_INTERVAL_SEC="").stdout.splitlines()[-1])
    assert default["freshness_sensor"] == 30 and default["reverification_sensor"] == 300
    assert len(default) >= 4
    quick = ast.literal_eval(_sensor_intervals(ENVPIPELINE_SENSOR_INTERVAL_SEC="5").stdout.splitlines()[-1])
    assert quick == dict.fromkeys(default, 5)
    for bad in ("soon", "0"):
        refused = _sensor_intervals(ENVPIPELINE_SENSOR_INTERVAL_SEC=bad)
        assert refused.returncode != 0
        assert f"ENVPIPELINE_SENSOR_INTERVAL_SEC={bad!r}" in refused.stderr
