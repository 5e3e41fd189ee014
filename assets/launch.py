"""Submit a plan of runs to the instance's run queue and wait for them, with progress.

The default job is a plan: a small graph of *stages*, each one job over zero or more partitions,
run once the stages it waits for have succeeded. Every run is created from the code location of
``workspace.yaml`` and submitted to the instance (``DagsterInstance.submit_run``): with the
``QueuedRunCoordinator`` of ``dagster.yaml`` it joins the run queue, and the daemon launches it in
its own process, at most ``max_concurrent_runs`` at a time. These are the same runs a user
launches from the UI, tagged with their partition and with the plan they belong to.

A failed run is submitted again up to ``retries`` times; a stage whose run still fails is reported
and the stages after it are skipped, while the rest of the plan goes on.

Beside it: `assets.run_tags` (how a plan's runs are tagged), `assets.daemon_control` (the daemon a
plan starts or finds, and the runs left behind), `assets.plan_lease` (sensors hold back while a
plan works).
"""

from __future__ import annotations

import contextlib
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dagster import DagsterInstance, DagsterRun, DagsterRunStatus, RunsFilter

from assets.daemon_control import DaemonStopped, daemon_alive
from assets.plan_lease import plan_lease
from assets.run_tags import ATTEMPT_TAG, FINISHED, PLAN_TAG, STAGE_TAG

#: How often a plan looks at its runs (a stage's runs are submitted at most this long after the
#: runs it waits for end; one query of the run storage a poll).
POLL_SEC = 0.5
#: How often a plan asks whether a daemon it did not start is still alive.
DAEMON_CHECK_SEC = 15.0
#: A run created ahead is made again this long before Dagster's run monitoring would fail it.
AHEAD_MARGIN_SEC = 30.0


def ahead_lifetime(instance: DagsterInstance) -> float | None:
    """How long a run created ahead may wait NOT_STARTED; None for as long as it takes.

    Dagster's run monitoring fails a NOT_STARTED run older than its start timeout ("Run timed out
    due to taking longer than 180 seconds to start", ``run_monitoring.start_timeout_seconds``), as
    it does a run whose worker never started: a plan whose first stages take longer would find its
    later stages' runs failed before it could submit them. A plan makes them again (and deletes the
    old ones) `AHEAD_MARGIN_SEC` before that; 0 when the timeout leaves no time (nothing is made ahead).
    """
    timeout = instance.run_monitoring_start_timeout_seconds
    if not instance.run_monitoring_enabled or timeout <= 0:
        return None
    return max(0.0, timeout - AHEAD_MARGIN_SEC)


@dataclass(frozen=True)
class Stage:
    """One job, run once per partition (or once, unpartitioned) after the stages in `after`.

    `partitions` is a list of keys, or a callable that reads them from the instance when the
    stage starts (dynamic partitions that an earlier stage adds).

    With `max_partitions_per_run` > 1 and `partition_set` (the job's dynamic partitions) named, a
    run covers a range of partitions, as a backfill's ``BackfillPolicy.multi_run`` run does: the
    keys are split into ranges that are contiguous in the instance's order of `partition_set` (a
    range must not take in a partition the stage was not given; partitions added later are
    appended to that order, so none can land inside a range), at least `min_runs` of them when
    there are enough keys (so that the stage's runs can use several cores), each of at most
    `max_partitions_per_run` keys."""

    name: str
    job: str
    partitions: Sequence[str] | Callable[[DagsterInstance], Sequence[str]] | None = None
    after: tuple[str, ...] = ()
    run_config: dict[str, Any] = field(default_factory=dict)
    priority: int = 0
    partition_set: str | None = None
    max_partitions_per_run: int = 1
    min_runs: int = 1
    #: tags of the stage's runs (the run queue's tag concurrency limits apply to them)
    tags: dict[str, str] = field(default_factory=dict)

    def partition_keys(self, instance: DagsterInstance) -> list[str | None]:
        if self.partitions is None:
            return [None]
        keys = self.partitions(instance) if callable(self.partitions) else self.partitions
        return list(keys)

    def run_partitions(self, instance: DagsterInstance) -> list[tuple[str, ...]]:
        """The partitions of each of the stage's runs: one key, a range of keys, or () unpartitioned."""
        keys = self.partition_keys(instance)
        if keys == [None]:
            return [()]
        given = [k for k in keys if k is not None]
        if self.max_partitions_per_run <= 1 or self.partition_set is None:
            return [(k,) for k in given]
        order = list(instance.get_dynamic_partitions(self.partition_set))
        return partition_ranges(given, order, self.max_partitions_per_run, self.min_runs)


