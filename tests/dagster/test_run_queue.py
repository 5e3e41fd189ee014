"""Plans go through the instance's run queue: the daemon launches the runs, side by side.

Against a tiny project (`plan_project/defs.py`) on a fresh instance configured by the repo's
`dagster.yaml` (QueuedRunCoordinator, two runs at a time), with a real `dagster-daemon`.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest
from dagster import DagsterInstance, DagsterRunStatus, RunsFilter

from assets.daemon_control import DaemonStopped, fail_orphaned_runs, running_daemon
from assets.launch import RunSubmitter, Stage, check_plan, partition_ranges, run_plan, runs_of_plan
from assets.run_tags import ATTEMPT_TAG

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
WORKSPACE = Path(__file__).resolve().parent / "plan_project" / "workspace.yaml"
KEYS = ["a", "b", "c"]
LIMIT = 2  # runs at a time on the test instance


@pytest.fixture
def instance(tmp_path, monkeypatch):
    home = tmp_path / "dagster_home"
    home.mkdir()
    settings = (REPO / "dagster.yaml").read_text()
    assert "max_concurrent_runs: 5" in settings
    # the repo's settings, with a limit below the number of letters runs so that it has to bite
    (home / "dagster.yaml").write_text(
        settings.replace("max_concurrent_runs: 5", f"max_concurrent_runs: {LIMIT}")
    )
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    with DagsterInstance.get() as instance:
        instance.add_dynamic_partitions("letters", KEYS)
        yield instance


def _plan(out: Path, **folder) -> list[Stage]:
    out.mkdir(exist_ok=True)
    config = {
        "resources": {"folder": {"config": {"path": str(out), **folder}}},
        "execution": {"config": {"in_process": {}}},
    }
    return [
        Stage("letters", "letters_job", KEYS, run_config=config),
        Stage("summary", "summary_job", after=("letters",), run_config=config),
    ]


def _run(instance: DagsterInstance, stages: list[Stage], retries: int = 1, stage_done=None):
    with running_daemon(instance, WORKSPACE, print) as daemon:
        submitter = RunSubmitter(instance, WORKSPACE)
        try:
            result = run_plan(
                instance, submitter, stages, retries=retries, daemon=daemon, stage_done=stage_done
            )
            return result, daemon
        finally:
            submitter.close()


def test_a_failed_partition_is_submitted_again_and_the_plan_completes(instance, tmp_path):
    out = tmp_path / "out"
    done: list[str] = []
    result, daemon = _run(instance, _plan(out, fail_once=["b"]), stage_done=done.append)
    assert result.ok and result.runs == 5 and result.materializations == 4
    assert done == ["letters", "summary"]  # each stage announced once, when all its runs succeeded
    assert (out / "summary.txt").read_text() == "ABC"
    runs = {
        (r.job_name, r.tags.get("dagster/partition"), r.tags[ATTEMPT_TAG]): r
        for r in runs_of_plan(instance, result.plan_id)
    }
    assert runs[("letters_job", "b", "1")].status == DagsterRunStatus.FAILURE
    assert runs[("letters_job", "b", "2")].status == DagsterRunStatus.SUCCESS
    assert {k[1] for k in runs if k[0] == "letters_job"} == set(KEYS)  # each run carries its partition
    assert daemon is not None and daemon.poll() is not None  # the daemon it started is stopped
    # the summary's run was created ahead, while the letters still ran, and submitted after them
    records = {
        r.dagster_run.run_id: r
        for r in instance.get_run_records(filters=RunsFilter(run_ids=list(r.run_id for r in runs.values())))
    }
    summary = records[runs[("summary_job", None, "1")].run_id]
    letters_ends = [records[r.run_id].end_time for k, r in runs.items() if k[0] == "letters_job"]
    assert summary.create_timestamp.timestamp() < max(e for e in letters_ends if e)
    assert summary.start_time is not None and summary.start_time >= max(e for e in letters_ends if e)


def test_a_partition_that_keeps_failing_is_reported_and_the_rest_go_on(instance, tmp_path):
    out = tmp_path / "out"
    done: list[str] = []
    result, _ = _run(instance, _plan(out, fail_always=["b"]), stage_done=done.append)
    assert not result.ok and done == []
    assert list(result.failed) == ["letters_job[b]"] and len(result.failed["letters_job[b]"]) == 2
    assert result.skipped == ["summary"]
    assert sorted(p.name for p in out.glob("?.txt")) == ["a.txt", "c.txt"]
    assert not (out / "summary.txt").exists()
    # the summary's run, created ahead, is canceled with the reason, never left NOT_STARTED
    [summary] = [r for r in runs_of_plan(instance, result.plan_id) if r.job_name == "summary_job"]
    assert summary.status == DagsterRunStatus.CANCELED
    assert not instance.get_runs(filters=RunsFilter(statuses=[DagsterRunStatus.NOT_STARTED]))


def test_independent_runs_run_side_by_side_and_no_more_than_the_limit(instance, tmp_path):
    result, _ = _run(instance, _plan(tmp_path / "out", sleep=10.0))
    assert result.ok
    records = instance.get_run_records()
    spans = [(r.start_time, r.end_time) for r in records if r.dagster_run.job_name == "letters_job"]
    assert all(start and end for start, end in spans)
    overlapping = [(a, b) for i, a in enumerate(spans) for b in spans[i + 1 :] if a[0] < b[1] and b[0] < a[1]]
    assert overlapping, f"no two letters runs overlapped: {spans}"
    moments = sorted({t for span in spans for t in span})
    busiest = max(sum(s <= m < e for s, e in spans) for m in moments)
    assert busiest <= LIMIT


def test_killing_the_daemon_mid_plan_then_starting_again_converges(instance, tmp_path):
    out = tmp_path / "out"
    stages = _plan(out, sleep=3.0)
    outcome: list[BaseException] = []
    with running_daemon(instance, WORKSPACE, print) as daemon:
        assert daemon is not None
        submitter = RunSubmitter(instance, WORKSPACE)

        def go() -> None:
            try:
                run_plan(instance, submitter, stages, retries=0, daemon=daemon)
            except BaseException as stopped:  # noqa: BLE001 - the test inspects it
                outcome.append(stopped)

        waiting = threading.Thread(target=go)
        waiting.start()
        deadline = time.monotonic() + 120
        while not any(r.status == DagsterRunStatus.STARTED for r in instance.get_runs()):
            assert time.monotonic() < deadline, "no run started"
            time.sleep(0.2)
        os.killpg(daemon.pid, signal.SIGKILL)  # the daemon, its code server and the run workers
        waiting.join(timeout=60)
        submitter.close()
    assert outcome and isinstance(outcome[0], DaemonStopped), outcome
    assert "run the plan again" in str(outcome[0])
    # the stopped plan canceled the summary's run it had created ahead: nothing would submit it
    [summary] = [r for r in instance.get_runs() if r.job_name == "summary_job"]
    assert summary.status == DagsterRunStatus.CANCELED
    left = fail_orphaned_runs(instance)
    assert left  # the queued and started runs of the killed plan
    assert all(instance.get_run_by_id(r).status == DagsterRunStatus.FAILURE for r in left)
    result, _ = _run(instance, stages)
    assert result.ok and (out / "summary.txt").read_text() == "ABC"
    assert not list(out.glob("*.tmp"))  # nothing torn: every file was written whole or not at all


def test_a_stage_with_ranges_covers_its_partitions_in_fewer_runs_and_no_other_partition(instance, tmp_path):
    out = tmp_path / "out"
    instance.add_dynamic_partitions("letters", ["d", "e", "f", "g"])  # a..g, in that order
    given = ["a", "b", "c", "e", "f", "g"]  # d is not the plan's: no range may take it in
    letters, summary = _plan(out)
    ranged = replace(letters, partitions=given, partition_set="letters", max_partitions_per_run=2, min_runs=2)
    result, _ = _run(instance, [ranged, summary])
    assert result.ok and (out / "summary.txt").read_text() == "ABCEFG"
    assert not (out / "d.txt").exists()
    writers = {key: (out / f"{key}.run").read_text() for key in given}
    assert len(set(writers.values())) == 4  # (a, b) (c) (e, f) (g)
    assert writers["a"] == writers["b"] and writers["e"] == writers["f"]
    runs = [r for r in runs_of_plan(instance, result.plan_id) if r.job_name == "letters_job"]
    assert sorted(
        (r.tags.get("dagster/partition", ""), r.tags.get("dagster/asset_partition_range_start", ""))
        for r in runs
    ) == [("", "a"), ("", "e"), ("c", ""), ("g", "")]
    assert sorted(result.succeeded)[:2] == ["letters_job[a...b]", "letters_job[c]"]


def test_partition_ranges_are_contiguous_bounded_and_spread():
    order = list("abcdefgh")
    assert partition_ranges(list("abcdefgh"), order, max_per_run=3) == [
        ("a", "b", "c"),
        ("d", "e", "f"),
        ("g", "h"),
    ]
    # spread over at least two runs even though one run could take them all
    assert partition_ranges(list("abcd"), order, max_per_run=25, min_runs=2) == [("a", "b"), ("c", "d")]
    # a gap in the given keys ends a range; unknown keys run alone; keys come in the set's order
    assert partition_ranges(["h", "a", "b", "d", "zz"], order, max_per_run=10) == [
        ("a", "b"),
        ("d",),
        ("h",),
        ("zz",),
    ]
    assert partition_ranges([], order, max_per_run=10) == []


def test_a_plan_must_name_earlier_stages_only():
    with pytest.raises(ValueError, match="not earlier stages"):
        check_plan([Stage("b", "summary_job", after=("a",)), Stage("a", "letters_job")])
    with pytest.raises(ValueError, match="twice"):
        check_plan([Stage("a", "letters_job"), Stage("a", "summary_job")])


def test_the_default_plan_runs_every_asset_after_the_assets_it_reads():
    from assets.default_run import default_plan
    from assets.definitions import defs

    plan = default_plan(["batch-0000"], ["seed"], {}, {})
    check_plan(plan)
    graph = defs.resolve_asset_graph()
    produced: dict[str, set] = {}
    for stage in plan:
        produced[stage.name] = set(defs.resolve_job_def(stage.job).asset_layer.executable_asset_keys)
    before: dict[str, set] = {}
    for stage in plan:
        before[stage.name] = set().union(*(produced[a] | before[a] for a in stage.after))
        for key in produced[stage.name]:
            missing = graph.get(key).parent_keys - produced[stage.name] - before[stage.name]
            assert not missing, (stage.name, key, missing)
    everything = set().union(*produced.values())
    assert everything == {k for k in graph.get_all_asset_keys() if graph.get(k).is_executable}
