"""A run whose process was killed while STARTED is marked failed at the next start of the job."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from dagster import DagsterInstance, DagsterRunStatus

from assets.daemon_control import fail_orphaned_runs
from assets.run_tags import OWNER_TAG

REPO = Path(__file__).resolve().parents[2]

#: Runs a one-op job that sleeps, tagged like the default job's runs, on the instance in argv[1].
SLEEPER = """
import sys, time
from dagster import DagsterInstance, job, op
from assets.run_tags import OWNER_TAG
from envpipeline.sandbox.ownership import owner

@op
def sleep_long():
    print("started", flush=True)
    time.sleep(600)

@job
def sleeper():
    sleep_long()

with DagsterInstance.from_config(sys.argv[1]) as instance:
    sleeper.execute_in_process(instance=instance, tags={OWNER_TAG: owner()})
"""


def test_a_killed_runs_status_becomes_failure_and_a_live_ones_stays(tmp_path):
    home = tmp_path / "dagster_home"
    home.mkdir()
    env = {**os.environ, "PYTHONPATH": str(REPO), "DAGSTER_HOME": str(home)}
    proc = subprocess.Popen(
        [sys.executable, "-c", SLEEPER, str(home)], env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 120
        while "started" not in proc.stdout.readline() and time.monotonic() < deadline:
            pass
        with DagsterInstance.from_config(str(home)) as instance:
            (run,) = instance.get_runs()
            assert run.status == DagsterRunStatus.STARTED
            assert fail_orphaned_runs(instance) == {}, "the run's process is alive: it is left alone"
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            assert instance.get_run_by_id(run.run_id).status == DagsterRunStatus.STARTED
            assert list(fail_orphaned_runs(instance)) == [run.run_id]
            assert instance.get_run_by_id(run.run_id).status == DagsterRunStatus.FAILURE
            assert run.tags[OWNER_TAG].endswith(f":{proc.pid}")
    finally:
        proc.kill()


def test_a_run_a_killed_plan_created_ahead_is_canceled_and_holds_nothing_back(tmp_path):
    """A plan creates the runs of its later stages ahead (NOT_STARTED) and submits them when their
    stage starts; killed before that, it leaves them behind: they must not hold back the sensors
    and the freshness automation forever, and the next plan's start cancels them."""
    from dagster import job, op

    from assets.plan_lease import plan_in_progress
    from assets.run_tags import PLAN_TAG

    @op
    def nothing() -> None:
        pass

    @job
    def later_stage() -> None:
        nothing()

    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead_plan = f"{os.uname().nodename}:{int(gone.stdout)}"
    with DagsterInstance.ephemeral(tempdir=str(tmp_path)) as instance:
        run = instance.create_run_for_job(later_stage, tags={PLAN_TAG: "killed", OWNER_TAG: dead_plan})
        assert run.status == DagsterRunStatus.NOT_STARTED
        assert not plan_in_progress(instance), "a run nothing will submit holds nothing back"
        assert list(fail_orphaned_runs(instance)) == [run.run_id]
        left = instance.get_run_by_id(run.run_id)
        assert left is not None and left.status == DagsterRunStatus.CANCELED  # it never ran: not failed
