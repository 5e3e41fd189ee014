"""Task records as flat lake rows (nested parts as JSON strings) and back, through the row codec."""

from __future__ import annotations

from typing import Any

from envpipeline.canonical import canonical_hash
from envpipeline.models.task import TaskRecord
from envpipeline.store.rows import RowCodec


def _task_columns(record: TaskRecord) -> dict[str, Any]:
    return {
        "n_criteria": len(record.criteria),
        "n_services": len({c.service for c in record.criteria if c.service}),
        "generator": record.provenance.generator,
        "rng_seed": record.provenance.seed,
    }


#: Composed task records: one column per field, nested parts as JSON, plus query columns.
TASK_ROWS = RowCodec(TaskRecord, derived=_task_columns)


def task_to_row(record: TaskRecord) -> dict[str, Any]:
    """One flat row: scalar columns for filtering, JSON strings for nested parts."""
    return TASK_ROWS.encode(record)


def dumped_task_to_row(record: TaskRecord, data: dict[str, Any]) -> dict[str, Any]:
    """`task_to_row` from the record's ``model_dump(mode="json")`` the caller already made."""
    return TASK_ROWS.encode_dumped(record, data)


def row_to_task(row: dict[str, Any]) -> TaskRecord:
    """Rebuild a task record from a lake row (lineage and derived columns are dropped)."""
    return TASK_ROWS.decode(row)


def fingerprint_rows(rows: list[dict[str, Any]]) -> str:
    """A content fingerprint of a set of rows (order-independent)."""
    return canonical_hash(sorted(canonical_hash(r) for r in rows))
