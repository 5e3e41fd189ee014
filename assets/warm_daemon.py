"""``python -m assets.warm_daemon [OPTIONS] run -w WORKSPACE``: ``dagster-daemon run``, with the
warm run launcher's fork server started at once.

`assets.warm_launcher` starts its fork server (which imports the project and builds the service
library: about 6 s of CPU) when the daemon launches its first run, so the first runs of a plan
waited for it. Started here while the daemon starts, the server is ready by then. Options, taken
off before the rest goes to ``dagster-daemon``:

``--fork-server MODULE DIRECTORY``
    the code location module to preload and its working directory; without it, the workspace's
    only location when that is a Python module (this project's ``workspace.yaml``);
``--code-server SOCKET PID``
    wait until the code server on SOCKET (process PID) answers before the daemon loads its
    workspace (a workspace that points at a server the plan just started, `assets.code_server`);
    exit with an error if that process exits first.

Nothing is started early unless the instance's run launcher is the warm one.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

from assets.code_server import wait_until_serving, workspace_location
from envpipeline.quick_exit import freeze_for_exit


def _take_option(argv: list[str], flag: str, values: int) -> list[str] | None:
    """Remove `flag` and its `values` from `argv`; the values, or None when the flag is absent."""
    if flag not in argv:
        return None
    at = argv.index(flag)
    taken = argv[at + 1 : at + 1 + values]
    if len(taken) != values:
        raise SystemExit(f"{flag} takes {values} value(s)")
    del argv[at : at + 1 + values]
    return taken


def _workspace_argument(argv: list[str]) -> Path | None:
    for flag in ("-w", "--workspace"):
        if flag in argv[:-1]:
            return Path(argv[argv.index(flag) + 1]).resolve()
    return None


def _warm_launcher_configured() -> bool:
    from dagster._core.instance.ref import InstanceRef

    if not os.environ.get("DAGSTER_HOME"):
        return False
    launcher = InstanceRef.from_dir(os.environ["DAGSTER_HOME"]).run_launcher_data
    return launcher is not None and launcher.module_name == "assets.warm_launcher"


def fork_server_target(argv: list[str], given: list[str] | None) -> tuple[str, str] | None:
    """(module, working directory) to preload: the one given, else the workspace's module location."""
    if given is not None:
        return given[0], os.path.abspath(given[1])
    workspace = _workspace_argument(argv)
    location = workspace_location(workspace) if workspace is not None else None
    return (location.module, location.working_directory) if location is not None else None


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    fork_server = fork_server_target(args, _take_option(args, "--fork-server", 2))
    code_server = _take_option(args, "--code-server", 2)
    if fork_server is not None and _warm_launcher_configured():
        from assets.warm_launcher import start_fork_server

        threading.Thread(
            target=start_fork_server, args=fork_server, name="warm-fork-server", daemon=True
        ).start()
    from dagster._daemon.cli import cli

    if code_server is not None:
        try:
            wait_until_serving(Path(code_server[0]), pid=int(code_server[1]))
        except RuntimeError as error:
            raise SystemExit(f"dagster-daemon not started: {error}") from None
    cli.main(args=args, prog_name="dagster-daemon")


if __name__ == "__main__":
    try:
        main()
    finally:
        freeze_for_exit()  # stopped: exit without the interpreter's last collections
