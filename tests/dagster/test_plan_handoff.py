"""A plan starts a stage in the same poll that sees the stage it waits for succeed.

No daemon here: an ephemeral instance holds the runs, a recording submitter stands in for the
code location, and each of the plan's sleeps between polls is one tick of a fake clock: at each
tick every submitted run moves one step (to started, then to succeeded). The plan's hand-off
latency on its longest chain is counted in polls: none from the poll that sees a run's success
to its successor's submission, not one more.
"""

from __future__ import annotations

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

        monkeypatch.setattr(launch.time, "sleep", tick)
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
