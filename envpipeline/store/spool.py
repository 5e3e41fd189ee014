"""Partitions written chunk by chunk: rows spool to a temp Parquet file, then publish as one partition.

`Lake.write_partition` takes every row at once; a long run would hold them all. A `RowSpool`
takes rows a chunk at a time and writes each chunk as a row group of a hidden temp file in the
partition's folder (``.part-<pid>-*.tmp``, so a killed run's spool is an orphan the next write or
catalog refresh removes). `publish_partition` then streams one or more spools, in order, into the
partition file with the lineage columns, through the same temp-and-rename as every lake write: the
partition is the old file or the whole new one, never part of one, and it holds the same rows,
columns and hashes `write_partition` would write for the same rows.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from envpipeline.canonical import canonical_hash
from envpipeline.errors import StoreError
from envpipeline.files import replace_atomically
from envpipeline.store.lake import (
    RESERVED_COLUMNS,
    Lake,
    Lineage,
    empty_table,
    parquet_writer,
    remove_orphan_temps,
    statistics_columns,
)

#: Rows read back per batch when a spool is published.
READ_BATCH = 128


class RowSpool:
    """Rows of one partition-to-be, appended in chunks to a temp Parquet file (one row group each)."""

    def __init__(self, folder: Path, name: str) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".part-{os.getpid()}-{name}-", suffix=".tmp", dir=folder)
        os.close(fd)
        self.path = Path(tmp)
        self.schema: pa.Schema | None = None
        #: the columns written with statistics (`statistics_columns` of the first chunk)
        self.statistics: list[str] = []
        #: `_row_hash` of every row, in order (what the partition's fingerprint is made of)
        self.hashes: list[str] = []
        self._writer: pq.ParquetWriter | None = None

    def append(self, rows: Sequence[dict[str, Any]]) -> None:
        """Write one chunk of rows; a row with a lineage or reserved column name is a StoreError."""
        if not rows:
            return
        hashed = []
        for row in rows:
            if any(k.startswith("_") or k in RESERVED_COLUMNS for k in row):
                raise StoreError(
                    f"row columns may not start with '_' or be one of {RESERVED_COLUMNS}: {sorted(row)}"
                )
            row_hash = canonical_hash(row)
            self.hashes.append(row_hash)
            hashed.append({**row, "_row_hash": row_hash})
        table = pa.Table.from_pylist(hashed)
        if self._writer is None:
            self.schema, self.statistics = table.schema, statistics_columns(table.column_names, hashed)
            self._writer = parquet_writer(self.path, table.schema, self.statistics)
        elif table.schema != self.schema:
            table = table.cast(self.schema)
        self._writer.write_table(table)

    def close(self) -> None:
        """Finish the temp file (no more rows)."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def batches(self) -> Iterator[pa.RecordBatch]:
        """The spooled rows, in order, a batch at a time."""
        self.close()
        if self.schema is None:
            return
        # pyarrow's defaults cost memory that grows with the partition: pre_buffer keeps every range
        # it read ahead until the file is closed (the resident set grew by about the file's size:
        # +503 MiB publishing 50,000 tasks), and decoding threads each keep a malloc arena
        # (bench/publish_memory.py: +76 MiB at 50,000 tasks with both off)
        with pq.ParquetFile(self.path, pre_buffer=False) as spooled:
            yield from spooled.iter_batches(batch_size=READ_BATCH, use_threads=False)

    def discard(self) -> None:
        """Remove the temp file."""
        self.close()
        self.path.unlink(missing_ok=True)


def publish_partition(
    lake: Lake, asset: str, partition: str, spools: Sequence[RowSpool], lineage: Lineage
) -> Path:
    """Atomically replace one partition with the rows of `spools` (in order), lineage added."""
    if not lake.location.local:
        raise StoreError(f"streamed partition writes need a local lake, not {lake.uri}")
    target = lake.partition_path(asset, partition)
    target.parent.mkdir(parents=True, exist_ok=True)
    filled = [s for s in spools if s.schema is not None]
    constants = {
        "_asset": asset,
        "_partition": partition,
        "_run_id": lineage.run_id,
        "_code_version": lineage.code_version,
        "_inputs": json.dumps(lineage.inputs, sort_keys=True),
    }
    remove_orphan_temps(target.parent)  # spools of killed runs (this run's own writer is alive)

    def write(handle: Any) -> None:
        if not filled:
            pq.write_table(empty_table(), handle)
            return
        first = filled[0].schema
        assert first is not None
        rows = first.remove(first.get_field_index("_row_hash"))
        schema = pa.schema(
            [*rows, *(pa.field(name, pa.string()) for name in constants), pa.field("_row_hash", pa.string())]
        )
        statistics = [*filled[0].statistics, *constants]
        with parquet_writer(handle, schema, statistics) as writer:
            for spool in filled:
                for batch in spool.batches():
                    if batch.schema != first:
                        batch = batch.cast(first)
                    n = batch.num_rows
                    columns = [batch.column(name) for name in rows.names]
                    columns += [pa.array([value] * n, pa.string()) for value in constants.values()]
                    columns.append(batch.column("_row_hash"))
                    writer.write_batch(pa.RecordBatch.from_arrays(columns, schema=schema))

    return replace_atomically(target, write, prefix=f".part-{os.getpid()}-")


def spool_fingerprint(spools: Sequence[RowSpool]) -> str:
    """`fingerprint_rows` of every spooled row (order-independent), from the row hashes alone."""
    return canonical_hash(sorted(h for s in spools for h in s.hashes))
