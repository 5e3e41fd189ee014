"""`envpipeline export`: datasets and Harbor directories that trainers load directly."""

from __future__ import annotations

import json
from pathlib import Path

import click

from envpipeline.commands.common import WritableFolder, home_option, resolve_home
from envpipeline.export.formats import export_formats

FORMATS = (*export_formats(), "harbor", "all")


@click.command("export")
@click.option("--format", "fmt", type=click.Choice(FORMATS), required=True, help="Output format.")
@click.option("--out", type=WritableFolder(), required=True, help="Output folder.")
@click.option(
    "--harbor-mode",
    type=click.Choice(["offline", "portable"]),
    default="offline",
    show_default=True,
    help="Harbor images: offline = FROM the local base image (make base-image), for machines "
    "without a registry; portable = FROM python:3.11-slim with pinned pip installs and a tools "
    "container, for any Harbor that can pull from Docker Hub and PyPI.",
)
@home_option
@click.option("--json", "as_json", is_flag=True, help="Print what was written as JSON.")
def export_command(fmt: str, out: Path, harbor_mode: str, home: Path | None, as_json: bool) -> None:
    """Export every accepted task of the store (run `envpipeline run` first)."""
    from envpipeline.export.collect import collect_accepted, harbor_items
    from envpipeline.export.harbor import export_harbor
    from envpipeline.export.unified import ExportError
    from envpipeline.export.writers import ROW_FORMATS, write_all
    from envpipeline.store.lake import Lake

    lake = Lake(resolve_home(home))
    summary: dict = {}
    if fmt != "harbor":
        tasks = collect_accepted(lake)
        if not tasks:
            raise ExportError(f"no accepted tasks in {lake.home}; run `envpipeline run` first")
        summary["datasets"] = write_all(tasks, out, formats=ROW_FORMATS if fmt == "all" else (fmt,))
    if fmt in ("harbor", "all"):
        mode = "portable" if harbor_mode == "portable" else "offline"
        written = export_harbor(harbor_items(lake), out / "harbor" if fmt == "all" else out, mode=mode)
        summary["harbor"] = {"tasks": len(written), "out": str(out), "mode": mode}
    if as_json:
        click.echo(json.dumps(summary, indent=2, sort_keys=True, default=str))
    else:
        click.echo(f"exported {fmt} to {out}")
