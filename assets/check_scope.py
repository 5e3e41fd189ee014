"""Which partitions an asset check looks at: the ones its run materialized, not the whole asset.

A check of a partitioned asset runs in the run that materialized a partition (or a range of
them, in a backfill), so it reads only those partitions' files; reading every partition made each
check cost grow with the asset and a backfill of N partitions quadratic. Outside a partitioned run
(a check launched on its own, or invoked directly) the check covers the whole asset, counted in
DuckDB.
"""

from dagster import AssetCheckExecutionContext


def checked_partitions(context: AssetCheckExecutionContext) -> list[str] | None:
    """The partition keys of the check's run; None (every partition) when the run has none."""
    if context.has_partition_key or context.has_partition_key_range:
        return list(context.partition_keys)
    return None
