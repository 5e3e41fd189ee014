"""The tags and run statuses by which a plan (`assets.launch`) knows its runs in the instance."""

from __future__ import annotations

from dagster import DagsterRunStatus

#: Tag of every run a plan submits: the plan's id (one per `envpipeline run`).
PLAN_TAG = "envpipeline/plan"
#: Tag of a run executed in a process of ours (``--serial``): that process, ``host:pid``.
OWNER_TAG = "envpipeline/owner"
#: Tag of the plan's stage a run belongs to, and of its attempt (1 = first).
STAGE_TAG = "envpipeline/stage"
ATTEMPT_TAG = "envpipeline/attempt"
#: Statuses of a run that has ended, and of one that may still run.
FINISHED = {DagsterRunStatus.SUCCESS, DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED}
PENDING = [
    DagsterRunStatus.QUEUED,
    DagsterRunStatus.NOT_STARTED,
    DagsterRunStatus.STARTING,
    DagsterRunStatus.STARTED,
]
#: Pending runs that were submitted (a plan creates some runs ahead, NOT_STARTED until submitted).
SUBMITTED = [status for status in PENDING if status != DagsterRunStatus.NOT_STARTED]
