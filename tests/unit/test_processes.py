"""`envpipeline.processes`: a live process, an exited child nobody reaped yet, a gone one."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from envpipeline.processes import process_alive, process_running


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_an_exited_child_not_reaped_yet_is_alive_but_not_running():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    assert process_alive(os.getpid()) and process_running(os.getpid())
    deadline = time.monotonic() + 30
    while process_running(child.pid):  # exits on its own; nobody waits for it yet: a zombie
        assert time.monotonic() < deadline, "the child did not exit"
        time.sleep(0.05)
    assert process_alive(child.pid)  # the zombie keeps its pid
    child.wait()
    assert not process_alive(child.pid) and not process_running(child.pid)
