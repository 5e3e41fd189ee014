"""What the agent phase may not change: the programs, libraries and Python start-up the verifier runs.

The verifier phase runs ``test.sh`` in the session the agent used (as Harbor does), so a file the
agent left can run inside the verifier without touching ``/tests`` or ``/logs/verifier``:

- a Python start-up hook: ``usercustomize.py`` in the user site folder under ``$HOME`` (writable
  by the sandbox user on both backends), ``sitecustomize.py`` or a ``.pth`` file -- ``site`` runs
  them before the test's first line;
- a module named like a standard-library one (``json.py``, ``csv/__init__.py``) in a folder a
  verifier's Python puts first on ``sys.path``: its working directory ``/app`` (``python -m`` and
  ``python -c`` add it), ``$HOME`` (``/tmp`` locally, ``/root`` on Docker), or the user site;
- a file directly in ``/`` (a ``conftest.py`` or ``pytest.ini`` above ``/tests``), or a folder the
  sandbox user may enter but not list (it would hide its files from this probe);
- a changed program or library (``/usr/bin``, ``/usr/lib``, ``/lib``..., ``/etc/ld.so.*``,
  ``/etc/python*``), or a program in ``/usr/local/bin`` that shadows one of the same name later on
  ``PATH`` (``/usr/local/bin/python3``), all writable by root in a Docker container.

`changed_runtime_files` lists such files whose inode changed (ctime) after the agent phase began:
ctime cannot be set back by a process in the sandbox, so ``touch -d`` does not hide a file.
Read-only mounts are not walked (nothing on them can have changed: the local backend's host
``/usr`` and ``/etc``), which keeps the probe to about a second. The probe runs with every agent process already dead, and every file it prints is evidence (the
patterns select only files that change what the verifier runs), so flooding ``/app`` with files
cannot push one out of the listing. A trial with such a file is ``tampered``.

Sources: Python's start-up sequence is documented in the ``site`` module
(https://docs.python.org/3/library/site.html) and ``sys.path`` initialisation
(https://docs.python.org/3/library/sys_path_init.html); GNU find's ``-newerct @SECONDS`` compares a
file's status-change time with a literal time (findutils manual, "-newerXY").
"""

from __future__ import annotations

import shlex
import sys

from envpipeline.sandbox.base import SandboxSession
from envpipeline.sandbox.checked import checked_exec

#: Python files run at interpreter start-up from any site folder.
STARTUP_HOOKS = ("sitecustomize.py", "usercustomize.py", "*.pth")
#: Programs and libraries the verifier runs (any file changed under them is tampering).
TOOLCHAIN = (
    "/usr/bin/*",
    "/bin/*",
    "/usr/sbin/*",
    "/sbin/*",
    "/usr/lib/*",
    "/usr/lib64/*",
    "/lib/*",
    "/lib64/*",
    "/usr/local/lib/*",
    "/etc/ld.so.*",
    "/etc/python*",
)
#: Test runners (and what they import) a verifier commonly starts with ``python -m`` from /app.
TEST_RUNNER_MODULES = ("pytest", "_pytest", "pluggy", "iniconfig", "py")
#: Folders a verifier's Python may search before the standard library: its working directory
#: and both sandbox users' homes.
FIRST_ON_PATH = ("/app", "/tmp", "/root")
#: PATH folders searched before the system's own programs.
EARLY_PATH = ("/usr/local/bin", "/usr/local/sbin")
#: Folders the probe does not enter (kernel views, and what the verifier phase replaces anyway).
SKIPPED = ("/proc", "/sys", "/dev", "/tests", "/logs", "/solution")
#: Most files listed (each one is already evidence).
MAX_LISTED = 50
#: Seconds the probe may take.
PROBE_TIMEOUT_SEC = 120.0


def _or(tests: list[str]) -> str:
    return "\\( " + " -o ".join(tests) + " \\)"


def stdlib_shadow_test() -> str:
    """A find test matching a standard-library (or test runner) module or package in a
    `FIRST_ON_PATH` folder (names from this interpreter's ``sys.stdlib_module_names``; find's
    default emacs regex syntax, and every name is ``[A-Za-z0-9_]``)."""
    names = sorted({n for n in sys.stdlib_module_names if not n.startswith("_")} | set(TEST_RUNNER_MODULES))
    folders = "\\|".join(f.lstrip("/") for f in FIRST_ON_PATH)
    modules = "\\|".join(names)
    return f"-regex '/\\({folders}\\)/\\({modules}\\)\\(\\.py\\|/__init__\\.py\\)'"


#: Sets "$@" to extra find prune tests: every read-only mount but / (from /proc/self/mounts; a
#: file there cannot have changed, and the local backend's host /usr and /etc are such mounts).
READ_ONLY_MOUNTS = (
    "set --; for m in $(awk '$2 != \"/\" && $4 ~ /(^|,)ro(,|$)/ {print $2}' /proc/self/mounts); "
    'do set -- "$@" -o -path "$m"; done; '
)


def probe_script(since: str) -> str:
    """The shell probe: NUL-separated paths changed after `since` (epoch seconds) that change what
    the verifier runs."""
    skipped = "\\( " + " -o ".join(f"-path {p}" for p in SKIPPED) + ' "$@" \\)'
    always = [f"-name {shlex.quote(h)}" for h in STARTUP_HOOKS]
    always += [f"-path {shlex.quote(p)}" for p in TOOLCHAIN]
    always += ["-path '*/.local/lib/python*'", stdlib_shadow_test()]
    always += ["-regex '/[^/]*'"]  # a file directly in / (a conftest.py or pytest.ini above /tests)
    shadow = (
        "-exec sh -c 'for f; do n=${f##*/}; for d in /usr/sbin /usr/bin /sbin /bin; do "
        'if [ -e "$d/$n" ]; then printf "%s\\0" "$f"; break; fi; done; done\' shadow {} +'
    )
    changed = f"-newerct @{since}"
    # the name tests come first, so find stats only the files they select; a folder the sandbox
    # user can enter but not list would hide its files from this probe
    evidence = f"\\( \\( ! -type d {_or(always)} {changed} \\) -o \\( -type d {changed} ! -readable \\) \\)"
    early_dirs = " ".join(EARLY_PATH)
    return (
        READ_ONLY_MOUNTS
        + f"find / {skipped} -prune -o {evidence} -print0 2>/dev/null | head -z -n {MAX_LISTED}; "
        f"find {early_dirs} ! -type d {changed} {shadow} 2>/dev/null | head -z -n {MAX_LISTED}; true"
    )


def session_clock(session: SandboxSession) -> str:
    """The sandbox's current time in epoch seconds (with nanoseconds), read inside the session (a
    lost reading would switch the guard off: it is a checked probe)."""
    return checked_exec(session, "date +%s.%N", timeout_sec=30).stdout.strip()


def changed_runtime_files(session: SandboxSession, since: str) -> list[str]:
    """Files changed after `since` (see `session_clock`) that change what the verifier runs."""
    if not since.replace(".", "", 1).isdigit():
        return []
    listing = checked_exec(session, probe_script(since), timeout_sec=PROBE_TIMEOUT_SEC)
    found = {p for p in listing.stdout.split("\0") if p.startswith("/")}
    return sorted(found)[:MAX_LISTED]
