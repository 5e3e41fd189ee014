"""A backfill of many partitions runs a few partitions per run, and records what single runs record.

The backfill goes through Dagster's own machinery (`tests/dagster/backfill_project/harness.py`):
created like the UI creates one, planned and submitted by the backfill daemon's iteration, each
run executed in this process. A run over a range writes every partition's lake files, gives every
partition its own materialization metadata, and its checks judge every partition it wrote.
"""

import math

from dagster import (
    AssetExecutionContext,
    AssetKey,
    AssetRecordsFilter,
    DagsterEventType,
    DagsterInstance,
    DagsterRunStatus,
    DynamicPartitionsDefinition,
    MaterializeResult,
    asset,
    materialize,
)
from dagster._core.execution.backfill import BulkActionStatus

from assets.compose import COMPOSITION_BATCHES
from assets.partition_runs import (
    COMPOSE_PARTITIONS_PER_RUN,
    SEED_PARTITIONS_PER_RUN,
    WORLD_PARTITIONS_PER_RUN,
    PartitionResult,
    compose_backfill_policy,
    materialize_partitions,
)
from envpipeline.store.lake import Lake
from tests.dagster.backfill_project.defs import backfill_resources, defs
from tests.dagster.backfill_project.harness import backfill_instance, backfill_runs, run_backfill

COMPOSE = ["composed_task_specs", "verified_composed_tasks", "composed_rollouts"]
BATCHES = [f"batch-{i}" for i in range(30)]
RANGE_TAGS = {"dagster/asset_partition_range_start": "a", "dagster/asset_partition_range_end": "b"}


def _content(rows: list[dict]) -> list[dict]:
    """Rows without the id of the run that wrote them, in a stable order."""
    kept = [{k: v for k, v in r.items() if k != "_run_id"} for r in rows]
    return sorted(kept, key=repr)


def _metadata(instance: DagsterInstance, asset_name: str, key: str) -> dict:
    [record] = instance.fetch_materializations(
        AssetRecordsFilter(asset_key=AssetKey(asset_name), asset_partitions=[key]), limit=1
    ).records
    materialization = record.asset_materialization
    assert materialization is not None
    return {k: v.value for k, v in materialization.metadata.items()}


def test_a_backfill_of_30_batches_takes_ceil_30_over_n_runs_and_writes_what_single_runs_write(tmp_path):
    home = tmp_path / "backfill"
    with backfill_instance(home, candidates_per_batch=2) as instance:
        instance.add_dynamic_partitions(COMPOSITION_BATCHES, BATCHES)
        done = run_backfill(instance, COMPOSE, BATCHES, backfill_id="compose30")
        runs = backfill_runs(instance, "compose30")
        assert done.status == BulkActionStatus.COMPLETED_SUCCESS
        assert len(runs) == math.ceil(len(BATCHES) / COMPOSE_PARTITIONS_PER_RUN) == 2
        assert {status for _, status in runs} == {DagsterRunStatus.SUCCESS}
        # every partition has its own materialization, with its own metadata
        seeds = {key: _metadata(instance, "composed_task_specs", key)["seeds"] for key in BATCHES}
        assert seeds["batch-0"] == "0..1" and seeds["batch-29"] == "2900000..2900001"
        assert len(set(seeds.values())) == len(BATCHES)
        # the checks of each run judged every partition that run wrote
        checked = 0
        for run_id, _ in runs:
            for record in instance.all_logs(run_id, of_type=DagsterEventType.ASSET_CHECK_EVALUATION):
                evaluation = record.get_dagster_event().event_specific_data
                if getattr(evaluation, "check_name", "") == "accepted_tasks_meet_rubric_floor":
                    checked += evaluation.metadata["checked"].value  # type: ignore[union-attr]
                    assert evaluation.passed  # type: ignore[union-attr]
        lake = Lake(home)
        assert checked == len(lake.read("verified_composed_tasks")) == 2 * len(BATCHES)
        for name in COMPOSE:
            assert sorted(lake.partitions(name)) == sorted(BATCHES)

    single_home = tmp_path / "single"
    with backfill_instance(single_home, candidates_per_batch=2):
        resources = backfill_resources()
        with DagsterInstance.ephemeral() as single:
            single.add_dynamic_partitions(COMPOSITION_BATCHES, BATCHES)
            compose_assets = [defs.get_assets_def(name) for name in COMPOSE]
            for key in ("batch-0", "batch-27"):
                assert materialize(
                    compose_assets, instance=single, resources=resources, partition_key=key
                ).success
    alone = Lake(single_home)
    for name in COMPOSE:
        for key in ("batch-0", "batch-27"):
            assert _content(lake.read(name, key)) == _content(alone.read(name, key)), (name, key)
    assert any(lake.read("composed_rollouts", key) for key in BATCHES)  # a rollout was compared


