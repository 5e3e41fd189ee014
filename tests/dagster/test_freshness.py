"""Declarative automation (`assets.automation`): what a new or re-verified seed makes stale is
requested, once, and never while an `envpipeline run` plan materializes the graph itself.

Evaluated with Dagster's own evaluator on the project's real asset graph and a real instance; the
materializations are reported to the instance as the runs would report them.
"""

from __future__ import annotations

import time

import pytest
from dagster import AssetMaterialization, DagsterInstance, evaluate_automation_conditions, instance_for_test

from assets.automation import FRESH
from assets.definitions import defs
from assets.plan_lease import PLAN_LEASE_TTL_SEC, plan_in_progress, plan_lease, write_lease

BATCHES = "composition_batches"
SEEDS = "terminal_seeds"


class Ticks:
    """Successive evaluations of the freshness conditions, each continuing the last one's cursor."""

    def __init__(self, instance: DagsterInstance):
        self.instance = instance
        self.cursor = None

    def __call__(self) -> dict[str, set[str | None]]:
        result = evaluate_automation_conditions(defs=defs, instance=self.instance, cursor=self.cursor)
        self.cursor = result.cursor
        return {
            key.to_user_string(): set(result.get_requested_partitions(key))
            for key in defs.resolve_asset_graph().get_all_asset_keys()
            if result.get_num_requested(key)
        }


def _materialize(instance: DagsterInstance, asset: str, partition: str | None = None) -> None:
    instance.report_runless_asset_event(AssetMaterialization(asset, partition=partition))


@pytest.fixture
def instance():
    with instance_for_test() as instance:
        _materialize(instance, "service_library")
        yield instance


def test_every_derived_asset_carries_the_condition_and_the_roots_do_not():
    graph = defs.resolve_asset_graph()
    conditions = {k.to_user_string(): graph.get(k).automation_condition for k in graph.get_all_asset_keys()}
    unconditioned = {name for name, condition in conditions.items() if condition is None}
    # the seeds' roots, and the selection that forge_reselect_sensor owns
    assert unconditioned == {"service_library", "terminal_seeds", "personas", "selector_decisions"}
    assert all(condition == FRESH for condition in conditions.values() if condition is not None)
    assert defs.resolve_sensor_def("freshness_sensor").default_status.value == "RUNNING"


def test_a_new_composition_batch_is_composed_verified_and_rolled_out_once(instance):
    tick = Ticks(instance)
    assert tick() == {}  # the first evaluation only takes stock
    instance.add_dynamic_partitions(BATCHES, ["batch-9000"])
    requested = tick()
    assert requested == {
        "composed_task_specs": {"batch-9000"},
        "verified_composed_tasks": {"batch-9000"},
        "composed_rollouts": {"batch-9000"},
    }
    assert tick() == {}  # requested once, not on every tick
    for asset in requested:
        _materialize(instance, asset, "batch-9000")
    assert tick() == {}  # their own materializations are not a reason to run again


def test_a_re_verified_seed_gets_its_pass_rate_re_estimated_and_no_other_seed_does(instance):
    keys = ["fam-a-0", "fam-b-0"]
    instance.add_dynamic_partitions(SEEDS, keys)
    for key in keys:
        for asset in ("terminal_seeds", "seed_verification", "seed_pass_rates"):
            _materialize(instance, asset, key)
    tick = Ticks(instance)
    tick()
    _materialize(instance, "seed_verification", "fam-b-0")  # e.g. by reverification_sensor's run
    assert tick()["seed_pass_rates"] == {"fam-b-0"}


def test_an_aggregate_waits_until_no_dependency_partition_is_missing(instance):
    instance.add_dynamic_partitions(SEEDS, ["fam-a-0"])
    tick = Ticks(instance)
    tick()
    _materialize(instance, "verified_composed_tasks", "batch-0")  # no such batch: only an event
    _materialize(instance, "terminal_seeds", "fam-a-0")
    requested = tick()
    # seed_verification of the new seed is requested; accepted_tasks must wait for it, not read a
    # lake in which the seed is missing
    assert requested.get("seed_verification") == {"fam-a-0"}
    assert "accepted_tasks" not in requested


def test_nothing_is_requested_while_a_plan_works_and_nothing_is_redone_after_it(instance):
    tick = Ticks(instance)
    tick()
    with plan_lease(instance, "plan-1"):
        assert plan_in_progress(instance)
        instance.add_dynamic_partitions(BATCHES, ["batch-9001"])
        assert tick() == {}  # between two stages no plan run is pending: the lease holds it back
        for asset in ("composed_task_specs", "verified_composed_tasks", "composed_rollouts"):
            _materialize(instance, asset, "batch-9001")  # the plan's own runs
    assert not plan_in_progress(instance)
    assert tick() == {}


def test_what_went_stale_during_a_plan_is_requested_after_it(instance):
    tick = Ticks(instance)
    tick()
    with plan_lease(instance, "plan-2"):
        instance.add_dynamic_partitions(BATCHES, ["batch-9002"])
        assert tick() == {}
    assert tick().get("composed_task_specs") == {"batch-9002"}


def test_the_lease_of_a_killed_plan_expires(instance):
    write_lease(instance, "killed-plan", time.time() - PLAN_LEASE_TTL_SEC - 1)
    assert not plan_in_progress(instance)
    write_lease(instance, "live-plan", time.time())
    assert plan_in_progress(instance)
