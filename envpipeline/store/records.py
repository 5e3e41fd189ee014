"""Task records as flat lake rows (nested parts as JSON strings) and back."""

from __future__ import annotations

import json
from typing import Any

from envpipeline.models.task import TaskRecord
from envpipeline.store.lake import canonical_hash

JSON_FIELDS = ("environment", "criteria", "reference_solution", "metadata", "provenance", "gates", "reasons")


def task_to_row(record: TaskRecord) -> dict[str, Any]:
    """One flat row: scalar columns for filtering, JSON strings for nested parts."""
    data = record.model_dump(mode="json")
    row = {k: v for k, v in data.items() if k not in JSON_FIELDS}
    for name in JSON_FIELDS:
        row[name] = json.dumps(data[name], sort_keys=True, separators=(",", ":"))
    row["n_criteria"] = len(record.criteria)
    row["n_services"] = len({c.service for c in record.criteria if c.service})
    row["generator"] = record.provenance.generator
    row["rng_seed"] = record.provenance.seed
    return row


def row_to_task(row: dict[str, Any]) -> TaskRecord:
    """Rebuild a task record from a lake row (lineage and derived columns are dropped)."""
    data = {k: v for k, v in row.items() if k in TaskRecord.model_fields}
    for name in JSON_FIELDS:
        if isinstance(data.get(name), str):
            data[name] = json.loads(data[name])
    return TaskRecord.model_validate(data)


def fingerprint_rows(rows: list[dict[str, Any]]) -> str:
    """A content fingerprint of a set of rows (order-independent)."""
    return canonical_hash(sorted(canonical_hash(r) for r in rows))
