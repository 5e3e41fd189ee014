"""Record composed candidates and verdicts in the lake, with lineage, and summarize them."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envpipeline.files import SpooledFile
from envpipeline.models.task import TaskRecord
from envpipeline.redteam.summary import RedTeamTally
from envpipeline.services.registry import all_services
from envpipeline.services.summary import library_fingerprint, library_rows, simulated_tool_names
from envpipeline.store.lake import Lake, Lineage, remove_orphan_temps
from envpipeline.store.records import dumped_task_to_row, fingerprint_rows, task_to_row
from envpipeline.store.spool import RowSpool, publish_partition, spool_fingerprint
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


@dataclass(frozen=True)
class LibraryShape:
    """What a summary needs of the service library: its simulated tools (namespaced) and its size."""

    simulated: frozenset[str]
    total_tools: int

    @classmethod
    def built(cls) -> LibraryShape:
        """The shape of the library this process builds (`all_services`: about 2.5 s of CPU the
        first time, for the imported services)."""
        return cls(frozenset(simulated_tool_names()), sum(len(c.tools) for c in all_services().values()))

    @classmethod
    def stored(cls, lake: Lake) -> LibraryShape | None:
        """The shape of the library `record_library` last wrote to `lake` (the one its composed
        tasks were made with), or None when the lake has none."""
        rows = lake.read("service_library", "all")
        if not rows:
            return None
        simulated = {f"{r['service']}.{t}" for r in rows for t in json.loads(r["simulated_tools"])}
        return cls(frozenset(simulated), sum(int(r["n_tools"]) for r in rows))


def touches_simulated(record: TaskRecord, simulated: frozenset[str] | set[str]) -> bool:
    """Whether a task's reference solution calls a world-model simulated tool."""
    return any(step.tool in simulated for step in record.reference_solution)


class SummaryTally:
    """`summarize` one record at a time: a streamed run keeps counts, never the records."""

    def __init__(self, library: LibraryShape | None = None) -> None:
        self.library = library or LibraryShape.built()
        self.candidates = 0
        self.accepted = 0
        self.rejected = 0
        self.gates: dict[str, dict[str, int]] = {}
        self.reasons: Counter[str] = Counter()
        self.red_team = RedTeamTally()
        self.touching_simulated = 0

    def add(self, record: TaskRecord) -> None:
        """Count one judged record."""
        self.candidates += 1
        self.accepted += record.status == "accepted"
        self.rejected += record.status == "rejected"
        for gate in record.gates:
            entry = self.gates.setdefault(gate.name, {"passed": 0, "total": 0})
            entry["total"] += 1
            entry["passed"] += int(gate.passed)
        if record.status == "rejected":
            self.reasons.update(r.split(":", 1)[0] for r in record.reasons)
        self.red_team.add(record)
        if record.status == "accepted":
            self.touching_simulated += touches_simulated(record, self.library.simulated)

    def summary(self) -> dict[str, Any]:
        """What `summarize` gives for the records added."""
        candidates = self.candidates
        simulated, total_tools = self.library.simulated, self.library.total_tools
        return {
            "candidates": candidates,
            "accepted": self.accepted,
            "rejected": self.rejected,
            "acceptance_rate": round(self.accepted / candidates, 4) if candidates else 0.0,
            "gate_pass_rates": {
                name: round(e["passed"] / e["total"], 4) if e["total"] else 0.0
                for name, e in sorted(self.gates.items())
            },
            "top_rejection_reasons": dict(self.reasons.most_common(5)),
            "red_team": self.red_team.summary(),
            "simulated_tool_share": round(len(simulated) / total_tools, 4) if total_tools else 0.0,
            "tasks_touching_simulated_share": (
                round(self.touching_simulated / self.accepted, 4) if self.accepted else 0.0
            ),
        }


def summarize(records: Iterable[TaskRecord], library: LibraryShape | None = None) -> dict[str, Any]:
    """Counts, gate pass rates, top rejection reasons and simulated-tool shares (against `library`,
    by default the library this process builds)."""
    tally = SummaryTally(library)
    for record in records:
        tally.add(record)
    return tally.summary()


class StreamedRun:
    """One compose run recorded as it goes: chunks of records spool to the lake and the output
    folder, so memory holds one chunk and the counts, never the run.

    `add` buffers a record; every `chunk` records the buffer is written to temp files (the spec
    rows of accepted and of rejected candidates, and the two JSON-lines outputs). `publish_lake`
    then writes the ``service_library``, ``composed_task_specs`` and ``verified_composed_tasks``
    partitions (accepted rows first, as `record_candidates` and `record_verified` write them) and
    `publish_outputs` renames ``accepted.jsonl`` and ``rejected.jsonl`` into place: each file is
    whole or absent at any kill, and the outputs never list a task the lake lacks. `discard` drops
    the temp files of a run that failed; those of a killed run are removed by the next run.
    """

    def __init__(self, lake: Lake, partition: str, run_id: str, out: Path, chunk: int = 100) -> None:
        self.lake, self.partition, self.run_id, self.chunk = lake, partition, run_id, chunk
        self.tally = SummaryTally()
        folder = lake.partition_path("composed_task_specs", partition).parent
        self.rows = {status: RowSpool(folder, status) for status in ("accepted", "rejected")}
        out.mkdir(parents=True, exist_ok=True)
        remove_orphan_temps(out)  # outputs of killed runs
        self.lines = {
            status: SpooledFile(out / f"{status}.jsonl", prefix=f".part-{os.getpid()}-{status}-")
            for status in ("accepted", "rejected")
        }
        self._buffer: list[tuple[str, dict[str, Any], str]] = []

    def add(self, record: TaskRecord, status: str | None = None) -> None:
        """Record one judged candidate, filed under `status` (default: its own)."""
        data = record.model_dump(mode="json")
        line = json.dumps({**data, "services": record.environment.services}, sort_keys=True)
        self._buffer.append((status or record.status, dumped_task_to_row(record, data), line))
        self.tally.add(record)
        if len(self._buffer) >= self.chunk:
            self.flush()

    def flush(self) -> None:
        """Write the buffered records to the temp files."""
        for status in ("accepted", "rejected"):
            chosen = [(row, line) for s, row, line in self._buffer if s == status]
            self.rows[status].append([row for row, _ in chosen])
            self.lines[status].write("".join(line + "\n" for _, line in chosen).encode("utf-8"))
        self._buffer.clear()

    def publish_lake(self) -> str:
        """Write the run's three lake partitions; returns the specs fingerprint."""
        self.flush()
        record_library(self.lake, self.run_id)
        spools = [self.rows["accepted"], self.rows["rejected"]]
        fingerprint = spool_fingerprint(spools)
        specs = Lineage(self.run_id, CODE_VERSION, {"service_library": library_fingerprint()})
        publish_partition(self.lake, "composed_task_specs", self.partition, spools, specs)
        inputs = {f"composed_task_specs/{self.partition}": fingerprint}
        verified = Lineage(self.run_id, CODE_VERSION, inputs)
        publish_partition(self.lake, "verified_composed_tasks", self.partition, spools, verified)
        for spool in spools:
            spool.discard()
        return fingerprint

    def publish_outputs(self) -> None:
        """Rename the JSON-lines outputs into place (after the lake holds their tasks)."""
        for spooled in self.lines.values():
            spooled.commit()

    def discard(self) -> None:
        """Drop every temp file of this run."""
        for spool in self.rows.values():
            spool.discard()
        for spooled in self.lines.values():
            spooled.discard()
