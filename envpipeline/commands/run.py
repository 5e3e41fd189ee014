"""`envpipeline run`: materialize the whole asset graph with Dagster, then print today's summary.

The core never imports the Dagster shell: this command starts the shell's own entry point
(``python -m assets.default_run``) in the project folder — the folder holding ``workspace.yaml``,
as ``dagster dev`` loads it — passing every setting as an argument, and reads the summary the
run writes.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from envpipeline.commands.common import home_option, resolve_home
from envpipeline.errors import ConfigError

SHELL_ENTRY = "assets.default_run"
#: Batch partition keys are batch-0000 ... batch-9999 (four digits keep them sorted).
MAX_BATCHES = 9999


def project_folder(start: Path | None = None) -> Path:
    """The nearest folder (from `start`, else the working directory, upwards) with the Dagster shell.

    Falls back to the checkout this package was installed from (an editable install).
    """
    here = (start or Path.cwd()).resolve()
    candidates = [here, *here.parents, Path(__file__).resolve().parents[2]]
    for folder in candidates:
        if (folder / "workspace.yaml").is_file() and (folder / "assets" / "definitions.py").is_file():
            return folder
    raise ConfigError(
        f"no Dagster project (workspace.yaml + assets/) in {here} or above; run from a checkout of envpipeline"
    )


@click.command("run")
@home_option
@click.option(
    "--batches",
    default=4,
    show_default=True,
    type=click.IntRange(min=1, max=MAX_BATCHES),
    help="Composition batches (dynamic partitions batch-0000 ...).",
)
@click.option(
    "--candidates-per-batch",
    default=50,
    show_default=True,
    type=click.IntRange(min=1),
    help="Candidates drafted per batch.",
)
@click.option(
    "--seeds-per-family",
    default=1,
    show_default=True,
    type=click.IntRange(min=1),
    help="Procedural terminal seeds per family.",
)
@click.option(
    "--retries",
    default=1,
    show_default=True,
    type=click.IntRange(min=0),
    help="Times a failed run is submitted again before its stage counts as failed.",
)
@click.option(
    "--serial",
    is_flag=True,
    help="Run every run in one process, one after another (the old way; no run queue, no daemon).",
)
def run_command(
    home: Path | None,
    batches: int,
    candidates_per_batch: int,
    seeds_per_family: int,
    retries: int,
    serial: bool,
) -> None:
    """Materialize the whole asset graph offline with Dagster and print a summary.

    The runs go through the instance's run queue (DAGSTER_HOME, default <checkout>/dagster_home):
    the daemon (started here when none is running) launches them, independent ones side by side;
    every run shows in the Dagster UI with its partition."""
    folder = project_folder()
    home_folder = resolve_home(home, writable=True)
    with tempfile.TemporaryDirectory(prefix="envpipeline-run-") as scratch:
        summary_path = Path(scratch) / "summary.json"
        command = [
            sys.executable, "-m", SHELL_ENTRY,
            "--home", str(home_folder),
            "--batches", str(batches),
            "--candidates-per-batch", str(candidates_per_batch),
            "--seeds-per-family", str(seeds_per_family),
            "--retries", str(retries),
            "--summary", str(summary_path),
        ] + (["--serial"] if serial else [])  # fmt: skip
        completed = subprocess.run(command, cwd=folder, check=False)
        if completed.returncode != 0 or not summary_path.is_file():
            raise click.ClickException(
                f"the Dagster run failed (exit {completed.returncode}); see the log above"
            )
        summary = json.loads(summary_path.read_text())
    print_summary(summary)
    failed = summary.get("failed_runs") or {}
    if failed:
        raise click.ClickException(
            f"{len(failed)} run(s) or stage(s) failed after retries: {', '.join(sorted(failed))} "
            "(the summary above covers what succeeded)"
        )


def print_summary(summary: dict[str, Any]) -> None:
    """Today's summary: rows per asset, then one paragraph per method."""
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
    red_team = compose.get("red_team", {})
    if red_team:
        click.echo(
            f"red team: {red_team['attacked']} candidates attacked; rejections by policy "
            f"{json.dumps(red_team['rejected_by_policy'])}; accepted tasks a policy still breaks: "
            f"{red_team['accepted_hack_passes']} (hack-pass rate {red_team['accepted_hack_pass_rate']:.1%})"
        )
    click.echo(
        f"world-model simulated tools: {compose['simulated_tool_share']:.1%} of tools; "
        f"{compose['tasks_touching_simulated_share']:.1%} of accepted tasks call one"
    )
    for line in _method_lines(summary):
        click.echo(line)
    click.echo(f"lake: {summary['home']}/lake   catalog: {summary['home']}/catalog.duckdb")
    click.echo(
        f"dagster runs: {summary['runs']} ({summary.get('mode', 'serial')}; "
        f"DAGSTER_HOME={summary['dagster_home']}); `make ui` to browse"
    )


