"""The command line and the Dagster shell run numpy's BLAS on one thread (`envpipeline.blas_threads`):
OpenBLAS's threads spin after every product and take cores from the gating workers and the runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

#: Prints how many threads the loaded OpenBLAS uses (asked through its own C API).
_ASK_OPENBLAS = """
import ctypes, numpy
numpy.ones((300, 300)) @ numpy.ones((300, 300))
path = next(line.split()[-1] for line in open('/proc/self/maps') if 'openblas' in line)
library = ctypes.CDLL(path)
names = ('scipy_openblas_get_num_threads64_', 'openblas_get_num_threads64_', 'openblas_get_num_threads')
print(getattr(library, next(n for n in names if hasattr(library, n)))())
"""


def _openblas_threads(preamble: str, **env: str) -> int:
    environ = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    environ.update(PYTHONPATH=str(REPO), **env)
    done = subprocess.run(
        [sys.executable, "-c", preamble + _ASK_OPENBLAS],
        capture_output=True,
        text=True,
        env=environ,
        cwd=REPO,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return int(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one core: OpenBLAS starts no threads anyway")
def test_the_command_line_and_the_dagster_shell_load_numpy_with_one_blas_thread():
    assert _openblas_threads("") > 1  # numpy alone: a thread per core
    assert _openblas_threads("import envpipeline.cli\n") == 1
    assert _openblas_threads("import assets.definitions\n") == 1
    # a process they start (a gating worker, the daemon, a run) loads its numpy the same way
    child = _openblas_threads(
        "import envpipeline.cli, subprocess, sys\n"
        f"print(subprocess.run([sys.executable, '-c', {_ASK_OPENBLAS!r}], capture_output=True, text=True,"
        " check=True).stdout)\n"
        "raise SystemExit\n"
    )
    assert child == 1


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one core: OpenBLAS starts no threads anyway")
def test_a_blas_thread_count_the_user_set_is_kept():
    assert _openblas_threads("import envpipeline.cli\n", OPENBLAS_NUM_THREADS="2") == 2
