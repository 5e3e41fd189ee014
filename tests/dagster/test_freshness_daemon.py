"""The graph refreshes itself under a real `dagster-daemon`: a seed bundle dropped into the seeds
folder is picked up by `seed_folder_sensor`, and everything below it follows without a job being
launched by hand — its pass rate (freshness automation), the selection (`forge_reselect_sensor`),
and the forge bundles the selection decides (freshness automation again), each in runs of the
instance's queue, as `make ui` shows them.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from dagster import AssetKey, DagsterInstance, DagsterRunStatus

from assets.automation import FRESHNESS_TAG
from assets.daemon_control import running_daemon
from envpipeline.terminal.families.base import write_generated
from envpipeline.terminal.families.registry import get_family

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
KEY = "my-new-seed"
CHAIN = ["terminal_seeds", "seed_verification", "seed_pass_rates", "synthesized_bundles", "verified_bundles"]


def _materialized(instance: DagsterInstance, asset: str, partition: str | None) -> bool:
    return bool(
        instance.fetch_materializations(AssetKey(asset), limit=1).records
        if partition is None
        else instance.get_materialized_partitions(AssetKey(asset)) & {partition}
    )


def _first_tick_of(instance: DagsterInstance, sensor: str, deadline_s: float = 120) -> None:
    """Wait until `sensor` has been evaluated once (its first evaluation only takes stock)."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        for state in instance.all_instigator_state():
            data = state.instigator_data
            if state.name == sensor and data is not None and getattr(data, "last_tick_timestamp", None):
                return
        time.sleep(1)
    raise AssertionError(f"{sensor} was never evaluated")


def test_a_seed_dropped_into_the_seeds_folder_refreshes_the_forge_chain(tmp_path, monkeypatch, local_sandbox):
    home, lake = tmp_path / "dagster_home", tmp_path / "lake"
    home.mkdir()
    shutil.copy(REPO / "dagster.yaml", home / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    monkeypatch.setenv("ENVPIPELINE_HOME", str(lake))
    monkeypatch.setenv("ENVPIPELINE_SANDBOX", "local")
    # every sensor looks every 5 s instead of 30-60 (the chain waited on four ticks: 40 of its 73 s)
    monkeypatch.setenv("ENVPIPELINE_SENSOR_INTERVAL_SEC", "5")
    family = get_family("text-parsing")
    with DagsterInstance.get() as instance, running_daemon(instance, REPO / "workspace.yaml", print):
        _first_tick_of(instance, "freshness_sensor")
        write_generated(family.generate(0, family.knobs_for("easy"), "easy"), lake / "seeds" / "my new seed")
        deadline = time.monotonic() + 420
        while time.monotonic() < deadline:
            done = [a for a in CHAIN if _materialized(instance, a, KEY)]
            failed = [r for r in instance.get_runs() if r.status == DagsterRunStatus.FAILURE]
            assert not failed, f"runs failed: {[(r.job_name, r.run_id) for r in failed]}"
            if len(done) == len(CHAIN) and _materialized(instance, "selector_decisions", None):
                break
            time.sleep(2)
        else:
            raise AssertionError(f"only {done} materialized for {KEY} in 420 s; see {home / 'daemon.log'}")
        runs = instance.get_runs()
    by_freshness = {
        key.to_user_string() for r in runs if r.tags.get(FRESHNESS_TAG) for key in (r.asset_selection or ())
    }
    assert {"seed_pass_rates", "synthesized_bundles", "verified_bundles"} <= by_freshness
    assert any(r.job_name == "selector_job" for r in runs)  # forge_reselect_sensor's run
    assert any(r.job_name == "terminal_seed_job" for r in runs)  # seed_folder_sensor's run
    assert (lake / "forge").exists()
