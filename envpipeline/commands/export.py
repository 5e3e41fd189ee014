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
@home_option
@click.option("--json", "as_json", is_flag=True, help="Print what was written as JSON.")
def export_command(fmt: str, out: Path, home: Path | None, as_json: bool) -> None:
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
        written = export_harbor(harbor_items(lake), out / "harbor" if fmt == "all" else out)
        summary["harbor"] = {"tasks": len(written), "out": str(out)}
    if as_json:
        click.echo(json.dumps(summary, indent=2, sort_keys=True, default=str))
    else:
        click.echo(f"exported {fmt} to {out}")
