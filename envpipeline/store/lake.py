"""The Parquet lake: one file per (asset, partition), written atomically, lineage on every row.

Layout: ``<home>/lake/<asset>/partition=<key>/part.parquet``. A write goes to a hidden temp
file in the same directory and is renamed over the target, so a run killed mid-write leaves
either the old file or the new one, never half of one; rewriting a partition replaces it, so a
rerun converges. A temp file carries its writer's pid (``.part-<pid>-*.tmp``); one left by a
process that is gone (killed mid-write) is removed by the next write to that folder or by
`Lake.remove_orphans`.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from envpipeline.canonical import canonical_hash
from envpipeline.errors import MissingExtraError, StoreError
from envpipeline.files import replace_atomically
from envpipeline.processes import process_alive

try:
    import duckdb
except ImportError as missing:
    raise MissingExtraError("cli", missing, needed_by=__name__) from missing

PARTITION_KEY = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
ASSET_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
LINEAGE_COLUMNS = ("_asset", "_partition", "_run_id", "_code_version", "_inputs", "_row_hash")
#: Column names a row may not use: lineage columns start with "_"; these name partitions.
RESERVED_COLUMNS = ("seed", "partition")
PARTITION_FOLDER = "partition="
#: Temp files of partition writes: ``.part-<writer pid>-<random>.tmp``.
TEMP_FILE = re.compile(r"^\.part-(?P<pid>[0-9]+)-.*\.tmp$")

__all__ = [
    "LINEAGE_COLUMNS",
    "Lake",
    "Lineage",
    "canonical_hash",
    "check_partition_key",
    "empty_table",
    "remove_orphan_temps",
]


def check_partition_key(key: str) -> str:
    """Return `key` if it is a safe partition key ([A-Za-z0-9_-]), else raise StoreError."""
    if not PARTITION_KEY.fullmatch(key):
        raise StoreError(f"partition key {key!r} must match [A-Za-z0-9_-]{{1,128}}")
    return key


@dataclass(frozen=True)
class Lineage:
    """Who wrote a partition: run, code version, and fingerprints of the inputs."""

    run_id: str
    code_version: str
    inputs: dict[str, str] = field(default_factory=dict)


class Lake:
    """Read and write partitions of assets under `<home>/lake`."""

    def __init__(self, home: str | Path) -> None:
        self.home = Path(home)
        self.root = self.home / "lake"

    def partition_path(self, asset: str, partition: str) -> Path:
        """Where one partition of an asset lives."""
        if not ASSET_NAME.fullmatch(asset):
            raise StoreError(f"asset name {asset!r} must be lowercase snake_case")
        return self.root / asset / f"{PARTITION_FOLDER}{check_partition_key(partition)}" / "part.parquet"

    def write_partition(
        self, asset: str, partition: str, rows: list[dict[str, Any]], lineage: Lineage
    ) -> Path:
        """Atomically replace one partition with `rows`, adding lineage columns to each."""
        target = self.partition_path(asset, partition)
        target.parent.mkdir(parents=True, exist_ok=True)
        inputs = json.dumps(lineage.inputs, sort_keys=True)
        stamped = []
        for row in rows:
            if any(k.startswith("_") or k in RESERVED_COLUMNS for k in row):
                raise StoreError(
                    f"row columns may not start with '_' or be one of {RESERVED_COLUMNS}: {sorted(row)}"
                )
            stamped.append(
                {
                    **row,
                    "_asset": asset,
                    "_partition": partition,
                    "_run_id": lineage.run_id,
                    "_code_version": lineage.code_version,
                    "_inputs": inputs,
                    "_row_hash": canonical_hash(row),
                }
            )
        table = pa.Table.from_pylist(stamped) if stamped else empty_table()
        remove_orphan_temps(target.parent)
        return replace_atomically(
            target, lambda handle: pq.write_table(table, handle), prefix=f".part-{os.getpid()}-"
        )

    def remove_orphans(self) -> list[Path]:
        """Remove the temp files of partition writes whose writer process is gone; returns them."""
        if not self.root.exists():
            return []
        removed: list[Path] = []
        for folder in self.root.glob(f"*/{PARTITION_FOLDER}*"):
            removed += remove_orphan_temps(folder)
        return removed

    def assets(self) -> list[str]:
        """Assets with at least one written partition."""
        if not self.root.exists():
            return []
        return sorted(
            p.name
            for p in self.root.iterdir()
            if p.is_dir() and any(p.glob(f"{PARTITION_FOLDER}*/part.parquet"))
        )

    def partitions(self, asset: str) -> list[str]:
        """Written partition keys of one asset."""
        base = self.root / asset
        return sorted(p.parent.name.split("=", 1)[1] for p in base.glob(f"{PARTITION_FOLDER}*/part.parquet"))

    def glob(self, asset: str) -> str:
        """The Parquet glob of one asset (for DuckDB)."""
        return str(self.root / asset / "*" / "part.parquet")

    def query(self, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
        """Run SQL on an in-memory DuckDB over the lake; `{asset}` placeholders become scans."""
        con = duckdb.connect(":memory:")
        try:
            for asset in self.assets():
                con.execute(
                    f"CREATE VIEW {asset} AS SELECT * FROM read_parquet('{self.glob(asset)}', "
                    "union_by_name=true)"
                )
            cursor = con.execute(sql, params or [])
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, row)) for row in cursor.fetchall()]
        except duckdb.Error as e:
            raise StoreError(f"query failed: {e}") from e
        finally:
            con.close()

    def read(self, asset: str, partition: str | None = None) -> list[dict[str, Any]]:
        """All rows of an asset (or of one partition)."""
        if partition is not None:
            path = self.partition_path(asset, partition)
            if not path.exists():
                return []
            try:
                return pq.read_table(path).to_pylist()
            except (pa.ArrowException, OSError) as e:
                raise StoreError(
                    f"{path}: not a readable Parquet file ({e}); remove that partition folder and "
                    "materialize it again"
                ) from e
        if asset not in self.assets():
            return []
        return self.query(f"SELECT * FROM {asset}")


def remove_orphan_temps(folder: Path) -> list[Path]:
    """Remove ``.part-<pid>-*.tmp`` files of `folder` whose writer is no longer running (or unnamed)."""
    removed: list[Path] = []
    if not folder.is_dir():
        return removed
    for path in folder.iterdir():
        if path.name.startswith(".part-") and path.name.endswith(".tmp"):
            match = TEMP_FILE.match(path.name)
            if match is None or not process_alive(int(match["pid"])):
                path.unlink(missing_ok=True)
                removed.append(path)
    return removed


def empty_table() -> pa.Table:
    """The table of a partition with no rows: the lineage columns alone."""
    return pa.table({name: pa.array([], pa.string()) for name in LINEAGE_COLUMNS})
