"""The lake behind a URI: a ``file://`` lake and an fsspec ``memory://`` lake behave as the local one."""

from __future__ import annotations

import uuid

import duckdb
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from envpipeline.errors import StoreError
from envpipeline.store.catalog import catalog_path, refresh_catalog
from envpipeline.store.lake import Lake, Lineage

LINEAGE = Lineage(run_id="run-1", code_version="v1")


def rows(n: int, tag: str) -> list[dict]:
    return [{"id": f"{tag}{i}", "value": i} for i in range(n)]


@pytest.fixture(params=["file", "memory"])
def lake(request, tmp_path) -> Lake:
    if request.param == "file":
        return Lake(tmp_path / "home", uri=f"file://{tmp_path}/elsewhere/lake")
    pytest.importorskip("fsspec")
    return Lake(tmp_path / "home", uri=f"memory://lake-{uuid.uuid4().hex}")


def test_write_read_list_and_replace_through_the_uri(lake):
    lake.write_partition("numbers", "p0", rows(5, "a"), LINEAGE)
    lake.write_partition("numbers", "p1", rows(2, "b"), LINEAGE)
    lake.write_partition("letters", "p0", rows(1, "l"), LINEAGE)
    lake.write_partition("numbers", "p0", rows(3, "c"), LINEAGE)  # replaces p0 whole
    assert lake.assets() == ["letters", "numbers"]
    assert lake.partitions("numbers") == ["p0", "p1"]
    assert [r["id"] for r in lake.read("numbers", "p0")] == ["c0", "c1", "c2"]
    assert sorted(r["id"] for r in lake.read("numbers")) == ["b0", "b1", "c0", "c1", "c2"]
    assert lake.query("SELECT count(*) AS n FROM numbers")[0]["n"] == 5
    assert lake.scan("numbers", ["p1"], "count(*) AS n")[0]["n"] == 2
    assert lake.read("numbers", "p9") == [] and lake.scan("numbers", ["p9"]) == []
    # no temp file is left beside the partitions, and nothing was written under home
    folder = str(lake.partition_path("numbers", "p0").parent)
    names = [i.base_name for i in lake.fs.get_file_info(pafs.FileSelector(folder))]
    assert names == ["part.parquet"]
    assert not (lake.home / "lake").exists()


def test_a_dead_writers_temp_file_is_an_orphan_on_any_filesystem(lake):
    lake.write_partition("numbers", "p0", rows(1, "a"), LINEAGE)
    folder = str(lake.partition_path("numbers", "p0").parent)
    with lake.fs.open_output_stream(f"{folder}/.part-999999999-x.tmp") as out:
        out.write(b"half a parquet file")
    assert [p.name for p in lake.remove_orphans()] == [".part-999999999-x.tmp"]
    assert [r["id"] for r in lake.read("numbers", "p0")] == ["a0"]


def test_a_file_uri_lake_is_the_same_files_on_disk(tmp_path):
    by_uri = Lake(tmp_path / "other", uri=f"file://{tmp_path}/lake")
    by_uri.write_partition("numbers", "p0", rows(2, "a"), LINEAGE)
    part = tmp_path / "lake" / "numbers" / "partition=p0" / "part.parquet"
    assert pq.read_table(part).column("id").to_pylist() == ["a0", "a1"]
    assert Lake(tmp_path).read("numbers", "p0") == by_uri.read("numbers", "p0")


def test_the_catalog_reads_a_file_uri_lake(tmp_path):
    lake = Lake(tmp_path, uri=f"file://{tmp_path}/shared/lake")
    lake.write_partition("numbers", "p0", rows(4, "a"), LINEAGE)
    assert refresh_catalog(tmp_path, lake.uri) == ["numbers"]
    con = duckdb.connect(str(catalog_path(tmp_path)), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM numbers").fetchone() == (4,)
    finally:
        con.close()


def test_an_unknown_scheme_is_a_store_error(tmp_path):
    with pytest.raises(StoreError, match="nosuchscheme"):
        Lake(tmp_path, uri="nosuchscheme://bucket/lake")


def test_a_scan_naming_a_column_of_an_empty_partition_finds_no_row_and_a_wrong_column_still_fails(tmp_path):
    """A partition written with no rows holds only the lineage columns (a batch that accepted nothing)."""
    lake = Lake(tmp_path / "home")
    lake.write_partition("composed_rollouts", "batch-0", [], LINEAGE)
    assert lake.scan("composed_rollouts", ["batch-0"], "task_id", "mean_reward > 1") == []
    assert lake.tally("composed_rollouts", ["batch-0"], "task_id", "mean_reward > 1") == (0, [])
    lake.write_partition("composed_rollouts", "batch-1", [{"task_id": "t", "mean_reward": 2.0}], LINEAGE)
    assert lake.tally("composed_rollouts", None, "task_id", "mean_reward > 1") == (1, ["t"])
    with pytest.raises(StoreError, match="scan of composed_rollouts failed"):
        lake.scan("composed_rollouts", ["batch-1"], "no_such_column")