def _method_lines(summary: dict[str, Any]) -> list[str]:
    lines = []
    terminal = summary.get("terminal")
    if terminal:
        lines.append(
            f"terminal seeds: {terminal['verified']}/{terminal['seeds']} gold-verified "
            f"({', '.join(terminal['backends']) or 'no'} sandbox), {terminal['failed']} failed, "
            f"{terminal['quarantined']} quarantined"
        )
        lines += [f"  {key}: {verdict}" for key, verdict in terminal["failures"].items()]
        red_team = terminal.get("red_team")
        if red_team:
            lines.append(
                f"terminal red team: {red_team['attacked']} bundles attacked (seeds and synthesized); "
                f"rejections by policy {json.dumps(red_team['rejected_by_policy'])}; verified bundles a "
                f"policy still breaks: {red_team['accepted_hack_passes']} "
                f"(hack-pass rate {red_team['accepted_hack_pass_rate']:.1%})"
            )
    forge = summary.get("forge")
    if forge:
        rate = forge["mean_pass_rate"]
        spread = forge.get("pass_rate_range")
        span = f", range {spread[0]:.2f}-{spread[1]:.2f}" if spread else ""
        lines.append(
            f"envs-forge: {forge['seeds_with_pass_rate']} pass rates "
            f"(mean {rate if rate is None else round(rate, 3)}{span}), {forge['decisions']} MILP decisions, "
            f"{forge['accepted']} synthesized bundles gold-verified ({forge['rejected']} rejected), "
            f"{forge.get('exported', 0)} exported -> {forge['export']}"
        )
    worlds = summary.get("worlds")
    if worlds:
        lines.append(
            f"wildawm: {worlds['personas']} personas x {worlds['days'] // max(worlds['personas'], 1)} days "
            f"({worlds['failed_days']} days failing checks), {worlds['accepted_tasks']}/{worlds['candidates']} "
            f"cross-interface tasks gated in ({', '.join(worlds['interfaces'])})"
        )
        red = worlds.get("red_team") or {}
        if red:
            lines.append(
                f"  world red team: {red['attacked']} candidates attacked; rejections by policy "
                f"{json.dumps(red['rejected_by_policy'])}; accepted tasks a policy still breaks: "
                f"{red['accepted_hack_passes']} (hack-pass rate {red['accepted_hack_pass_rate']:.1%})"
            )
    datasets = summary.get("datasets")
    if datasets:
        lines.append(
            f"training datasets: {datasets['accepted_tasks']} accepted tasks, splits {datasets['splits']} "
            f"-> {datasets['path']} (verl, verl-sft, trl-sft, trl-rl, skyrl, harbor, README.md card)"
        )
    rollouts = summary.get("rollouts")
    if rollouts:
        lines.append(
            f"rollout groups: {rollouts['groups']} (mean CFRR reward {rollouts['mean_reward']:.3f}, "
            f"full success {rollouts['full_success_rate']:.1%}, zero-signal groups {rollouts['zero_signal']})"
        )
    return lines
