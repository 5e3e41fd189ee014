"""`envpipeline` command line: run the default job, list services, compose tasks, audit lineage."""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from envpipeline.errors import EnvpipelineError

console = Console(stderr=True)
REPO_ROOT = Path(__file__).resolve().parents[1]


def default_home() -> Path:
    """The data folder: $ENVPIPELINE_HOME or ./data."""
    return Path(os.environ.get("ENVPIPELINE_HOME", "data")).resolve()


home_option = click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Data folder (lake, catalog, bundles). Default: $ENVPIPELINE_HOME or ./data.",
)


def _emit_json(payload: Any) -> None:
    click.echo(json.dumps(payload, indent=2, sort_keys=True, default=str))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="envpipeline")
def main() -> None:
    """envpipeline: verified training environments for LLM agents, as a Dagster asset graph."""


@main.command("run")
@home_option
@click.option("--batches", default=4, show_default=True, help="Composition batches (dynamic partitions).")
@click.option("--candidates-per-batch", default=50, show_default=True, help="Candidates drafted per batch.")
@click.option(
    "--seeds-per-family", default=1, show_default=True, help="Procedural terminal seeds per family."
)
def run_command(home: Path | None, batches: int, candidates_per_batch: int, seeds_per_family: int) -> None:
    """Materialize the whole asset graph offline with Dagster and print a summary."""
    home = (home or default_home()).resolve()
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    try:
        runner = importlib.import_module("assets.default_run")
    except ModuleNotFoundError as e:
        raise click.ClickException(
            f"the Dagster shell (assets/) is not importable from {REPO_ROOT}: {e}. Run from a checkout."
        ) from e
    summary = runner.run_default_job(
        home,
        batches=batches,
        candidates_per_batch=candidates_per_batch,
        seeds_per_family=seeds_per_family,
        console=console,
    )
    _print_summary(summary)


def _print_summary(summary: dict[str, Any]) -> None:
    table = Table(title="envpipeline run")
    table.add_column("asset")
    table.add_column("rows", justify="right")
    for asset, count in summary["asset_rows"].items():
        table.add_row(asset, str(count))
    Console().print(table)
    compose = summary["compose"]
    click.echo(
        f"composed tasks: {compose['accepted']} accepted, {compose['rejected']} rejected "
        f"(acceptance {compose['acceptance_rate']:.0%})"
    )
    for reason, count in compose["top_rejection_reasons"].items():
        click.echo(f"  rejected by {reason}: {count}")
    click.echo(f"gate pass rates: {json.dumps(compose['gate_pass_rates'])}")
    click.echo(
        f"world-model simulated tools: {compose['simulated_tool_share']:.1%} of tools; "
        f"{compose['tasks_touching_simulated_share']:.1%} of accepted tasks call one"
    )
    terminal = summary.get("terminal")
    if terminal:
        click.echo(
            f"terminal seeds: {terminal['verified']}/{terminal['seeds']} gold-verified "
            f"({', '.join(terminal['backends']) or 'no'} sandbox), {terminal['failed']} failed, "
            f"{terminal['quarantined']} quarantined"
        )
        for key, verdict in terminal["failures"].items():
            click.echo(f"  {key}: {verdict}")
    forge = summary.get("forge")
    if forge:
        rate = forge["mean_pass_rate"]
        click.echo(
            f"envs-forge: {forge['seeds_with_pass_rate']} pass rates (mean {rate if rate is None else round(rate, 3)}), "
            f"{forge['decisions']} MILP decisions, {forge['accepted']} synthesized bundles gold-verified "
            f"({forge['rejected']} rejected) -> {forge['export']}"
        )
    worlds = summary.get("worlds")
    if worlds:
        click.echo(
            f"wildawm: {worlds['personas']} personas x {worlds['days'] // max(worlds['personas'], 1)} days "
            f"({worlds['failed_days']} days failing checks), {worlds['accepted_tasks']}/{worlds['candidates']} "
            f"cross-interface tasks gated in ({', '.join(worlds['interfaces'])})"
        )
    datasets = summary.get("datasets")
    if datasets:
        click.echo(
            f"training datasets: {datasets['accepted_tasks']} accepted tasks, splits {datasets['splits']} "
            f"-> {datasets['path']} (verl, verl-sft, trl-sft, trl-rl, skyrl, harbor, README.md card)"
        )
    rollouts = summary.get("rollouts")
    if rollouts:
        click.echo(
            f"rollout groups: {rollouts['groups']} (mean CFRR reward {rollouts['mean_reward']:.3f}, "
            f"full success {rollouts['full_success_rate']:.1%}, zero-signal groups {rollouts['zero_signal']})"
        )
    click.echo(f"lake: {summary['home']}/lake   catalog: {summary['home']}/catalog.duckdb")
    click.echo(
        f"dagster runs: {summary['runs']} (DAGSTER_HOME={summary['dagster_home']}); `make ui` to browse"
    )


@main.group("services")
def services_group() -> None:
    """The CompoWorld service library."""


@services_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print services with tools and schemas as JSON.")
def services_list(as_json: bool) -> None:
    """List services with their tools (and schemas with --json)."""
    from envpipeline.services.registry import all_services

    services = all_services()
    if as_json:
        _emit_json(
            [
                {
                    "name": n,
                    "title": c.title,
                    "domain": c.domain,
                    "tools": [
                        {**t.json_schema(n)["function"], "writes": t.writes, "simulated": t.simulated}
                        for t in c.tools.values()
                    ],
                }
                for n, c in services.items()
            ]
        )
        return
    table = Table(title=f"{len(services)} services, {sum(len(c.tools) for c in services.values())} tools")
    table.add_column("service")
    table.add_column("domain")
    table.add_column("tools", justify="right")
    table.add_column("simulated", justify="right")
    for name, cls in services.items():
        simulated = sum(t.simulated for t in cls.tools.values())
        table.add_row(name, cls.domain, str(len(cls.tools)), str(simulated))
    Console().print(table)


