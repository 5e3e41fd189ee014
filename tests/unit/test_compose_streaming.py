"""`envpipeline compose` records its run in chunks: the same files as writing it all at once, never torn."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from envpipeline.compose.pipeline import compose_task, gate_pass_rates, top_reasons
from envpipeline.compose.recording import (
    StreamedRun,
    record_candidates,
    record_library,
    record_verified,
    summarize,
)
from envpipeline.errors import StoreError
from envpipeline.files import write_atomically
from envpipeline.models.task import TaskRecord
from envpipeline.redteam.summary import red_team_summary
from envpipeline.store.lake import Lake
from envpipeline.store.spool import RowSpool

REPO = Path(__file__).resolve().parents[2]
PARTITION = "cli_s0_k5_d5_n9"
ASSETS = ("service_library", "composed_task_specs", "verified_composed_tasks")


@pytest.fixture(scope="module")
def records(compose_config) -> list[TaskRecord]:
    """Candidates in seed order, accepted and rejected interleaved (as a run produces them)."""
    made = [compose_task(seed, compose_config, PARTITION) for seed in range(12)]
    assert {r.status for r in made} == {"accepted", "rejected"}, "the seeds give both verdicts"
    return made


def write_all_at_once(home: Path, out: Path, records: list[TaskRecord], run_id: str) -> None:
    """What the compose command wrote before it streamed: every record held, then written."""
    accepted = [r for r in records if r.status == "accepted"]
    rejected = [r for r in records if r.status == "rejected"]
    lake = Lake(home)
    record_library(lake, run_id)
    fingerprint = record_candidates(lake, PARTITION, accepted + rejected, run_id)
    record_verified(lake, PARTITION, accepted + rejected, fingerprint, run_id)
    out.mkdir(parents=True)
    for name, group in (("accepted", accepted), ("rejected", rejected)):
        lines = (
            json.dumps({**r.model_dump(mode="json"), "services": r.environment.services}, sort_keys=True)
            for r in group
        )
        write_atomically(out / f"{name}.jsonl", "".join(line + "\n" for line in lines))


def stream(home: Path, out: Path, records: list[TaskRecord], run_id: str, chunk: int) -> StreamedRun:
    run = StreamedRun(Lake(home), PARTITION, run_id, out, chunk=chunk)
    for record in records:
        run.add(record)
    run.publish_lake()
    run.publish_outputs()
    return run


def partition_file(home: Path, asset: str) -> Path:
    return Lake(home).partition_path(asset, "all" if asset == "service_library" else PARTITION)


@pytest.mark.parametrize("chunk", [1, 4, 1000])
def test_a_streamed_run_writes_the_files_the_all_at_once_write_did(records, tmp_path, chunk):
    write_all_at_once(tmp_path / "old", tmp_path / "old-out", records, "run-1")
    stream(tmp_path / "new", tmp_path / "new-out", records, "run-1", chunk)
    for name in ("accepted.jsonl", "rejected.jsonl"):
        assert (tmp_path / "new-out" / name).read_bytes() == (tmp_path / "old-out" / name).read_bytes()
    for asset in ASSETS:
        old = pq.read_table(partition_file(tmp_path / "old", asset))
        new = pq.read_table(partition_file(tmp_path / "new", asset))
        assert new.schema == old.schema, asset
        assert new.to_pylist() == old.to_pylist(), f"{asset}: same rows, order, lineage and row hashes"


def test_a_streamed_partition_keeps_statistics_only_for_short_columns(records, tmp_path):
    """Min/max of the task documents (kilobytes each, per row group) made the writers' and readers'
    metadata grow with the run; the short columns keep theirs (DuckDB prunes on them)."""
    stream(tmp_path / "home", tmp_path / "out", records, "run-1", chunk=2)
    metadata = pq.ParquetFile(partition_file(tmp_path / "home", "composed_task_specs")).metadata
    assert metadata.num_row_groups > 1
    for index in range(metadata.num_row_groups):
        group = metadata.row_group(index)
        stats = {group.column(i).path_in_schema: group.column(i).statistics for i in range(group.num_columns)}
        assert stats["environment"] is None and stats["reference_solution"] is None
        assert stats["task_id"] is not None and stats["task_id"].has_min_max
        assert stats["_partition"] is not None and stats["_partition"].has_min_max


def test_both_write_paths_keep_statistics_for_the_same_columns(records, tmp_path):
    """`Lake.write_partition` (every asset's write) and the streamed publish share one policy."""
    write_all_at_once(tmp_path / "old", tmp_path / "old-out", records, "run-1")
    stream(tmp_path / "new", tmp_path / "new-out", records, "run-1", chunk=1000)

    def with_statistics(home: Path) -> set[str]:
        group = pq.ParquetFile(partition_file(home, "composed_task_specs")).metadata.row_group(0)
        columns = (group.column(i) for i in range(group.num_columns))
        return {c.path_in_schema for c in columns if c.statistics is not None and c.statistics.has_min_max}

    kept = with_statistics(tmp_path / "old")
    assert kept == with_statistics(tmp_path / "new")
    assert "task_id" in kept and "environment" not in kept and "reference_solution" not in kept


def test_a_streamed_run_counts_what_the_record_functions_count(records, tmp_path):
    run = stream(tmp_path / "home", tmp_path / "out", records, "run-1", chunk=5)
    summary = run.tally.summary()
    rejected = [r for r in records if r.status == "rejected"]
    assert summary == summarize(records)
    assert summary["candidates"] == len(records)
    assert summary["rejected"] == len(rejected)
    assert summary["gate_pass_rates"] == gate_pass_rates(records)
    assert summary["top_rejection_reasons"] == dict(top_reasons(rejected))
    assert summary["red_team"] == red_team_summary(records)


KILLED_RUN = """
import json, os, signal, sys
from pathlib import Path
from envpipeline.compose.recording import StreamedRun
from envpipeline.models.task import TaskRecord
from envpipeline.store.lake import Lake
home, out, stage, partition = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]
records = [TaskRecord.model_validate(r) for r in json.loads(Path(sys.argv[5]).read_text())]
run = StreamedRun(Lake(home), partition, "run-killed", out, chunk=2)
for record in records:
    run.add(record)
if stage == "lake":
    run.publish_lake()
os.kill(os.getpid(), signal.SIGKILL)
"""


def snapshot(home: Path, out: Path) -> dict[str, bytes]:
    files = [*(partition_file(home, a) for a in ASSETS), out / "accepted.jsonl", out / "rejected.jsonl"]
    return {str(f): f.read_bytes() for f in files}


@pytest.mark.parametrize("stage", ["chunks", "lake"])
def test_a_run_killed_midway_leaves_whole_files_and_the_next_run_clears_its_temps(records, tmp_path, stage):
    home, out = tmp_path / "home", tmp_path / "out"
    stream(home, out, records[:5], "run-before", chunk=2)
    before = snapshot(home, out)
    dumped = tmp_path / "records.json"
    dumped.write_text(json.dumps([r.model_dump(mode="json") for r in records]))
    args = [str(home), str(out), stage, PARTITION, str(dumped)]
    child = subprocess.run(
        [sys.executable, "-c", KILLED_RUN, *args], env={**os.environ, "PYTHONPATH": str(REPO)}, check=False
    )
    assert child.returncode == -signal.SIGKILL
    temps = [p for p in [*home.rglob(".part-*"), *out.glob(".part-*")]]
    assert temps, "the killed run had spooled chunks to temp files"
    after = snapshot(home, out)
    if stage == "chunks":
        assert after == before, "nothing was published: every file is the previous run's, byte for byte"
    else:
        assert {k: v for k, v in after.items() if k.endswith(".jsonl")} == {
            k: v for k, v in before.items() if k.endswith(".jsonl")
        }, "the outputs are renamed only after the lake"
        stored = {r["task_id"] for r in pq.read_table(partition_file(home, ASSETS[2])).to_pylist()}
        assert stored == {r.task_id for r in records}, "the lake holds the whole new partition"
    for line in (out / "accepted.jsonl").read_text().splitlines():
        json.loads(line)  # whole lines only
    stream(home, out, records, "run-after", chunk=3)
    assert not [*home.rglob(".part-*"), *out.glob(".part-*")], "the next run removed the killed run's temps"
    listed = [json.loads(line)["task_id"] for line in (out / "accepted.jsonl").read_text().splitlines()]
    assert listed == [r.task_id for r in records if r.status == "accepted"]


def test_a_spooled_row_may_not_use_a_lineage_column_name(tmp_path):
    spool = RowSpool(tmp_path, "rows")
    with pytest.raises(StoreError, match="may not start with '_'"):
        spool.append([{"task_id": "t1", "_run_id": "forged"}])
    spool.discard()
    assert list(tmp_path.iterdir()) == []
