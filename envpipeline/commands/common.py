"""What every command shares: the data-folder option (the one place $ENVPIPELINE_HOME is read), JSON output, progress."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

#: Status and errors go to stderr so that --json output on stdout stays parseable.
console = Console(stderr=True)
HOME_ENV = "ENVPIPELINE_HOME"


def resolve_home(home: Path | None) -> Path:
    """The data folder: the --home option, else $ENVPIPELINE_HOME, else ./data (absolute)."""
    return (home or Path(os.environ.get(HOME_ENV, "data"))).resolve()


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
    """A transient progress bar on stderr."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )
