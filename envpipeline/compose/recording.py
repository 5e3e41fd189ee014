"""Record composed candidates and verdicts in the lake, with lineage, and summarize them."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from envpipeline.compose.pipeline import gate_pass_rates, top_reasons
from envpipeline.models.task import TaskRecord
from envpipeline.redteam.summary import red_team_summary
from envpipeline.services.summary import library_fingerprint, library_rows, simulated_tool_names
from envpipeline.store.lake import Lake, Lineage
from envpipeline.store.records import fingerprint_rows, task_to_row
from envpipeline.versions import Stage, code_version

CODE_VERSION = code_version(Stage.COMPOSE)


def record_library(lake: Lake, run_id: str) -> str:
    """Write the service library partition; returns the library fingerprint."""
    rows = library_rows()
    lake.write_partition("service_library", "all", rows, Lineage(run_id, CODE_VERSION))
    return rows[0]["library_fingerprint"] if rows else ""


def record_candidates(lake: Lake, partition: str, candidates: list[TaskRecord], run_id: str) -> str:
    """Write the candidate specs of one batch; returns their fingerprint."""
    rows = [task_to_row(c) for c in candidates]
    lineage = Lineage(run_id, CODE_VERSION, {"service_library": library_fingerprint()})
    lake.write_partition("composed_task_specs", partition, rows, lineage)
    return fingerprint_rows(rows)


def record_verified(
    lake: Lake, partition: str, judged: list[TaskRecord], specs_fingerprint: str, run_id: str
) -> None:
    """Write the verdicts of one batch, pointing back at the specs they judged."""
    rows = [task_to_row(r) for r in judged]
    lineage = Lineage(run_id, CODE_VERSION, {f"composed_task_specs/{partition}": specs_fingerprint})
    lake.write_partition("verified_composed_tasks", partition, rows, lineage)


def touches_simulated(record: TaskRecord, simulated: set[str]) -> bool:
    """Whether a task's reference solution calls a world-model simulated tool."""
    return any(step.tool in simulated for step in record.reference_solution)


def summarize(records: Iterable[TaskRecord]) -> dict[str, Any]:
    """Counts, gate pass rates, top rejection reasons and simulated-tool shares."""
    records = list(records)
    accepted = [r for r in records if r.status == "accepted"]
    rejected = [r for r in records if r.status == "rejected"]
    simulated = simulated_tool_names()
    total_tools = sum(row["n_tools"] for row in library_rows())
    return {
        "candidates": len(records),
        "accepted": len(accepted),
        "rejected": len(rejected),
        "acceptance_rate": round(len(accepted) / len(records), 4) if records else 0.0,
        "gate_pass_rates": gate_pass_rates(records),
        "top_rejection_reasons": dict(top_reasons(rejected)),
        "red_team": red_team_summary(records),
        "simulated_tool_share": round(len(simulated) / total_tools, 4) if total_tools else 0.0,
        "tasks_touching_simulated_share": (
            round(sum(touches_simulated(r, simulated) for r in accepted) / len(accepted), 4)
            if accepted
            else 0.0
        ),
    }
