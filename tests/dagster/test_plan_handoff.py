"""A plan starts a stage in the same poll that sees the stage it waits for succeed, and keeps
the runs it creates ahead alive past Dagster's run-monitoring start timeout.

No daemon here: an ephemeral instance holds the runs, a recording submitter stands in for the
code location, and each of the plan's sleeps between polls is one tick of a fake clock: at each
tick every submitted run moves one step (to started, then to succeeded). The plan's hand-off
latency on its longest chain is counted in polls: none from the poll that sees a run's success
to its successor's submission, not one more.
"""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import pytest
from dagster import DagsterEvent, DagsterEventType, DagsterInstance, DagsterRunStatus
from dagster._core.test_utils import create_run_for_test

import assets.launch as launch
from assets.launch import Stage, run_plan


class _RecordingSubmitter:
    """Creates NOT_STARTED runs and records, per job, the poll at which each was submitted."""

    def __init__(self, instance: DagsterInstance, polls: list[int]) -> None:
        self.instance, self.polls = instance, polls
        self.submitted: dict[str, int] = {}
        self.queued: list[str] = []
        self.started: list[str] = []

    def create(self, job: str, partitions: Any, run_config: dict, tags: dict[str, str]) -> str:
        run = create_run_for_test(self.instance, job_name=job, tags=tags, status=DagsterRunStatus.NOT_STARTED)
        return run.run_id

    def enqueue(self, run_id: str) -> None:
        run = self.instance.get_run_by_id(run_id)
        assert run is not None
        self.submitted[run.job_name] = self.polls[0]
        self.queued.append(run_id)  # (it stays NOT_STARTED until it succeeds or fails)

    def submit(self, job: str, partitions: Any, run_config: dict, tags: dict[str, str]) -> str:
        run_id = self.create(job, partitions, run_config, tags)
        self.enqueue(run_id)
        return run_id

    def _report(self, run_ids: list[str], event: DagsterEventType) -> None:
        for run_id in run_ids:
            run = self.instance.get_run_by_id(run_id)
            assert run is not None
            self.instance.report_dagster_event(DagsterEvent(event.value, job_name=run.job_name), run_id)

    def advance(self) -> None:
        """What the daemon and the workers do between two polls: the runs started at the last tick
        succeed, and those submitted since start."""
        self._report(self.started, DagsterEventType.RUN_SUCCESS)
        self._report(self.queued, DagsterEventType.RUN_START)
        self.started, self.queued = self.queued, []


@pytest.fixture
def recorded(monkeypatch):
    polls = [0]
    with DagsterInstance.ephemeral() as instance:
        submitter = _RecordingSubmitter(instance, polls)

        def tick(_seconds: float) -> None:
            polls[0] += 1
            submitter.advance()

        # the plan's clock only (the time module itself, which Dagster uses too, is left alone)
        monkeypatch.setattr(
            launch, "time", SimpleNamespace(sleep=tick, monotonic=time.monotonic, time=time.time)
        )
        yield instance, submitter, polls


def test_a_stage_is_submitted_in_the_poll_that_sees_its_predecessor_succeed(recorded):
    instance, submitter, polls = recorded
    stages = [
        Stage("first", "first_job"),
        Stage("second", "second_job", after=("first",)),
        Stage("third", "third_job", after=("second",)),
    ]
    result = run_plan(instance, submitter, stages, retries=0)
    assert result.ok, result
    # each run starts at the first tick after its submission and succeeds at the second; the poll
    # that sees the success submits the successor
    assert submitter.submitted == {"first_job": 0, "second_job": 2, "third_job": 4}
    assert polls[0] == 6  # and the plan ends in the poll that sees the last success


def test_a_failed_predecessor_skips_the_stage_in_the_same_poll(recorded, monkeypatch):
    instance, submitter, polls = recorded

    def fail_queued() -> None:
        for run_id in submitter.queued:
            run = instance.get_run_by_id(run_id)
            assert run is not None
            instance.report_run_failed(run, message="made to fail")
        submitter.queued.clear()

    monkeypatch.setattr(submitter, "advance", fail_queued)
    stages = [Stage("first", "first_job"), Stage("second", "second_job", after=("first",))]
    result = run_plan(instance, submitter, stages, retries=0)
    assert not result.ok and result.skipped == ["second"]
    assert list(submitter.submitted) == ["first_job"]
    assert polls[0] == 1


#: seconds of the fake clock per poll in the tests of runs created ahead
TICK_SEC = 5.0