@main.command("compose")
@click.option("--tasks", "n_tasks", type=click.IntRange(min=1), required=True, help="Accepted tasks wanted.")
@click.option("--services", "k", default=5, show_default=True, type=click.IntRange(min=2), help="K services.")
@click.option("--distractors", default=5, show_default=True, type=click.IntRange(min=0), help="Distractors.")
@click.option("--walk-length", type=click.IntRange(min=3), default=None, help="Visits per walk (>= K+1).")
@click.option("--seed", default=0, show_default=True, help="First candidate seed.")
@click.option("--max-attempts", type=click.IntRange(min=1), default=None, help="Budget (default 20 x tasks).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True, help="Output folder.")
@home_option
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary.")
def compose_command(
    n_tasks: int,
    k: int,
    distractors: int,
    walk_length: int | None,
    seed: int,
    max_attempts: int | None,
    out: Path,
    home: Path | None,
    as_json: bool,
) -> None:
    """Compose and verify cross-service tasks until N are accepted or the budget runs out."""
    from envpipeline.compose.author import ComposeConfig
    from envpipeline.compose.pipeline import compose_until
    from envpipeline.compose.recording import record_candidates, record_library, record_verified, summarize
    from envpipeline.store.catalog import refresh_catalog
    from envpipeline.store.lake import Lake

    try:
        config = ComposeConfig(services=k, distractors=distractors, walk_length=walk_length)
    except ValueError as e:
        raise click.BadParameter(str(e)) from e
    budget = max_attempts or 20 * n_tasks
    started = time.perf_counter()
    with _progress() as progress:
        bar = progress.add_task("composing", total=n_tasks)
        result = compose_until(
            n_tasks,
            config,
            range(seed, seed + budget),
            seed_key=f"cli_{seed}",
            on_record=lambda r: progress.advance(bar, int(r.status == "accepted")),
        )
    elapsed = time.perf_counter() - started
    records = result.accepted + result.rejected
    out.mkdir(parents=True, exist_ok=True)
    for name, group in (("accepted", result.accepted), ("rejected", result.rejected)):
        with open(out / f"{name}.jsonl", "w") as handle:
            for record in group:
                line = {**record.model_dump(mode="json"), "services": record.environment["services"]}
                handle.write(json.dumps(line, sort_keys=True) + "\n")
    home = (home or default_home()).resolve()
    lake = Lake(home)
    run_id = f"cli-{uuid.uuid4().hex[:12]}"
    partition = f"cli_s{seed}_k{k}_d{distractors}_n{n_tasks}"
    record_library(lake, run_id)
    fingerprint = record_candidates(lake, partition, records, run_id)
    record_verified(lake, partition, records, fingerprint, run_id)
    refresh_catalog(home)
    summary = {
        **summarize(records),
        "attempts": result.attempts,
        "budget": budget,
        "budget_exhausted": result.budget_exhausted,
        "seconds": round(elapsed, 3),
        "candidates_per_second": round(result.attempts / elapsed, 1) if elapsed else None,
        "accepted_per_second": round(len(result.accepted) / elapsed, 1) if elapsed else None,
        "out": str(out.resolve()),
        "home": str(home),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True))
    if as_json:
        _emit_json(summary)
    else:
        click.echo(
            f"{summary['accepted']} accepted, {summary['rejected']} rejected in {elapsed:.2f}s -> {out}"
        )
    if result.budget_exhausted:
        console.print(f"[yellow]budget of {budget} candidates ran out before {n_tasks} were accepted[/]")
        sys.exit(3)


@main.command("audit")
@click.argument("task_id")
@home_option
@click.option("--json", "as_json", is_flag=True, help="Print the chain as JSON.")
def audit_command(task_id: str, home: Path | None, as_json: bool) -> None:
    """Print the lineage of a task back to its seed, run and code version."""
    from envpipeline.store.audit import audit_task
    from envpipeline.store.lake import Lake

    chain = audit_task(Lake((home or default_home()).resolve()), task_id)
    if as_json:
        _emit_json(chain)
        return
    for depth, hop in enumerate(chain):
        fields = ", ".join(f"{k}={v}" for k, v in hop.items() if k != "asset")
        click.echo(f"{'  ' * depth}{'└─ ' if depth else ''}{hop['asset']}: {fields}")


def _register_groups() -> None:
    from envpipeline.commands.select import select_command
    from envpipeline.commands.terminal import bundle_group, families_group, forge_command

    main.add_command(families_group)
    main.add_command(bundle_group)
    main.add_command(forge_command)
    main.add_command(select_command)
    from envpipeline.commands.export import export_command
    from envpipeline.commands.worlds import worlds_group

    main.add_command(export_command)

    main.add_command(worlds_group)
    from envpipeline.commands.serve_mcp import serve_mcp_command

    main.add_command(serve_mcp_command)


_register_groups()


def _progress() -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )


def entrypoint() -> None:
    """Run the CLI with clean error messages for envpipeline errors."""
    try:
        main(standalone_mode=True)
    except EnvpipelineError as e:
        console.print(f"[red]error:[/] {e}")
        sys.exit(2)


if __name__ == "__main__":
    entrypoint()
