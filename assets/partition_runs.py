"""Partitioned assets whose run may cover a range of partitions (a backfill), not just one.

A backfill of N partitions launched one run per partition pays a run's start (a process, the
code location, the instance) N times; a ``BackfillPolicy.multi_run`` policy lets Dagster's backfill
daemon put up to ``max_partitions_per_run`` partitions in one run. The asset body then loops over
``context.partition_keys``: a run of one partition (the jobs, sensors and schedules) is the 1-key
case and records exactly what it recorded before.

Dagster 1.13 takes one ``MaterializeResult`` per asset per run and copies it onto every partition's
materialization; per-partition metadata goes through ``context.add_asset_metadata(partition_key=)``.
Tags and the data version have no per-partition form, so on a range they are set only when every
partition of the run has the same value (each partition's own value stays in its metadata).

Partitions per run (the policies below):

- composition batches, 25: a batch drafts, gates and rolls out its candidates in seconds, so one
  run per batch spends as long starting as working; 25 batches make a run of about a minute, and a
  run that fails loses at most 25 batches' work (a retry redoes them).
- terminal seeds, 10: each seed runs its oracle twice, the nop agent and the red team in a sandbox
  (Docker: several seconds a seed), so 10 seeds already make a run of about a minute, and a
  failed run, or a stuck container, holds back no more than 10 seeds. The forge's bundles of a
  seed (synthesis and gold verification, in a sandbox too) share the seeds' policy.
- persona worlds, 5: a persona's world builds its days and checks them (a few seconds a day), and
  its task candidates are read from those days; 5 personas make a run of about half a minute.
"""

import warnings
from collections.abc import Callable, Mapping
from typing import Any

from dagster import AssetExecutionContext, BackfillPolicy, BetaWarning, DataVersion, MaterializeResult
from pydantic import BaseModel, ConfigDict

# The partitioned assets take these policies on purpose; Dagster still calls `backfill_policy` beta
# and would say so once per asset in every process that loads the definitions (`make run` too).
warnings.filterwarnings("ignore", message=r".*`backfill_policy`.*", category=BetaWarning)

COMPOSE_PARTITIONS_PER_RUN = 25
SEED_PARTITIONS_PER_RUN = 10
WORLD_PARTITIONS_PER_RUN = 5

compose_backfill_policy = BackfillPolicy.multi_run(max_partitions_per_run=COMPOSE_PARTITIONS_PER_RUN)
seed_backfill_policy = BackfillPolicy.multi_run(max_partitions_per_run=SEED_PARTITIONS_PER_RUN)
world_backfill_policy = BackfillPolicy.multi_run(max_partitions_per_run=WORLD_PARTITIONS_PER_RUN)


class PartitionResult(BaseModel):
    """What one partition's materialization records: its metadata, and optionally a data version and tags."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    metadata: Mapping[str, Any]
    data_version: str | None = None
    tags: Mapping[str, str] | None = None


def materialize_partitions(
    context: AssetExecutionContext, materialize_one: Callable[[str], PartitionResult]
) -> MaterializeResult:
    """Materialize every partition of the run in turn; one result, with per-partition metadata."""
    keys = list(context.partition_keys)
    results = {key: materialize_one(key) for key in keys}
    if len(keys) == 1:
        [only] = results.values()
        return MaterializeResult(
            metadata=dict(only.metadata),
            data_version=DataVersion(only.data_version) if only.data_version is not None else None,
            tags=dict(only.tags) if only.tags is not None else None,
        )
    for key, result in results.items():
        context.add_asset_metadata(dict(result.metadata), partition_key=key)
    versions = {r.data_version for r in results.values()}
    tags = [dict(r.tags or {}) for r in results.values()]
    shared_tags = {k: v for k, v in tags[0].items() if all(t.get(k) == v for t in tags)} if tags else {}
    shared_version = next(iter(versions)) if len(versions) == 1 else None
    return MaterializeResult(
        data_version=DataVersion(shared_version) if shared_version is not None else None,
        tags=shared_tags or None,
    )
