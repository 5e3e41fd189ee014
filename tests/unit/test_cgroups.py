"""Session cgroups: memory and processes limited for a whole session, and sessions kept apart."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid

import pytest

from envpipeline.sandbox.base import Limits
from envpipeline.sandbox.cgroups import SessionCgroup

#: Four children, each touching 300 MB and holding it for two seconds, so that the four overlap
#: however the machine schedules them (without the hold, a loaded machine could run them one
#: after another, each freeing its 300 MB before the next touched its own, and all four fit).
FOUR_ALLOCATIONS = """
import os, time
kids = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        block = bytearray(300 * 2**20)
        for i in range(0, len(block), 4096):
            block[i] = 1
        time.sleep(2)
        os._exit(0)
    kids.append(pid)
print(sum(os.waitstatus_to_exitcode(os.waitpid(k, 0)[1]) == 0 for k in kids))
"""
FORK_40 = "for i in $(seq 40); do sleep 1 & done; wait"


@pytest.fixture
def make_group():
    made: list[SessionCgroup] = []

    def make(limits: Limits) -> SessionCgroup:
        group = SessionCgroup.create(f"test-{uuid.uuid4().hex[:8]}", limits)
        if group is None:
            pytest.skip("no writable cgroup hierarchy with memory and pids here (needs root)")
        made.append(group)
        return group

    yield make
    for group in made:
        group.remove()
        assert not any(folder.exists() for folder in group.folders)


def test_memory_is_limited_for_the_whole_session_not_per_process(make_group):
    group = make_group(Limits(memory_mb=512, pids=64))
    done = subprocess.run(
        [sys.executable, "-c", FOUR_ALLOCATIONS], preexec_fn=group.join_self, capture_output=True, text=True
    )
    finished = int(done.stdout.strip())
    assert finished < 4, "4 x 300 MB must not all fit in a 512 MB session"
    assert group.oom_killed()
    peak = group.memory_peak_mb()
    assert peak is None or peak <= 512.5


def test_processes_are_limited_per_session_and_one_session_cannot_starve_another(make_group):
    hostile = make_group(Limits(memory_mb=256, pids=16))
    neighbour = make_group(Limits(memory_mb=256, pids=64))
    flood = subprocess.Popen(
        ["bash", "-c", "while :; do sleep 600 & done"],
        preexec_fn=hostile.join_self,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while len(hostile.pids()) < 16 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(hostile.pids()) >= 16, "the flood filled its session"
        blocked = subprocess.run(["bash", "-c", FORK_40], preexec_fn=hostile.join_self, capture_output=True)
        assert blocked.returncode != 0, "40 forks in a session of 16 processes"
        fine = subprocess.run(["bash", "-c", FORK_40], preexec_fn=neighbour.join_self, capture_output=True)
        assert fine.returncode == 0, fine.stderr.decode()[-500:]
    finally:
        flood.kill()
        hostile.remove()


def test_remove_kills_what_is_left(make_group):
    group = make_group(Limits(memory_mb=128, pids=16))
    sleeper = subprocess.Popen(["sleep", "600"], preexec_fn=group.join_self)
    assert sleeper.pid in group.pids()
    group.remove()
    assert sleeper.wait(timeout=10) == -9


def test_a_local_session_limits_memory_as_a_whole_and_keeps_neighbours_apart(local_sandbox, tmp_path):
    """The probes of issue 12: 4 x 300 MB in a 512 MB session, and a neighbour's process flood."""
    from tests.unit.test_sandbox_contract import make_bundle

    bundle = make_bundle(tmp_path / "task")
    with local_sandbox.open(bundle, Limits(memory_mb=512, pids=32)) as session:
        if session.cgroup() is None:
            pytest.skip("no writable cgroup hierarchy here: rlimits alone apply (documented fallback)")
        done = session.exec(f"python3 -c '{FOUR_ALLOCATIONS}'", 120)
        assert int(done.stdout.strip() or 0) < 4, done
        assert session.cgroup().oom_killed()
        with local_sandbox.open(bundle, Limits(memory_mb=256, pids=64)) as neighbour:
            session.exec("for i in $(seq 200); do sleep 30 & done", 20)  # fills its own 32
            fine = neighbour.exec(FORK_40, 60)
            assert fine.exit_code == 0, fine.stderr[-500:]