class _SlowFirstStage(_RecordingSubmitter):
    """The first job's run takes `first_ticks` polls; Dagster's run monitoring is played too: at
    each tick a NOT_STARTED run older than `start_timeout` fake seconds is failed, as the daemon
    fails it ("Run timed out due to taking longer than ... seconds to start"). Submitting a run that
    is no longer NOT_STARTED does nothing, as `DagsterInstance.submit_run` skips it."""

    def __init__(self, instance: DagsterInstance, polls: list[int], first_ticks: int, start_timeout: float):
        super().__init__(instance, polls)
        self.first_ticks, self.start_timeout = first_ticks, start_timeout
        self.born: dict[str, float] = {}
        self.timed_out: list[str] = []

    def create(self, job: str, partitions: Any, run_config: dict, tags: dict[str, str]) -> str:
        run_id = super().create(job, partitions, run_config, tags)
        self.born[run_id] = self.polls[0] * TICK_SEC
        return run_id

    def enqueue(self, run_id: str) -> None:
        run = self.instance.get_run_by_id(run_id)
        assert run is not None
        if run.status == DagsterRunStatus.NOT_STARTED:
            super().enqueue(run_id)

    def advance(self) -> None:
        now = self.polls[0] * TICK_SEC
        for run_id, born in self.born.items():
            run = self.instance.get_run_by_id(run_id)
            if run is None or run.status != DagsterRunStatus.NOT_STARTED or run_id in self.queued:
                continue
            if now - born >= self.start_timeout:
                self.instance.report_run_failed(run, message="Run timed out (monitoring, played)")
                self.timed_out.append(run_id)
        slow = [r for r in self.started if self._job(r) == "first_job" and self.polls[0] < self.first_ticks]
        self.started = [r for r in self.started if r not in slow]
        super().advance()
        self.started += slow

    def _job(self, run_id: str) -> str:
        run = self.instance.get_run_by_id(run_id)
        assert run is not None
        return run.job_name


def _slow_plan(monkeypatch, settings: dict, first_ticks: int, start_timeout: float):
    polls = [0]
    instance = DagsterInstance.ephemeral(settings=settings)
    submitter = _SlowFirstStage(instance, polls, first_ticks, start_timeout)

    def tick(_seconds: float) -> None:
        polls[0] += 1
        submitter.advance()

    monkeypatch.setattr(
        launch, "time", SimpleNamespace(sleep=tick, monotonic=lambda: polls[0] * TICK_SEC, time=time.time)
    )
    monkeypatch.setattr(launch, "daemon_alive", lambda *_: True)  # asked every 15 s of the fake clock
    return instance, submitter


def test_runs_created_ahead_are_made_again_before_run_monitoring_would_fail_them(monkeypatch):
    """A first stage that takes 200 s (40 polls) outlives a 60 s start timeout: the second stage's
    run, created ahead, is deleted and made again every 30 s, so monitoring never fails it and the
    plan needs no retry. (Before, it was failed while waiting and the plan spent its retry.)"""
    settings = {"run_monitoring": {"enabled": True, "start_timeout_seconds": 60}}
    instance, submitter = _slow_plan(monkeypatch, settings, first_ticks=40, start_timeout=60.0)
    stages = [Stage("first", "first_job"), Stage("second", "second_job", after=("first",))]
    result = run_plan(instance, submitter, stages, retries=0)
    assert result.ok, result
    assert submitter.timed_out == []
    runs = instance.get_runs()
    assert sorted(r.job_name for r in runs) == ["first_job", "second_job"], "the old ones are deleted"
    assert all(r.status == DagsterRunStatus.SUCCESS for r in runs)
    assert len(submitter.born) > 4, "the second stage's run was made again several times"


def test_a_run_created_ahead_that_was_failed_meanwhile_is_replaced_without_a_retry(monkeypatch):
    """Where the plan cannot know the limit (monitoring off in its instance's settings, on in the
    daemon's), a run created ahead may be failed before its stage starts: the stage gets a new run,
    and the plan's retries are left for real failures."""
    settings = {"run_monitoring": {"enabled": False}}
    instance, submitter = _slow_plan(monkeypatch, settings, first_ticks=20, start_timeout=60.0)
    stages = [Stage("first", "first_job"), Stage("second", "second_job", after=("first",))]
    result = run_plan(instance, submitter, stages, retries=0)
    assert result.ok, result
    assert len(submitter.timed_out) == 1
    second = [r for r in instance.get_runs() if r.job_name == "second_job"]
    assert sorted(r.status.value for r in second) == ["FAILURE", "SUCCESS"]
    assert {r.tags[launch.ATTEMPT_TAG] for r in second} == {"1"}, "not counted as a retry"
