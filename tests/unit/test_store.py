"""The Parquet lake, the DuckDB catalog, task rows and lineage audits."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from envpipeline.errors import StoreError, UnknownTaskError
from envpipeline.store.audit import audit_task
from envpipeline.store.catalog import catalog_path, refresh_catalog
from envpipeline.store.lake import LINEAGE_COLUMNS, Lake, Lineage
from envpipeline.store.records import row_to_task, task_to_row

REPO = Path(__file__).resolve().parents[2]
LINEAGE = Lineage(run_id="run-1", code_version="v1", inputs={"upstream": "abc123"})


def rows(n: int, tag: str = "x") -> list[dict]:
    return [{"id": f"{tag}{i}", "value": i, "note": f"row {i} of {tag}"} for i in range(n)]


def catalog_counts(home: Path) -> dict[str, int]:
    con = duckdb.connect(str(catalog_path(home)), read_only=True)
    try:
        views = [
            r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()
        ]
        return {v: con.execute(f"SELECT count(*) FROM {v}").fetchone()[0] for v in sorted(views)}
    finally:
        con.close()


def test_written_rows_carry_lineage(tmp_path):
    lake = Lake(tmp_path)
    lake.write_partition("numbers", "batch-0", rows(3), LINEAGE)
    read = lake.read("numbers", "batch-0")
    assert [r["id"] for r in read] == ["x0", "x1", "x2"]
    for row in read:
        assert set(LINEAGE_COLUMNS) <= set(row)
        assert row["_asset"] == "numbers"
        assert row["_partition"] == "batch-0"
        assert row["_run_id"] == "run-1"
        assert row["_code_version"] == "v1"
        assert '"upstream"' in row["_inputs"]
        assert len(row["_row_hash"]) == 64
    assert len({r["_row_hash"] for r in read}) == 3, "distinct rows hash differently"
    assert [r["id"] for r in lake.read("numbers")] == ["x0", "x1", "x2"]


@pytest.mark.parametrize("key", ["a/b", "x y", "../x", "", "seed=1", "a" * 129, "é", "a\nb", "p0\n"])
def test_bad_partition_keys_are_rejected(tmp_path, key):
    with pytest.raises(StoreError):
        Lake(tmp_path).write_partition("numbers", key, rows(1), LINEAGE)
    assert not any(tmp_path.rglob("*.parquet"))


@pytest.mark.parametrize("asset", ["Numbers", "1x", "a-b", "a;drop", "../x", "numbers\n"])
def test_bad_asset_names_are_rejected(tmp_path, asset):
    with pytest.raises(StoreError):
        Lake(tmp_path).write_partition(asset, "p0", rows(1), LINEAGE)


@pytest.mark.parametrize("column", ["_hidden", "seed"])
def test_reserved_columns_are_rejected(tmp_path, column):
    with pytest.raises(StoreError):
        Lake(tmp_path).write_partition("numbers", "p0", [{column: 1}], LINEAGE)


def test_rewriting_a_partition_replaces_it(tmp_path):
    lake = Lake(tmp_path)
    lake.write_partition("numbers", "p0", rows(5, "a"), LINEAGE)
    lake.write_partition("numbers", "p1", rows(2, "b"), LINEAGE)
    lake.write_partition("numbers", "p0", rows(3, "c"), LINEAGE)
    assert lake.partitions("numbers") == ["p0", "p1"]
    assert sorted(r["id"] for r in lake.read("numbers")) == ["b0", "b1", "c0", "c1", "c2"]
    assert lake.query("SELECT count(*) AS n FROM numbers")[0]["n"] == 5


def test_a_query_reads_only_the_assets_it_names(tmp_path):
    """A damaged file of one asset fails the queries that read that asset, not the others (a query
    used to make a view of every asset, reading every file's schema)."""
    lake = Lake(tmp_path)
    lake.write_partition("numbers", "p0", rows(3), LINEAGE)
    lake.write_partition("numbers_extra", "p0", rows(2), LINEAGE)
    lake.write_partition("letters", "p0", rows(2), LINEAGE)
    lake.partition_path("letters", "p0").write_bytes(b"not parquet")
    assert lake.query("SELECT count(*) AS n FROM numbers")[0]["n"] == 3
    assert lake.query('SELECT count(*) AS n FROM "Numbers_Extra"')[0]["n"] == 2
    joined = "SELECT count(*) AS n FROM numbers JOIN numbers_extra USING (id)"
    assert lake.query(joined)[0]["n"] == 2
    with pytest.raises(StoreError):
        lake.query("SELECT count(*) AS n FROM letters")


def test_row_counts_cover_the_partitions_asked_for_and_zero_when_none_is_written(tmp_path):
    lake = Lake(tmp_path)
    lake.write_partition("numbers", "p0", rows(3), LINEAGE)
    lake.write_partition("numbers", "p1", rows(2, "b"), LINEAGE)
    lake.write_partition("numbers", "p2", [], LINEAGE)
    assert lake.count_rows("numbers") == 5
    assert lake.count_rows("numbers", ["p1", "p2", "p9"]) == 2
    assert lake.count_rows("letters") == 0


def test_refresh_catalog_is_idempotent(tmp_path):
    lake = Lake(tmp_path)
    lake.write_partition("numbers", "p0", rows(4), LINEAGE)
    lake.write_partition("letters", "p0", rows(2), LINEAGE)
    assert refresh_catalog(tmp_path) == ["letters", "numbers"]
    first = catalog_counts(tmp_path)
    assert refresh_catalog(tmp_path) == ["letters", "numbers"]
    assert catalog_counts(tmp_path) == first == {"letters": 2, "numbers": 4}
    lake.write_partition("numbers", "p0", rows(1), LINEAGE)
    refresh_catalog(tmp_path)
    assert catalog_counts(tmp_path) == {"letters": 2, "numbers": 1}


WRITER = """
import os, sys
from envpipeline.store.lake import Lake, Lineage
lake = Lake(sys.argv[1])
rows = [{"id": f"r{i}", "value": i, "blob": os.urandom(2000).hex()} for i in range(ROWS)]
n = 0
while True:
    lake.write_partition("big", f"p{n % 2}", rows, Lineage(run_id=f"run-{n}", code_version="v1"))
    n += 1
    print(n, flush=True)
"""
ROWS = 5000


def test_killed_writer_leaves_no_half_written_partition(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    script = WRITER.replace("ROWS", str(ROWS))
    proc = subprocess.Popen([sys.executable, "-c", script, str(tmp_path)], env=env, stdout=subprocess.PIPE)
    try:
        assert proc.stdout.readline().strip() == b"1", "the writer finished its first partition"
        # kill it while a temp file is being written (or after ~0.5 s, whichever comes first)
        deadline = time.monotonic() + 0.5
        while time.monotonic() < deadline and not any(tmp_path.rglob(".part-*")):
            time.sleep(0.001)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    parts = sorted(tmp_path.rglob("part.parquet"))
    assert parts
    for part in parts:
        table = pq.read_table(part)
        assert table.num_rows == ROWS
        assert table.column("id").to_pylist()[-1] == f"r{ROWS - 1}"
    assert Lake(tmp_path).assets() == ["big"]
    assert refresh_catalog(tmp_path) == ["big"]
    assert catalog_counts(tmp_path) == {"big": ROWS * len(parts)}
    # the killed writer's temp file (if it got that far) was an orphan: the refresh removed it
    assert not list(tmp_path.rglob(".part-*"))


def test_orphan_temp_files_go_but_a_live_writers_stay(tmp_path):
    lake = Lake(tmp_path)
    lake.write_partition("numbers", "a", rows(2), LINEAGE)
    folder = lake.partition_path("numbers", "a").parent
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True)
    orphan = folder / f".part-{int(dead.stdout)}-abc.tmp"
    unnamed = folder / ".part-legacy.tmp"
    live = folder / f".part-{os.getpid()}-def.tmp"
    for path in (orphan, unnamed, live):
        path.write_bytes(b"half a parquet file")
    assert sorted(lake.remove_orphans()) == sorted([orphan, unnamed])
    assert live.exists() and not orphan.exists() and not unnamed.exists()
    assert len(lake.read("numbers", "a")) == 2  # the partition itself is untouched


HOLDER = """
import sys, duckdb
con = duckdb.connect(sys.argv[1], read_only=True)
print(con.execute("SELECT count(*) FROM numbers").fetchone()[0], flush=True)
sys.stdin.read()
print(con.execute("SELECT count(*) FROM numbers").fetchone()[0], flush=True)
"""


def test_a_reader_holding_the_catalog_never_blocks_a_refresh(tmp_path):
    lake = Lake(tmp_path)
    lake.write_partition("numbers", "a", rows(2), LINEAGE)
    refresh_catalog(tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(catalog_path(tmp_path))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "2"
        lake.write_partition("letters", "a", rows(3, "l"), LINEAGE)
        assert refresh_catalog(tmp_path) == ["letters", "numbers"]
        assert catalog_counts(tmp_path) == {"letters": 3, "numbers": 2}
        out, _ = holder.communicate("", timeout=60)
        assert out.strip() == "2", "the reader kept working on its open catalog"
    finally:
        holder.kill()


REFRESHER = """
import sys
from envpipeline.store.catalog import refresh_catalog
n = 0
while True:
    refresh_catalog(sys.argv[1])
    n += 1
    print(n, flush=True)
"""


def test_a_killed_refresh_leaves_a_catalog_with_every_view(tmp_path):
    lake = Lake(tmp_path)
    for asset in ("alpha", "beta", "gamma", "delta"):
        lake.write_partition(asset, "a", rows(2, asset), LINEAGE)
    refresh_catalog(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for delay in (0.0, 0.01, 0.03, 0.07, 0.15):
        proc = subprocess.Popen(
            [sys.executable, "-c", REFRESHER, str(tmp_path)], env=env, stdout=subprocess.PIPE
        )
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == b"1"
            time.sleep(delay)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        assert catalog_counts(tmp_path) == {"alpha": 2, "beta": 2, "delta": 2, "gamma": 2}
    assert refresh_catalog(tmp_path) == ["alpha", "beta", "delta", "gamma"]
    assert not list(tmp_path.glob("*.building*"))


FIRST_REFRESH = """
import sys
from envpipeline.store.catalog import refresh_catalog
print("ready", flush=True)
sys.stdin.readline()
refresh_catalog(sys.argv[1])
print("done", flush=True)
"""


def test_a_first_refresh_killed_midway_leaves_no_catalog_or_a_whole_one(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    assets = [f"asset_{i:02d}" for i in range(40)]
    for delay in (0.0, 0.02, 0.05, 0.1, 0.2, 0.4):
        home = tmp_path / f"kill-after-{delay}"
        lake = Lake(home)
        for asset in assets:
            lake.write_partition(asset, "a", rows(1, asset), LINEAGE)
        proc = subprocess.Popen(
            [sys.executable, "-c", FIRST_REFRESH, str(home)],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
            time.sleep(delay)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        if catalog_path(home).exists():
            assert catalog_counts(home) == dict.fromkeys(assets, 1)
        assert refresh_catalog(home) == assets


def test_task_rows_round_trip(accepted, tmp_path):
    task = accepted[0]
    row = task_to_row(task)
    assert row["task_id"] == task.task_id
    assert row["n_criteria"] == len(task.criteria)
    assert row["rng_seed"] == task.provenance.seed
    assert row_to_task(row) == task
    lake = Lake(tmp_path)
    lake.write_partition("verified_composed_tasks", "s0", [task_to_row(t) for t in accepted[:3]], LINEAGE)
    back = {t.task_id: t for t in map(row_to_task, lake.read("verified_composed_tasks"))}
    assert back == {t.task_id: t for t in accepted[:3]}


def test_audit_walks_back_to_the_seed(accepted, tmp_path):
    task = accepted[0]
    lake = Lake(tmp_path)
    lake.write_partition("composed_task_specs", "s0", [task_to_row(task)], Lineage("run-a", "v1"))
    lake.write_partition("verified_composed_tasks", "s0", [task_to_row(task)], Lineage("run-b", "v1"))
    chain = audit_task(lake, task.task_id)
    assert [hop["asset"] for hop in chain] == ["verified_composed_tasks", "composed_task_specs", "seed"]
    assert chain[0]["status"] == "accepted"
    assert chain[0]["run_id"] == "run-b" and chain[1]["run_id"] == "run-a"
    assert chain[-1]["seed"] == task.provenance.seed


def test_audit_of_an_unknown_task_raises(accepted, tmp_path):
    lake = Lake(tmp_path)
    with pytest.raises(UnknownTaskError):
        audit_task(lake, "cw-does-not-exist")
    lake.write_partition("verified_composed_tasks", "s0", [task_to_row(accepted[0])], LINEAGE)
    with pytest.raises(UnknownTaskError, match="cw-does-not-exist"):
        audit_task(lake, "cw-does-not-exist")


def test_a_damaged_partition_is_a_store_error_naming_the_file(tmp_path):
    lake = Lake(tmp_path)
    path = lake.write_partition("numbers", "a", rows(2), LINEAGE)
    path.write_bytes(b"PAR1 not really parquet")
    with pytest.raises(StoreError, match="part.parquet: not a readable Parquet file"):
        lake.read("numbers", "a")
    with pytest.raises(StoreError, match="part.parquet"):
        lake.read("numbers")
