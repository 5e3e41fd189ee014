"""The Parquet lake: one file per (asset, partition), written atomically, lineage on every row.

Layout: ``<home>/lake/<asset>/partition=<key>/part.parquet``. A write goes to a hidden temp
file in the same directory and is renamed over the target, so a run killed mid-write leaves
either the old file or the new one, never half of one; rewriting a partition replaces it, so a
rerun converges. A temp file carries its writer's pid (``.part-<pid>-*.tmp``); one left by a
process that is gone (killed mid-write) is removed by the next write to that folder or by
`Lake.remove_orphans`.

Every path goes through one pyarrow filesystem (`envpipeline.store.location`): the local disk by
default, or the filesystem of a lake URI (``Lake(home, uri="s3://bucket/lake")``), so where the lake
lives is configuration. On a non-local filesystem the temp file is moved over the target (on an
object store a move is a copy then a delete: readers see the old object or the new one, and the
temp object of a killed write is an orphan like a local one; pids are this host's, so writers on
several hosts sharing one remote lake should not rely on orphan removal).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from envpipeline.canonical import canonical_hash
from envpipeline.errors import MissingExtraError, StoreError
from envpipeline.files import replace_atomically
from envpipeline.processes import process_alive
from envpipeline.store.location import resolve_location

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
    """Read and write partitions of assets under `<home>/lake`, or under a lake URI.

    Args:
        home: the data folder; the lake is its ``lake/`` subfolder unless `uri` is given.
        uri: where the lake lives instead: a path, ``file:///...``, ``s3://bucket/lake``,
            ``memory://lake`` (see `envpipeline.store.location`).
    """

    def __init__(self, home: str | Path, uri: str | None = None) -> None:
        self.home = Path(home)
        self.location = resolve_location(uri or self.home / "lake")
        self.fs = self.location.filesystem
        self.root = Path(self.location.root)

    @property
    def uri(self) -> str:
        """The lake root as a URI-or-path (what a message should name)."""
        return self.location.scan_prefix

    def partition_path(self, asset: str, partition: str) -> Path:
        """Where one partition of an asset lives (a path inside the lake's filesystem)."""
        return Path(self._partition_file(asset, partition))

    def _partition_file(self, asset: str, partition: str) -> str:
        if not ASSET_NAME.fullmatch(asset):
            raise StoreError(f"asset name {asset!r} must be lowercase snake_case")
        key = check_partition_key(partition)
        return f"{self.location.root}/{asset}/{PARTITION_FOLDER}{key}/part.parquet"

    def write_partition(
        self, asset: str, partition: str, rows: list[dict[str, Any]], lineage: Lineage
    ) -> Path:
        """Atomically replace one partition with `rows`, adding lineage columns to each."""
        target = self._partition_file(asset, partition)
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
        statistics = statistics_columns(table.column_names, stamped)

        def write(where: Any) -> None:
            with parquet_writer(where, table.schema, statistics) as writer:
                writer.write_table(table)

        folder = target.rsplit("/", 1)[0]
        self.fs.create_dir(folder, recursive=True)
        self._remove_orphans_in(folder)
        if self.location.local:
            return replace_atomically(Path(target), write, prefix=f".part-{os.getpid()}-")
        temp = f"{folder}/.part-{os.getpid()}-{uuid.uuid4().hex}.tmp"
        try:
            with self.fs.open_output_stream(temp) as stream:
                write(stream)
            self.fs.move(temp, target)
        except BaseException:
            _delete_quietly(self.fs, temp)
            raise
        return Path(target)

    def remove_orphans(self) -> list[Path]:
        """Remove the temp files of partition writes whose writer process is gone; returns them."""
        removed: list[Path] = []
        for asset in self._folders(self.location.root):
            for folder in self._folders(asset):
                if folder.rsplit("/", 1)[-1].startswith(PARTITION_FOLDER):
                    removed += self._remove_orphans_in(folder)
        return removed

    def assets(self) -> list[str]:
        """Assets with at least one written partition."""
        return sorted(
            folder.rsplit("/", 1)[-1]
            for folder in self._folders(self.location.root)
            if self._partition_files(folder)
        )

    def partitions(self, asset: str) -> list[str]:
        """Written partition keys of one asset."""
        return sorted(self._partition_files(f"{self.location.root}/{asset}"))

    def partition_files(self, asset: str, partitions: Sequence[str] | None = None) -> list[str]:
        """The existing Parquet files of `partitions` of an asset (all of them when None), as DuckDB
        reads them."""
        if partitions is None:
            found = self._partition_files(f"{self.location.root}/{asset}")
            return [self.location.scan_path(found[k]) for k in sorted(found)]
        paths = [self._partition_file(asset, key) for key in dict.fromkeys(partitions)]
        infos = self.fs.get_file_info(paths)
        return [self.location.scan_path(i.path) for i in infos if i.type == pafs.FileType.File]

    def glob(self, asset: str) -> str:
        """The Parquet glob of one asset (for DuckDB)."""
        return self.location.scan_path(f"{self.location.root}/{asset}/*/part.parquet")

    def connect(self) -> duckdb.DuckDBPyConnection:
        """An in-memory DuckDB connection that can read this lake's files."""
        con = duckdb.connect(":memory:")
        self.location.attach(con)
        return con

    def query(self, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
        """Run SQL on an in-memory DuckDB over the lake, where each asset the SQL names is a view of
        its Parquet files (only those: binding a view reads the schema of every file of its asset,
        and a view of every asset per query cost about 0.1 s)."""
        con = self.connect()
        try:
            for asset in self.assets():
                if not _names_table(sql, asset):
                    continue
                con.execute(
                    f"CREATE VIEW {asset} AS SELECT * FROM read_parquet('{self.glob(asset)}', "
                    "union_by_name=true)"
                )
            return _fetch(con, sql, params)
        except duckdb.Error as e:
            raise StoreError(f"query failed: {e}") from e
        finally:
            con.close()

    def scan(
        self,
        asset: str,
        partitions: Sequence[str] | None = None,
        select: str = "*",
        where: str | None = None,
    ) -> list[dict[str, Any]]:
        """``SELECT select FROM <files of partitions> WHERE where`` in DuckDB: only those partitions'
        files are opened (every partition when `partitions` is None); [] when none is written."""
        files = self.partition_files(asset, partitions)
        if not files:
            return []
        listed = ", ".join("'" + f.replace("'", "''") + "'" for f in files)
        sql = f"SELECT {select} FROM read_parquet([{listed}], union_by_name=true)"
        # a cursor on this process's shared database costs well under a millisecond; a new
        # connection tens of them, more than reading one partition (an fsspec lake registers its
        # filesystem, so it gets a connection of its own)
        con = self.connect() if self.location.fsspec is not None else _shared_database(os.getpid()).cursor()
        try:
            return _fetch(con, sql + (f" WHERE {where}" if where else ""), None)
        except duckdb.Error as e:
            # partitions written with no rows have only the lineage columns: a query naming a data
            # column finds none of them, and there is no row to return
            if select != _COUNT and not self.count_rows(asset, partitions):
                return []
            raise StoreError(f"scan of {asset} failed: {e}") from e
        finally:
            con.close()

    def count_rows(self, asset: str, partitions: Sequence[str] | None = None) -> int:
        """Rows of `partitions` of an asset (all when None), counted in DuckDB on those partitions'
        files only; 0 when none is written."""
        found = self.scan(asset, partitions, _COUNT)
        return int(found[0]["n"]) if found else 0

    def tally(
        self, asset: str, partitions: Sequence[str] | None, label: str, failing: str
    ) -> tuple[int, list[str]]:
        """(rows, the `label` of each row where the SQL condition `failing` holds) over `partitions`
        of an asset (all when None), counted in DuckDB: no row comes back to Python."""
        select = f"count(*) AS n, list(CAST({label} AS VARCHAR)) FILTER (WHERE {failing}) AS failing"
        try:
            found = self.scan(asset, partitions, select)
        except StoreError:
            # partitions written with no rows have no data columns to name: nothing can fail there
            if not self.count_rows(asset, partitions):
                return 0, []
            raise
        if not found:
            return 0, []
        return int(found[0]["n"]), list(found[0]["failing"] or [])

    def read(self, asset: str, partition: str | None = None) -> list[dict[str, Any]]:
        """All rows of an asset (or of one partition)."""
        if partition is not None:
            path = self._partition_file(asset, partition)
            if self.fs.get_file_info(path).type != pafs.FileType.File:
                return []
            try:
                return pq.read_table(path, filesystem=self.fs).to_pylist()
            except (pa.ArrowException, OSError) as e:
                raise StoreError(
                    f"{self.location.scan_path(path)}: not a readable Parquet file ({e}); remove that "
                    "partition folder and materialize it again"
                ) from e
        if asset not in self.assets():
            return []
        return self.query(f"SELECT * FROM {asset}")

    def _folders(self, folder: str) -> list[str]:
        """Sub-folders of `folder` (none when it does not exist)."""
        infos = self.fs.get_file_info(pafs.FileSelector(folder, allow_not_found=True))
        return [i.path.rstrip("/") for i in infos if i.type == pafs.FileType.Directory]

    def _partition_files(self, asset_folder: str) -> dict[str, str]:
        """{partition key: its part.parquet path} of the written partitions under `asset_folder`."""
        selector = pafs.FileSelector(asset_folder, allow_not_found=True, recursive=True)
        found: dict[str, str] = {}
        for info in self.fs.get_file_info(selector):
            parts = info.path.rstrip("/").rsplit("/", 2)
            if (
                info.type == pafs.FileType.File
                and len(parts) == 3
                and parts[2] == "part.parquet"
                and parts[1].startswith(PARTITION_FOLDER)
            ):
                found[parts[1][len(PARTITION_FOLDER) :]] = info.path
        return found

    def _remove_orphans_in(self, folder: str) -> list[Path]:
        """Remove ``.part-<pid>-*.tmp`` files of `folder` whose writer is no longer running (or unnamed)."""
        removed: list[Path] = []
        for info in self.fs.get_file_info(pafs.FileSelector(folder, allow_not_found=True)):
            name = info.path.rsplit("/", 1)[-1]
            if info.type == pafs.FileType.File and name.startswith(".part-") and name.endswith(".tmp"):
                match = TEMP_FILE.match(name)
                if match is None or not process_alive(int(match["pid"])):
                    _delete_quietly(self.fs, info.path)
                    removed.append(Path(info.path))
        return removed


@functools.cache
def _shared_database(pid: int) -> duckdb.DuckDBPyConnection:
    """One in-memory DuckDB per process (keyed by pid: a forked child opens its own) for `Lake.scan`,
    which creates nothing in it; each scan reads through its own cursor."""
    del pid
    return duckdb.connect(":memory:")


#: The select of a row count (`Lake.count_rows`).
_COUNT = "count(*) AS n"


def _names_table(sql: str, name: str) -> bool:
    """Whether `sql` mentions `name` as a whole identifier (a view it may read; a mention inside a
    string literal only costs a view that is never read)."""
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", sql, re.IGNORECASE) is not None


def _fetch(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None) -> list[dict[str, Any]]:
    cursor = con.execute(sql, params or [])
    names = [d[0] for d in cursor.description or []]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def remove_orphan_temps(folder: Path) -> list[Path]:
    """Remove ``.part-<pid>-*.tmp`` files of a local `folder` whose writer is no longer running (or unnamed)."""
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


def _delete_quietly(fs: pafs.FileSystem, path: str) -> None:
    with contextlib.suppress(OSError):
        fs.delete_file(path)


#: String columns with longer values (task documents, instructions) get no min/max statistics.
STATISTICS_MAX_CHARS = 256


def statistics_columns(columns: Sequence[str], rows: Sequence[dict[str, Any]]) -> list[str]:
    """The `columns` worth min/max statistics: all but the strings longer than
    `STATISTICS_MAX_CHARS` somewhere in `rows` (a partition's rows, or a streamed one's first chunk).

    A Parquet writer keeps every row group's statistics until the file is closed, and a reader
    parses them all when it opens the file: with the long JSON columns' min and max (up to 3 KB
    each) that was about 23 KB per row group, so a long streamed run held more the more it wrote.
    Short columns (ids, status, seed keys) keep theirs, which is what DuckDB prunes on.
    """
    long = {k for row in rows for k, v in row.items() if isinstance(v, str) and len(v) > STATISTICS_MAX_CHARS}
    return [name for name in columns if name not in long]


def parquet_writer(where: Any, schema: pa.Schema, statistics: list[str]) -> pq.ParquetWriter:
    """A Parquet writer that keeps min/max statistics for `statistics` columns only."""
    # pyarrow takes a list of columns for write_statistics (its docstring: "bool or list");
    # the stubs only know bool
    return pq.ParquetWriter(where, schema, write_statistics=statistics)  # pyright: ignore[reportArgumentType]


def empty_table() -> pa.Table:
    """The table of a partition with no rows: the lineage columns alone."""
    return pa.table({name: pa.array([], pa.string()) for name in LINEAGE_COLUMNS})
