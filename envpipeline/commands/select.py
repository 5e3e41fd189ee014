"""`envpipeline select`: Envs-FORGE action selection from seed pass rates (a JSONL file or the lake)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from envpipeline.commands.common import FiniteFloatRange, home_option, resolve_home
from envpipeline.errors import ConfigError

if TYPE_CHECKING:
    from envpipeline.models.selection import SelectionTrace

DECISION_FIELDS = ("seed_id", "projection", "direction", "projected_pass_rate", "frontier_score", "backend")


def read_pass_rates(path: Path) -> list:
    """Rows {"seed_id", "pass_rate", "required_skills"?, "optional_skills"?, ...}; errors name the line."""
    from envpipeline.models.selection import SeedPassRate
    from envpipeline.textfiles import read_text_file

    rows = []
    try:
        lines = read_text_file(path, "the pass-rates table").splitlines()
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e}") from e
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            payload = json.loads(line)
        except json.JSONDecodeError as e:
            raise ConfigError(f"{path}:{number}: not JSON ({e.msg})") from e
        if not isinstance(payload, dict):
            raise ConfigError(f"{path}:{number}: expected a JSON object, got {type(payload).__name__}")
        try:
            rows.append(SeedPassRate.model_validate(payload))
        except ValidationError as e:
            problems = "; ".join(
                f"{'.'.join(map(str, err['loc'])) or 'row'}: {err['msg']}" for err in e.errors()
            )
            raise ConfigError(f"{path}:{number}: bad row ({problems})") from e
    if not rows:
        raise ConfigError(f"{path}: no rows")
    return rows


def stored_pass_rates(home: Path) -> list:
    """The pass rates the default job estimated, from the lake under `home`."""
    from envpipeline.forge.passrates import pass_rates_from_rows
    from envpipeline.store.lake import Lake

    lake = Lake(home)
    rows = pass_rates_from_rows(lake.read("seed_pass_rates"))
    if not rows:
        raise ConfigError(
            f"no seed pass rates in the lake at {lake.root}: pass --pass-rates FILE, "
            "or run `envpipeline run` first"
        )
    return rows


@click.command("select")
@click.option(
    "--pass-rates",
    "pass_rates",
    default=None,
    type=click.Path(dir_okay=False, path_type=Path),
    help="JSONL rows {seed_id, pass_rate, required_skills?, optional_skills?}. "
    "Default: the seed_pass_rates the default job stored under --home.",
)
@click.option(
    "--mode",
    type=click.Choice(["local", "portfolio"]),
    default="local",
    show_default=True,
    help="local: one action per seed; portfolio: N actions, at most one per seed.",
)
@click.option(
    "--target", type=click.IntRange(min=1), default=None, help="Portfolio size N (default: all seeds)."
)
@click.option(
    "--backend", type=click.Choice(["scip", "enumerate", "greedy"]), default="scip", show_default=True
)
@click.option(
    "--time-limit",
    type=FiniteFloatRange(min=0.01),
    default=None,
    help="Hard wall-clock limit of the SCIP solve, seconds. Default: scaled to the instance, "
    "10 s + 0.5 s per 1,000 candidates, at most 600 s (SelectorConfig.time_limit_base / _per_1k / _max).",
)
@home_option
@click.option("--json", "as_json", is_flag=True, help='Print {"decisions": [...], "trace": {...}}.')
def select_command(
    pass_rates: Path | None,
    mode: str,
    target: int | None,
    backend: str,
    time_limit: float | None,
    home: Path | None,
    as_json: bool,
) -> None:
    """Choose a synthesis action (projection x direction) per seed with the Envs-FORGE MILP."""
    from envpipeline.select.selector import select_actions

    rows = read_pass_rates(pass_rates) if pass_rates else stored_pass_rates(resolve_home(home))
    decisions, trace = select_actions(
        rows,
        mode=mode,
        target=target,
        backend=backend,
        time_limit=time_limit,
    )
    if as_json:
        payload = {
            "decisions": [d.model_dump(mode="json") for d in decisions],
            "trace": trace.model_dump(mode="json"),
        }
        click.echo(json.dumps(payload, indent=2, sort_keys=True))
        _solve_summary(trace)
        return
    table = Table(title=f"{len(decisions)} decisions ({trace.formulation}, {trace.backend})")
    for name in DECISION_FIELDS:
        table.add_column(name, justify="right" if "rate" in name or "score" in name else "left")
    for d in decisions:
        table.add_row(
            d.seed_id,
            d.projection,
            d.direction,
            f"{d.projected_pass_rate:.3f}",
            f"{d.frontier_score:.4f}",
            d.backend,
        )
    out = Console()
    if not out.is_terminal:
        out = Console(width=160)
    out.print(table)
    summary = trace.model_dump(mode="json", exclude={"selected_actions", "ineligible"})
    click.echo(json.dumps(summary, indent=2, sort_keys=True))
    _solve_summary(trace)


def _solve_summary(trace: SelectionTrace) -> None:
    """The SCIP solve and any fallback, on stderr (also beside --json)."""
    err = Console(stderr=True)
    if trace.solver:
        r = trace.solver
        err.print(
            f"SCIP: {r.status} in {r.seconds:.2f} s (limit {r.time_limit:g} s, {r.time_limit_source}"
            f"{', hit' if r.time_limit_hit else ''}; proof: {r.proof or '-'}; core "
            f"{r.core_candidates if r.core_candidates is not None else r.candidates} of {r.candidates} candidates)",
            highlight=False,
            soft_wrap=True,
        )
    if trace.fallback_reason:
        err.print(f"[yellow]fallback:[/] {escape(trace.fallback_reason)}", highlight=False, soft_wrap=True)
