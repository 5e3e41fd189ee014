"""A run whose process was killed while STARTED is marked failed at the next start of the job."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from dagster import DagsterInstance, DagsterRunStatus

from assets.launch import OWNER_TAG, fail_orphaned_runs

REPO = Path(__file__).resolve().parents[2]

#: Runs a one-op job that sleeps, tagged like the default job's runs, on the instance in argv[1].
SLEEPER = """
import sys, time
from dagster import DagsterInstance, job, op
from assets.launch import OWNER_TAG
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