def partition_ranges(
    keys: Sequence[str], order: Sequence[str], max_per_run: int, min_runs: int = 1
) -> list[tuple[str, ...]]:
    """Split `keys` into runs of contiguous keys of `order` (the partition set's order).

    A key not in `order` gets a run of its own. Each run has at most `max_per_run` keys, and the
    keys are spread over at least `min_runs` runs when there are that many keys."""
    position = {key: i for i, key in enumerate(order)}
    known = sorted((k for k in set(keys) if k in position), key=position.__getitem__)
    groups: list[list[str]] = []
    for key in known:
        if groups and position[key] == position[groups[-1][-1]] + 1:
            groups[-1].append(key)
        else:
            groups.append([key])
    size = max(1, min(max_per_run, -(-len(known) // max(min_runs, 1)) if known else 1))
    runs = [tuple(group[i : i + size]) for group in groups for i in range(0, len(group), size)]
    return runs + [(k,) for k in dict.fromkeys(keys) if k not in position]


@dataclass
class _Slot:
    """One run's worth of a stage (no partition, one, or a range) and the runs submitted for it."""

    stage: Stage
    partitions: tuple[str, ...]
    runs: list[str] = field(default_factory=list)
    status: DagsterRunStatus | None = None
    materializations: int = 0

    @property
    def label(self) -> str:
        if not self.partitions:
            return self.stage.job
        if len(self.partitions) == 1:
            return f"{self.stage.job}[{self.partitions[0]}]"
        return f"{self.stage.job}[{self.partitions[0]}...{self.partitions[-1]}]"


@dataclass(frozen=True)
class _Ahead:
    """The runs of one stage created ahead of its hand-off: (partitions, run id) each, and when
    they were made (time.monotonic)."""

    runs: list[tuple[tuple[str, ...], str]]
    at: float


@dataclass
class PlanResult:
    """What happened: run ids per (stage, partition), failures and skipped stages."""

    plan_id: str
    runs: int
    succeeded: list[str]
    failed: dict[str, list[str]]
    skipped: list[str]
    materializations: int

    @property
    def ok(self) -> bool:
        return not self.failed and not self.skipped


def check_plan(stages: Sequence[Stage]) -> None:
    """Stage names are unique and every `after` names an earlier stage (so the plan cannot cycle)."""
    seen: set[str] = set()
    for stage in stages:
        if stage.name in seen:
            raise ValueError(f"stage {stage.name!r} appears twice in the plan")
        unknown = [a for a in stage.after if a not in seen]
        if unknown:
            raise ValueError(f"stage {stage.name!r} waits for {unknown}, which are not earlier stages")
        seen.add(stage.name)


class RunSubmitter:
    """Creates runs of the workspace's jobs and submits them to the instance (as the UI does)."""

    def __init__(self, instance: DagsterInstance, workspace_file: Path) -> None:
        from dagster import __version__
        from dagster._core.workspace.context import WorkspaceProcessContext
        from dagster._core.workspace.load_target import WorkspaceFileTarget

        self.instance = instance
        self._process = WorkspaceProcessContext(
            instance, WorkspaceFileTarget(paths=[str(workspace_file)]), version=__version__
        )
        self._context = self._process.create_request_context()
        [location_name] = self._context.code_location_names
        self._location = self._context.get_code_location(location_name)
        [repository] = self._location.get_repositories().values()
        self._repository = repository

    def close(self) -> None:
        self._process.__exit__(None, None, None)

    def submit(
        self,
        job_name: str,
        partitions: str | Sequence[str] | None,
        run_config: dict[str, Any],
        tags: dict[str, str],
    ) -> str:
        """Create one run of `job_name` (for one partition, a range of them in the partition set's
        order, or none) and submit it; its run id."""
        run_id = self.create(job_name, partitions, run_config, tags)
        self.enqueue(run_id)
        return run_id

    def create(
        self,
        job_name: str,
        partitions: str | Sequence[str] | None,
        run_config: dict[str, Any],
        tags: dict[str, str],
    ) -> str:
        """Create one run of `job_name` as `submit` does, without submitting it (it stays
        NOT_STARTED until `enqueue`); its run id."""
        from dagster._core.definitions.selector import JobSubsetSelector
        from dagster._core.storage.tags import (
            ASSET_PARTITION_RANGE_END_TAG,
            ASSET_PARTITION_RANGE_START_TAG,
            PARTITION_NAME_TAG,
        )

        selector = JobSubsetSelector(
            location_name=self._location.name,
            repository_name=self._repository.name,
            job_name=job_name,
            op_selection=None,
        )
        remote_job = self._location.get_job(selector)
        run_tags = {**remote_job.tags, **tags}
        partitions = [partitions] if isinstance(partitions, str) else list(partitions or [])
        if len(partitions) == 1:
            run_tags[PARTITION_NAME_TAG] = partitions[0]
        elif partitions:  # the tags of a backfill's multi-partition run
            run_tags[ASSET_PARTITION_RANGE_START_TAG] = partitions[0]
            run_tags[ASSET_PARTITION_RANGE_END_TAG] = partitions[-1]
        plan = self._location.get_execution_plan(
            remote_job, run_config, step_keys_to_execute=None, known_state=None, instance=self.instance
        )
        snapshot = plan.execution_plan_snapshot
        run = self.instance.create_run(
            job_name=job_name,
            run_id=None,
            run_config=run_config,
            resolved_op_selection=remote_job.resolved_op_selection,
            step_keys_to_execute=snapshot.step_keys_to_execute,
            op_selection=None,
            status=None,
            root_run_id=None,
            parent_run_id=None,
            tags=run_tags,
            job_snapshot=remote_job.job_snapshot,
            execution_plan_snapshot=snapshot,
            parent_job_snapshot=remote_job.parent_job_snapshot,
            remote_job_origin=remote_job.get_remote_origin(),
            job_code_origin=remote_job.get_python_origin(),
            asset_selection=None,
            asset_check_selection=None,
            asset_graph=self._repository.asset_graph,
        )
        return run.run_id

    def enqueue(self, run_id: str) -> None:
        """Submit a run `create` made to the instance's run queue."""
        self.instance.submit_run(run_id, self._context)


def run_plan(
    instance: DagsterInstance,
    submitter: Any,
    stages: Sequence[Stage],
    retries: int = 1,
    progress: Callable[[dict[str, int]], None] | None = None,
    log: Callable[[str], None] = lambda _: None,
    tags: dict[str, str] | None = None,
    daemon: subprocess.Popen[bytes] | None = None,
    stage_done: Callable[[str], None] | None = None,
) -> PlanResult:
    """Submit every stage's runs once its predecessors succeeded; wait for all; retry failures.

    `daemon` is the daemon process started for this plan, if any: when it exits, waiting is
    pointless and `DaemonStopped` says which runs were left (start again: `fail_orphaned_runs`).
    `stage_done` is called with a stage's name once every run of it succeeded.

    The runs of a stage that waits for others are created ahead (`RunSubmitter.create`: NOT_STARTED,
    with their partitions, tags and execution plan), one stage a poll while the first runs work,
    so that when its predecessors are done only the submission is left: creating a run costs
    0.1-0.2 s of CPU (its event-log shard, its planned materializations), about 1 s on a busy
    machine, once per hand-off on the plan's longest chain. A stage whose partitions are known only
    later (a callable) is created when it starts. Runs created ahead are submitted with the stage,
    or canceled (with the reason) when the stage is skipped or the plan stops. They are made again
    before the instance's run monitoring would fail them for waiting (`ahead_lifetime`), and a run
    created ahead that is no longer NOT_STARTED when its stage starts (failed or canceled by
    someone else) is replaced by a new run, which does not count as a retry."""
    check_plan(stages)
    plan_id = uuid.uuid4().hex[:12]
    last_check = [time.monotonic(), True]

    def _external_alive() -> bool:
        """A daemon this plan did not start: asked every DAEMON_CHECK_SEC (heartbeats come slowly)."""
        if time.monotonic() - float(last_check[0]) > DAEMON_CHECK_SEC:
            last_check[:] = [time.monotonic(), daemon_alive(instance)]
        return bool(last_check[1])

    slots: dict[str, list[_Slot]] = {}
    skipped: list[str] = []
    run_slot: dict[str, _Slot] = {}
    announced: set[str] = set()

    #: stage name -> its runs created ahead, not submitted yet
    ahead: dict[str, _Ahead] = {}
    lifetime = ahead_lifetime(instance)

    def run_tags(stage: Stage, attempt: int) -> dict[str, str]:
        return {
            **(tags or {}),
            **stage.tags,
            PLAN_TAG: plan_id,
            STAGE_TAG: stage.name,
            ATTEMPT_TAG: str(attempt),
            "dagster/priority": str(stage.priority),
        }

    def submit(slot: _Slot, created: str | None = None) -> None:
        """Submit the slot's next attempt: the run created ahead, or a new one."""
        if created is None:
            attempt_tags = run_tags(slot.stage, len(slot.runs) + 1)
            run_id = submitter.submit(slot.stage.job, slot.partitions, slot.stage.run_config, attempt_tags)
        else:
            submitter.enqueue(created)
            run_id = created
        slot.runs.append(run_id)
        slot.status = DagsterRunStatus.QUEUED
        run_slot[run_id] = slot

    def create_ahead() -> None:
        """Create the runs of the next stage that waits for others (one stage a call), after
        deleting the runs created ahead that would soon be too old to wait (`ahead_lifetime`)."""
        if lifetime is not None:
            for name in [n for n, entry in ahead.items() if time.monotonic() - entry.at >= lifetime]:
                for _, run_id in ahead.pop(name).runs:
                    instance.delete_run(run_id)
            if lifetime <= 0:
                return
        for stage in stages:
            handled = stage.name in slots or stage.name in skipped or stage.name in ahead
            if stage.after and not callable(stage.partitions) and not handled:
                runs = [
                    (keys, submitter.create(stage.job, keys, stage.run_config, run_tags(stage, 1)))
                    for keys in stage.run_partitions(instance)
                ]
                ahead[stage.name] = _Ahead(runs, time.monotonic())
                return

    def still_waiting(created: list[tuple[tuple[str, ...], str]]) -> list[str | None]:
        """The runs created ahead that can still be submitted (None for one that cannot)."""
        ids = [run_id for _, run_id in created]
        runs = {r.run_id: r for r in instance.get_runs(filters=RunsFilter(run_ids=ids))}
        waiting = {i for i, r in runs.items() if r.status == DagsterRunStatus.NOT_STARTED}
        return [run_id if run_id in waiting else None for run_id in ids]

    def cancel_ahead(name: str, why: str) -> None:
        entry = ahead.pop(name, None)
        for _, run_id in entry.runs if entry is not None else []:
            run = instance.get_run_by_id(run_id)
            if run is not None and run.status == DagsterRunStatus.NOT_STARTED:
                instance.report_run_canceled(run, message=why)

    def stage_state(name: str) -> str:
        if name in skipped:
            return "skipped"
        if name not in slots:
            return "waiting"
        states = [s.status for s in slots[name]]
        if all(s == DagsterRunStatus.SUCCESS for s in states):
            return "done"
        if any(s in (DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED) for s in states):
            return "failed" if all(s in FINISHED for s in states) else "running"
        return "running"

    with plan_lease(instance, plan_id) as renew, _canceling_ahead(ahead, cancel_ahead):
        while True:
            open_runs = [
                run_id
                for run_id, slot in run_slot.items()
                if slot.runs[-1] == run_id and slot.status not in FINISHED
            ]
            # one query a poll for every unsettled run (a query per run cost the plan ~10 s of CPU)
            current = (
                {r.run_id: r for r in instance.get_runs(filters=RunsFilter(run_ids=open_runs))}
                if open_runs
                else {}
            )
            for run_id in open_runs:
                slot = run_slot[run_id]
                run = current.get(run_id)
                if run is None or run.status not in FINISHED:
                    slot.status = run.status if run is not None else slot.status
                    continue
                slot.status = run.status
                if run.status == DagsterRunStatus.SUCCESS:
                    slot.materializations += instance.get_run_stats(run_id).materializations
                elif len(slot.runs) <= retries:
                    log(f"{slot.label}: run {run_id} {run.status.value.lower()}; submitting it again")
                    submit(slot)
                else:
                    log(f"{slot.label}: run {run_id} {run.status.value.lower()} (no retries left)")
            # stages whose predecessors just settled start in the same pass (a pass later they
            # waited a whole poll more: about 0.5 s at each hand-off of the plan's longest chain)
            for stage in stages:
                if stage.name in slots or stage.name in skipped:
                    continue
                before = [stage_state(a) for a in stage.after]
                if any(state in ("failed", "skipped") for state in before):
                    skipped.append(stage.name)
                    log(f"skipped {stage.name}: a stage it waits for failed")
                    cancel_ahead(stage.name, "stage skipped: a stage it waits for failed")
                    continue
                if all(state == "done" for state in before):
                    entry = ahead.pop(stage.name, None)
                    if entry is None:
                        slots[stage.name] = [_Slot(stage, keys) for keys in stage.run_partitions(instance)]
                        for slot in slots[stage.name]:
                            submit(slot)
                    else:
                        slots[stage.name] = [_Slot(stage, keys) for keys, _ in entry.runs]
                        for slot, run_id in zip(slots[stage.name], still_waiting(entry.runs), strict=True):
                            submit(slot, run_id)
            for name in slots:
                if name not in announced and stage_state(name) == "done":
                    announced.add(name)
                    if stage_done is not None:
                        stage_done(name)
            every = [slot for group in slots.values() for slot in group]
            if progress is not None:
                progress(_counts(every, len(stages), len(skipped)))
            stopped = daemon.poll() is not None if daemon is not None else not _external_alive()
            if stopped:
                unsettled = [s.label for s in every if s.status not in FINISHED]
                raise DaemonStopped(
                    f"the Dagster daemon stopped with {len(unsettled)} run(s) unfinished: "
                    f"{', '.join(unsettled[:8])}{' ...' if len(unsettled) > 8 else ''}; run the plan again"
                )
            # every submitted run settled and every stage started or skipped: the plan is over (a stage
            # not started yet has settled predecessors, so the next pass starts or skips it)
            if all(s.status in FINISHED for s in every) and len(slots) + len(skipped) == len(stages):
                break
            renew()
            create_ahead()
            time.sleep(POLL_SEC)
    failed = {
        slot.label: slot.runs
        for group in slots.values()
        for slot in group
        if slot.status != DagsterRunStatus.SUCCESS
    }
    return PlanResult(
        plan_id=plan_id,
        runs=len(run_slot),
        succeeded=[
            s.label for group in slots.values() for s in group if s.status == DagsterRunStatus.SUCCESS
        ],
        failed=failed,
        skipped=[s.name for s in stages if s.name not in slots],
        materializations=sum(s.materializations for group in slots.values() for s in group),
    )


@contextmanager
def _canceling_ahead(ahead: dict[str, _Ahead], cancel: Callable[[str, str], None]) -> Iterator[None]:
    """Cancel the runs still created ahead when the plan stops early (an error, the daemon gone,
    Ctrl-C): nothing would ever submit them."""
    try:
        yield
    finally:
        for name in list(ahead):
            with contextlib.suppress(Exception):  # keep the plan's own error
                cancel(name, "the plan stopped before this stage could start")


def _counts(slots: list[_Slot], stages: int, skipped: int) -> dict[str, int]:
    status = [s.status for s in slots]
    return {
        "done": sum(s == DagsterRunStatus.SUCCESS for s in status),
        "failed": sum(s in (DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED) for s in status),
        "queued": sum(s in (DagsterRunStatus.QUEUED, DagsterRunStatus.NOT_STARTED) for s in status),
        "running": sum(s in (DagsterRunStatus.STARTING, DagsterRunStatus.STARTED) for s in status),
        "known": len(slots),
        "stages": stages,
        "skipped_stages": skipped,
        "materializations": sum(s.materializations for s in slots),
    }


def runs_of_plan(instance: DagsterInstance, plan_id: str) -> list[DagsterRun]:
    """Every run a plan submitted (newest first)."""
    return list(instance.get_runs(filters=RunsFilter(tags={PLAN_TAG: plan_id})))
