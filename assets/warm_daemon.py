"""``python -m assets.warm_daemon run -w WORKSPACE``: ``dagster-daemon run``, with the warm run
launcher's fork server started at once.

`assets.warm_launcher` starts its fork server (which imports the project and builds the service
library: about 6 s of CPU) when the daemon launches its first run, so the first runs of a plan
wait for it. Started here while the daemon starts, the server is ready by then. This happens when
the workspace file has a single ``python_module`` code location (this project's
``workspace.yaml``) and the instance's run launcher is the warm one; otherwise this is
``dagster-daemon`` unchanged.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import yaml


def workspace_module(workspace_file: Path) -> tuple[str, str] | None:
    """(module, working directory) of the workspace's only code location, when it is a module."""
    try:
        entries = (yaml.safe_load(workspace_file.read_text()) or {}).get("load_from") or []
    except (OSError, yaml.YAMLError):
        return None
    if len(entries) != 1 or not isinstance(entries[0], dict) or "python_module" not in entries[0]:
        return None
    entry = entries[0]["python_module"]
    module = entry.get("module_name") if isinstance(entry, dict) else entry
    if not isinstance(module, str):
        return None
    # resolved as Dagster resolves it: against the current directory (the daemon's)
    folder = entry.get("working_directory") if isinstance(entry, dict) else None
    return module, os.path.abspath(folder) if isinstance(folder, str) else os.getcwd()


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


def start_early(argv: list[str]) -> threading.Thread | None:
    """Start the fork server in a thread for `argv`'s workspace; the thread, or None."""
    workspace = _workspace_argument(argv)
    target = workspace_module(workspace) if workspace is not None else None
    if target is None or not _warm_launcher_configured():
        return None
    from assets.warm_launcher import start_fork_server

    thread = threading.Thread(target=start_fork_server, args=target, name="warm-fork-server", daemon=True)
    thread.start()
    return thread


def main(argv: list[str] | None = None) -> None:
    from dagster._daemon.cli import cli

    args = list(sys.argv[1:] if argv is None else argv)
    start_early(args)
    cli.main(args=args, prog_name="dagster-daemon")


if __name__ == "__main__":
    main()
