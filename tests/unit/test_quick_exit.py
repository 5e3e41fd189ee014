"""A finished command exits without the interpreter's last collections, and nothing else changes.

Each case runs a fresh interpreter: freezing the heap is for a process that is done.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _python(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(cwd)])}
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_command_line_freezes_the_heap_when_done_and_its_exit_handlers_still_run():
    code = textwrap.dedent(
        """
        import atexit, gc, sys
        atexit.register(lambda: print("at exit: frozen", gc.get_freeze_count() > 0))
        from envpipeline.cli import entrypoint
        print("before: frozen", gc.get_freeze_count() > 0)
        sys.argv = ["envpipeline", "services", "list", "--json"]
        entrypoint()
        """
    )
    done = _python("-c", code)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "before: frozen False"
    assert lines[-1] == "at exit: frozen True"  # the atexit handler ran, after the freeze
    assert '"service"' in done.stdout  # the command's own output is all there


def test_a_failing_command_keeps_its_exit_status():
    code = "import sys; sys.argv = ['envpipeline', 'compose', '--tasks', '-3']; from envpipeline.cli import entrypoint; entrypoint()"
    done = _python("-c", code)
    assert done.returncode == 2, (done.stdout, done.stderr)


def test_run_module_runs_a_module_as_main_with_its_arguments_status_and_exit_handlers(tmp_path):
    (tmp_path / "probe_main.py").write_text(
        textwrap.dedent(
            """
            import atexit, gc, sys
            from pathlib import Path

            out = Path(sys.argv[1])
            atexit.register(lambda: out.write_text(f"{__name__} {sys.argv[2:]} frozen={gc.get_freeze_count() > 0}"))
            sys.exit(int(sys.argv[2]))
            """
        )
    )
    out = tmp_path / "out.txt"
    done = _python("-m", "envpipeline.quick_exit", "probe_main", str(out), "3", "x", cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    assert out.read_text() == "__main__ ['3', 'x'] frozen=True"


def test_run_module_names_a_module_that_is_not_there():
    done = _python("-m", "envpipeline.quick_exit", "no_such_module_here")
    assert done.returncode != 0
    assert "No module named no_such_module_here" in done.stderr
