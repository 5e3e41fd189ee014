"""Run a Dagster asset backfill in this process, through the backfill daemon's own iteration.

The backfill is created as the UI and ``dagster asset backfill`` create it
(`PartitionBackfill.from_asset_partitions`, `instance.add_backfill`); `execute_backfill_iteration`
(one tick of the daemon's backfill loop) then plans its runs from the assets' backfill policies and
submits them. The instance runs each submitted run at once, in this process
(`SyncInMemoryRunLauncher`), so a test or bench needs no daemon process and no run worker
processes: what is measured is the runs the policy asks for and their work, not process starts.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from dagster import AssetKey, DagsterInstance, DagsterRunStatus, RunsFilter, instance_for_test
from dagster._core.execution.backfill import BulkActionStatus, PartitionBackfill
from dagster._core.remote_origin import InProcessCodeLocationOrigin
from dagster._core.test_utils import create_test_daemon_workspace_context
from dagster._core.types.loadable_target_origin import LoadableTargetOrigin
from dagster._core.workspace.load_target import InProcessWorkspaceLoadTarget
from dagster._daemon.backfill import execute_backfill_iteration

REPO = Path(__file__).resolve().parents[3]
DEFS_MODULE = "tests.dagster.backfill_project.defs"
IN_MEMORY_LAUNCHER = {
    # submitted runs launch at once (no run queue), and run in this process
    "run_coordinator": {"module": "dagster._core.run_coordinator", "class": "DefaultRunCoordinator"},
    "run_launcher": {
        "module": "dagster._core.launcher.sync_in_memory_run_launcher",
        "class": "SyncInMemoryRunLauncher",
    },
}


@contextmanager
def backfill_instance(home: Path, candidates_per_batch: int) -> Iterator[DagsterInstance]:
    """A fresh instance whose runs execute in this process, over the data folder `home`."""
    from tests.dagster.backfill_project.defs import CANDIDATES_ENV, HOME_ENV

    saved = {k: os.environ.get(k) for k in (HOME_ENV, CANDIDATES_ENV)}
    os.environ[HOME_ENV], os.environ[CANDIDATES_ENV] = str(home), str(candidates_per_batch)
    try:
        with instance_for_test(overrides=IN_MEMORY_LAUNCHER) as instance:
            yield instance
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run_backfill(
    instance: DagsterInstance,
    assets: Sequence[str],
    partitions: Sequence[str],
    backfill_id: str,
    definitions: str = "defs",
    max_iterations: int = 50,
) -> PartitionBackfill:
    """Backfill `partitions` of `assets` (one partitioning) until Dagster says it is done; the
    code location is the `definitions` attribute of `defs.py` (`one_run_per_partition`: baseline)."""
    origin = InProcessCodeLocationOrigin(
        LoadableTargetOrigin(module_name=DEFS_MODULE, attribute=definitions, working_directory=str(REPO)),
        location_name="backfill",
    )
    logger = logging.getLogger("backfill")
    with create_test_daemon_workspace_context(InProcessWorkspaceLoadTarget(origin), instance) as ctx:
        backfill = PartitionBackfill.from_asset_partitions(
            backfill_id=backfill_id,
            asset_graph=ctx.create_request_context().asset_graph,
            partition_names=list(partitions),
            asset_selection=[AssetKey(a) for a in assets],
            backfill_timestamp=time.time(),
            tags={},
            dynamic_partitions_store=instance,
            all_partitions=False,
            title=None,
            description=None,
            run_config=None,
        )
        instance.add_backfill(backfill)
        for _ in range(max_iterations):
            list(execute_backfill_iteration(ctx, logger))
            done = instance.get_backfill(backfill_id)
            if done is not None and done.status != BulkActionStatus.REQUESTED:
                return done
    raise RuntimeError(f"backfill {backfill_id} not done after {max_iterations} daemon iterations")


def backfill_runs(instance: DagsterInstance, backfill_id: str) -> list[tuple[str, DagsterRunStatus]]:
    """(run id, status) of every run the backfill launched."""
    runs = instance.get_runs(RunsFilter.for_backfill(backfill_id))
    return [(r.run_id, r.status) for r in runs]
