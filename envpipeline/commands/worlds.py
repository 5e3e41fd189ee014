"""`envpipeline worlds ...`: build and gate WildAWM persona worlds, serve one world day."""

from __future__ import annotations

import json
from pathlib import Path

import click

from envpipeline.commands.common import WritableFolder, home_option, resolve_home
from envpipeline.commands.worlds_serve import serve_command


@click.group("worlds")
def worlds_group() -> None:
    """WildAWM persona worlds across GUI, CLI and MCP."""


@worlds_group.command("build")
@click.option("--personas", "n_personas", default=3, show_default=True, type=click.IntRange(min=1))
@click.option("--days", default=5, show_default=True, type=click.IntRange(min=1), help="Days per persona.")
@click.option("--seed", default=0, show_default=True, help="Persona and world seed.")
@click.option("--tasks-per-day", default=3, show_default=True, type=click.IntRange(min=1))
@click.option(
    "--out",
    type=WritableFolder(),
    default=None,
    help="Worlds folder. Default: <home>/worlds, where `worlds serve` looks.",
)
@home_option
@click.option("--no-live", is_flag=True, help="Skip the live-health check (web app + MCP server) per day.")
@click.option(
    "--json", "as_json", is_flag=True, help="Print worlds, tasks, gate results and metrics as JSON."
)
def worlds_build(
    n_personas: int,
    days: int,
    seed: int,
    tasks_per_day: int,
    out: Path | None,
    home: Path | None,
    no_live: bool,
    as_json: bool,
) -> None:
    """Build persona worlds day by day, synthesize cross-interface tasks and gate them."""
    out = out or resolve_home(home, writable=True) / "worlds"  # refused before the heavy imports

    from rich.console import Console

    from envpipeline.worlds.pipeline import build_and_gate

    with Console(stderr=True).status(f"building {n_personas} worlds x {days} days and gating tasks ..."):
        summary = build_and_gate(
            n_personas, days, seed, out, tasks_per_world_day=tasks_per_day, live_health=not no_live
        )
    if as_json:
        click.echo(json.dumps(summary, indent=2, sort_keys=True, default=str))
        return
    tasks = summary["tasks"]
    click.echo(
        f"worlds: {len(summary['worlds'])}; tasks: {tasks['accepted']} accepted of {tasks['candidates']}"
    )
    click.echo(f"interfaces: {', '.join(summary['interfaces_used'])}; difficulty: {summary['difficulty']}")
    div = summary["metrics"]["tasks"]
    click.echo(f"task diversity: Vendi {div['vendi']} entity-masked (raw {div['vendi_raw']}) over {div['n']}")
    click.echo("gates: " + ", ".join(f"{k} {v['passed']}/{v['total']}" for k, v in summary["gates"].items()))
    click.echo(f"written to {out} (tasks.jsonl, summary.json)")


worlds_group.add_command(serve_command)
