"""The DuckDB catalog: one view per asset over its Parquet files, rebuilt atomically by one writer.

`refresh_catalog` never writes the live ``catalog.duckdb``: it builds a new database file next to
it (every view), closes it and renames it over the catalog. So a reader that holds the catalog
open never blocks the refresh (and is never blocked by it: the writer holds no lock on the file
readers open), and a refresh killed at any point leaves the previous catalog, with all its views,
or the new one -- never a catalog with no views. A refresh also removes the temp files of partition
writes killed mid-write (`Lake.remove_orphans`). Refreshes serialize on a file lock (the Dagster
shell also runs them in a pool of size 1); a new file left by a killed refresh is removed by the
next one. Readers that must not touch the catalog at all use `Lake.query`, an in-memory
connection over the same Parquet globs.

With a lake URI (`Lake`'s `uri`), the views read the lake's files by that URI: a ``file://`` lake
works as a local one; an ``s3://`` lake needs DuckDB's ``httpfs`` extension (``INSTALL httpfs;
LOAD httpfs``, network once) and a ``CREATE SECRET`` in the reader's connection before it selects
from a view; an fsspec-only lake (``memory://``) is readable only by a connection that registered
the same filesystem, so use `Lake.query` for it.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from envpipeline.errors import MissingExtraError, StoreError
from envpipeline.store.lake import Lake

try:
    import duckdb
except ImportError as missing:
    raise MissingExtraError("cli", missing, needed_by=__name__) from missing

#: Suffix of the database a refresh builds before renaming it over the catalog.
BUILDING_SUFFIX = ".building"


def catalog_path(home: str | Path) -> Path:
    """Where the catalog database lives."""
    return Path(home) / "catalog.duckdb"


def refresh_catalog(home: str | Path, lake_uri: str | None = None) -> list[str]:
    """Rebuild the catalog with one view per asset and swap it in atomically; returns the asset names.
    The catalog stays under `home`; the lake is at `lake_uri` when given (else ``<home>/lake``)."""
    lake = Lake(home, lake_uri)
    path = catalog_path(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    building = path.with_name(path.name + BUILDING_SUFFIX)
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for leftover in (building, building.with_name(building.name + ".wal")):
            leftover.unlink(missing_ok=True)
        lake.remove_orphans()
        assets = lake.assets()
        try:
            con = duckdb.connect(str(building))
            lake.location.attach(con)
        except duckdb.Error as e:
            raise StoreError(f"cannot create the catalog {building}: {e}") from e
        try:
            for asset in assets:
                con.execute(
                    f"CREATE VIEW {asset} AS SELECT * FROM read_parquet('{lake.glob(asset)}', "
                    "union_by_name=true)"
                )
            con.execute("CHECKPOINT")
        except duckdb.Error as e:
            con.close()
            building.unlink(missing_ok=True)
            raise StoreError(f"cannot build the catalog {building}: {e}") from e
        con.close()
        _fsync(building)
        os.replace(building, path)
        # a write-ahead log beside the new file would belong to the old database: never replay it
        path.with_name(path.name + ".wal").unlink(missing_ok=True)
        _fsync(path.parent)
        return assets


def _fsync(path: Path) -> None:
    """Flush a file or a folder entry to disk (a rename is only durable once its folder is)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
