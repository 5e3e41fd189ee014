"""The DuckDB catalog: one view per asset over its Parquet files, maintained by one writer.

DuckDB allows a single writer per database file, so only `refresh_catalog` writes it (the
Dagster shell runs it in a pool of size 1, and a file lock guards direct callers). Readers that
must not block use `Lake.query`, an in-memory connection over the same Parquet globs.
"""

from __future__ import annotations

import fcntl
from pathlib import Path

import duckdb

from envpipeline.errors import StoreError
from envpipeline.store.lake import Lake


def catalog_path(home: str | Path) -> Path:
    """Where the catalog database lives."""
    return Path(home) / "catalog.duckdb"


def refresh_catalog(home: str | Path) -> list[str]:
    """Create or replace one view per asset; returns the asset names. Idempotent."""
    lake = Lake(home)
    path = catalog_path(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock_path = path.with_suffix(".lock")
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            con = duckdb.connect(str(path))
        except duckdb.Error as e:
            raise StoreError(f"cannot open the catalog {path}: {e}") from e
        try:
            assets = lake.assets()
            existing = {
                r[0]
                for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()
            }
            for stale in sorted(existing - set(assets)):
                con.execute(f"DROP VIEW IF EXISTS {stale}")
            for asset in assets:
                con.execute(
                    f"CREATE OR REPLACE VIEW {asset} AS SELECT * FROM read_parquet('{lake.glob(asset)}', "
                    "union_by_name=true)"
                )
            return assets
        finally:
            con.close()
