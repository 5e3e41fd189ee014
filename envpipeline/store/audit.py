"""Walk the lineage of an accepted task back to its seed, run and code version."""

from __future__ import annotations

import json
from typing import Any

from envpipeline.errors import UnknownTaskError
from envpipeline.store.lake import Lake

#: For each task asset, the upstream asset it was derived from.
UPSTREAM = {
    "verified_composed_tasks": "composed_task_specs",
}


def _hop(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "asset": row["_asset"],
        "partition": row["_partition"],
        "run_id": row["_run_id"],
        "code_version": row["_code_version"],
        "inputs": json.loads(row["_inputs"] or "{}"),
        "row_hash": row["_row_hash"],
    }


def audit_task(lake: Lake, task_id: str) -> list[dict[str, Any]]:
    """The chain from a task back to its seed: one entry per asset, then the seed itself."""
    for asset in ("verified_composed_tasks",):
        if asset not in lake.assets():
            continue
        rows = lake.query(
            f"SELECT * FROM {asset} WHERE task_id = ? ORDER BY status = 'accepted' DESC LIMIT 1", [task_id]
        )
        if rows:
            return _chain(lake, asset, rows[0])
    raise UnknownTaskError(
        f"task '{task_id}' is not in the store at {lake.home}; run `envpipeline run` first"
    )


def _chain(lake: Lake, asset: str, row: dict[str, Any]) -> list[dict[str, Any]]:
    chain = [
        {
            **_hop(row),
            "task_id": row["task_id"],
            "status": row["status"],
            "gates": {g["name"]: g["passed"] for g in json.loads(row["gates"])},
        }
    ]
    upstream = UPSTREAM.get(asset)
    while upstream and upstream in lake.assets():
        found = lake.query(f"SELECT * FROM {upstream} WHERE task_id = ? LIMIT 1", [row["task_id"]])
        if not found:
            break
        row = found[0]
        chain.append(_hop(row))
        upstream = UPSTREAM.get(upstream)
    provenance = json.loads(row.get("provenance") or "{}")
    chain.append({"asset": "seed", "partition": row.get("seed_key"), **provenance})
    library = json.loads(row["_inputs"] or "{}").get("service_library")
    if library and "service_library" in lake.assets():
        lib = lake.query("SELECT * FROM service_library WHERE library_fingerprint = ? LIMIT 1", [library])
        if lib:
            chain.append({**_hop(lib[0]), "library_fingerprint": library})
    return chain