PAIR = DynamicPartitionsDefinition(name="pair")


@asset(partitions_def=PAIR, backfill_policy=compose_backfill_policy)
def pair_asset(context: AssetExecutionContext):
    """Each partition records its own key as metadata, data version and one tag; one tag is shared."""

    def one(key: str) -> PartitionResult:
        return PartitionResult(
            metadata={"key": key}, data_version=f"v-{key}", tags={"shared": "same", "own": key}
        )

    return materialize_partitions(context, one)


def _event(instance: DagsterInstance, key: str):
    [record] = instance.fetch_materializations(
        AssetRecordsFilter(asset_key=AssetKey("pair_asset"), asset_partitions=[key]), limit=1
    ).records
    assert record.asset_materialization is not None
    return record.asset_materialization


def test_a_range_run_gives_each_partition_its_metadata_and_no_other_partitions_version_or_tag():
    with DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions("pair", ["a", "b"])
        assert materialize([pair_asset], instance=instance, tags=RANGE_TAGS).success
        a, b = _event(instance, "a"), _event(instance, "b")
        assert a.metadata["key"].value == "a" and b.metadata["key"].value == "b"
        for event in (a, b):
            tags = event.tags or {}
            assert tags.get("shared") == "same" and "own" not in tags
            assert tags.get("dagster/data_version") not in ("v-a", "v-b")

        assert materialize([pair_asset], instance=instance, partition_key="b").success
        alone = _event(instance, "b")
        assert alone.metadata["key"].value == "b"
        assert (alone.tags or {}).get("own") == "b"
        assert (alone.tags or {}).get("dagster/data_version") == "v-b"


def test_the_range_run_test_would_catch_one_result_copied_onto_every_partition():
    """Built to fail the rule: one MaterializeResult for the range, the first key's metadata on all."""

    @asset(name="pair_asset", partitions_def=PAIR)
    def copied(context: AssetExecutionContext) -> MaterializeResult:
        return MaterializeResult(metadata={"key": context.partition_keys[0]})

    with DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions("pair", ["a", "b"])
        assert materialize([copied], instance=instance, tags=RANGE_TAGS).success
        assert _event(instance, "b").metadata["key"].value == "a"  # what the helper prevents


def test_the_partitioned_assets_carry_the_multi_run_policy():
    """Every partitioned asset of the project takes a range of partitions per run (the default
    job's plan runs its stages in ranges, `assets/default_run.py`)."""
    from assets.definitions import defs as project

    expected = {name: COMPOSE_PARTITIONS_PER_RUN for name in COMPOSE}
    expected |= {
        name: SEED_PARTITIONS_PER_RUN
        for name in (
            "terminal_seeds",
            "seed_verification",
            "seed_pass_rates",
            "synthesized_bundles",
            "verified_bundles",
        )
    }
    expected |= {name: WORLD_PARTITIONS_PER_RUN for name in ("persona_worlds", "world_tasks")}
    graph = project.resolve_asset_graph()
    partitioned = {k.to_user_string() for k in graph.get_all_asset_keys() if graph.get(k).is_partitioned}
    assert partitioned == set(expected)
    for name, per_run in expected.items():
        policy = project.get_assets_def(name).backfill_policy
        assert policy is not None and policy.max_partitions_per_run is not None
        assert 1 < policy.max_partitions_per_run <= 25, name
        assert policy.max_partitions_per_run == per_run, name
