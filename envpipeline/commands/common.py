"""What every command shares: the data-folder option (the one place $ENVPIPELINE_HOME is read), JSON output, progress."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from envpipeline.errors import ConfigError

#: Status and errors go to stderr so that --json output on stdout stays parseable.
console = Console(stderr=True)
HOME_ENV = "ENVPIPELINE_HOME"


def resolve_home(home: Path | None, *, writable: bool = False) -> Path:
    """The data folder: the --home option, else $ENVPIPELINE_HOME, else ./data (absolute).

    With `writable`, a folder the command cannot create or write into is a `ConfigError` before
    any work starts (commands that only read a store may use a read-only one).
    """
    folder = (home or Path(os.environ.get(HOME_ENV, "data"))).resolve()
    if writable:
        problem = unwritable_reason(folder)
        if problem is not None:
            raise ConfigError(f"data folder (--home / ${HOME_ENV}) {problem}")
    return folder


def unwritable_reason(folder: Path) -> str | None:
    """Why `folder` cannot be created or written into, or None when it can.

    The folder, or its nearest existing parent when it does not exist yet, must be a folder the
    current user may write into on a writable file system.
    """
    target = folder.absolute()
    probe = target
    while not probe.exists() and not probe.is_symlink() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        what = "is a file" if probe == target else f"is under {probe}, which is a file"
        return f"{target} {what}, not a folder; choose another path"
    if os.access(probe, os.W_OK | os.X_OK):
        return None
    if os.statvfs(probe).f_flag & os.ST_RDONLY:
        return f"{target} is on a read-only file system ({probe}); choose a writable folder"
    return f"{target} cannot be written ({probe}: permission denied); choose a folder you can write to"


def ensure_writable(folder: Path, option: str) -> Path:
    """`folder` unchanged, or a `ConfigError` naming `option` when it cannot be written."""
    problem = unwritable_reason(folder)
    if problem is not None:
        raise ConfigError(f"{option} {problem}")
    return folder


class WritableFolder(click.Path):
    """An output folder: refused at parse time when it cannot be created or written into."""

    name = "folder"

    def __init__(self) -> None:
        super().__init__(file_okay=False, path_type=Path)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """The path, once it is known to be a folder that can be created or written."""
        path = super().convert(value, param, ctx)
        problem = unwritable_reason(Path(os.fsdecode(path)))
        if problem is not None:
            self.fail(problem, param, ctx)
        return path


class FiniteFloatRange(click.FloatRange):
    """A float range that also refuses nan and infinities (click's range lets nan through)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """The number, once it is finite and inside the range."""
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{number} is not a finite number", param, ctx)
        return number


home_option = click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Data folder (lake, catalog, bundles). Default: $ENVPIPELINE_HOME or ./data.",
)


def emit_json(payload: Any) -> None:
    """Print a JSON document on stdout (sorted keys, indented)."""
    click.echo(json.dumps(payload, indent=2, sort_keys=True, default=str))


def progress() -> Progress:
    """A transient progress bar on stderr; off when stderr is not a terminal (a log keeps no bar
    and no blank line, so an error stays the only line there)."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    )
