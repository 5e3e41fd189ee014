"""`envpipeline redteam`: run the red-team suite over the accepted tasks of a store.

Each family plugs in a suite runner (`FAMILY_SUITES`: family -> (lake table, runner)); a runner
re-attacks the family's accepted tasks with every policy that attacks it and returns one report
shape: accepted tasks attacked, per policy how many it broke and its mean credit, the broken
accepted tasks, and the rejections the stored red-team gate made among all candidates.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from envpipeline.commands.common import home_option, progress, resolve_home
from envpipeline.errors import ConfigError
from envpipeline.store.lake import Lake

#: A family's suite: (lake, at most N accepted tasks, sandbox backend or None) -> report
SuiteRunner = Callable[[Lake, int | None, str | None], dict[str, Any]]


def _per_policy(attacks: Iterable[tuple[str, list[Any]]], total: int) -> dict[str, Any]:
    """Fold (task id, outcomes) pairs into the report's policies and broken tasks, with a progress bar."""
    from envpipeline.redteam.summary import fold_outcomes

    with progress() as bar:
        task = bar.add_task("red team", total=total)

        def advancing() -> Iterable[tuple[str, list[Any]]]:
            for pair in attacks:
                yield pair
                bar.advance(task)

        return fold_outcomes(advancing())


def suite_report(records: list[Any]) -> dict[str, Any]:
    """Per policy: accepted tasks attacked, tasks broken, mean checklist credit; plus stored rejections."""
    from envpipeline.redteam.compose import red_team
    from envpipeline.redteam.summary import red_team_summary

    accepted = [r for r in records if r.status == "accepted"]
    folded = _per_policy(((r.task_id, red_team(r)) for r in accepted), len(accepted))
    return {"accepted_tasks": len(accepted), **folded, "candidates": red_team_summary(records)}


def compose_suite(lake: Lake, limit: int | None, backend: str | None) -> dict[str, Any]:
    """The composed tasks of ``verified_composed_tasks``."""
    from envpipeline.store.records import row_to_task

    records = [row_to_task(r) for r in lake.read("verified_composed_tasks")]
    accepted = [r for r in records if r.status == "accepted"][:limit]
    return suite_report(accepted + [r for r in records if r.status != "accepted"])


def verified_terminal_rows(lake: Lake) -> list[tuple[str, str, bool, dict[str, Any]]]:
    """(name, bundle folder, verified, row) of every gold-verified seed and synthesized bundle."""
    assets = lake.assets()
    paths = (
        {r["seed_key"]: r["bundle_path"] for r in lake.read("terminal_seeds")}
        if "terminal_seeds" in assets
        else {}
    )
    rows = [
        (r["seed_key"], paths.get(r["seed_key"], ""), r["status"] == "verified", r)
        for r in (lake.read("seed_verification") if "seed_verification" in assets else [])
    ]
    rows += [
        (Path(r["bundle_path"]).name, r["bundle_path"], bool(r["accepted"]), r)
        for r in (lake.read("verified_bundles") if "verified_bundles" in assets else [])
    ]
    return rows


def terminal_suite(lake: Lake, limit: int | None, backend: str | None) -> dict[str, Any]:
    """The verified bundles of ``seed_verification`` and ``verified_bundles``, attacked in a sandbox."""
    from envpipeline.redteam.summary import stored_outcomes, terminal_red_team_summary
    from envpipeline.redteam.terminal import red_team
    from envpipeline.sandbox.detect import select_sandbox
    from envpipeline.terminal.bundle import read_bundle

    rows = verified_terminal_rows(lake)
    accepted = [
        (name, path) for name, path, verified, _ in rows if verified and path and Path(path).is_dir()
    ][:limit]
    sandbox = select_sandbox(backend)
    attacks = ((name, red_team(read_bundle(path), sandbox)) for name, path in accepted)
    folded = _per_policy(attacks, len(accepted))
    candidates = terminal_red_team_summary((verified, stored_outcomes(row)) for _, _, verified, row in rows)
    return {"accepted_tasks": len(accepted), **folded, "candidates": candidates, "backend": sandbox.backend}


def world_suite(lake: Lake, limit: int | None, backend: str | None) -> dict[str, Any]:
    """The gated world tasks of ``worlds build --home`` (``<home>/worlds/tasks.jsonl``), else of the lake."""
    from envpipeline.redteam.world_report import world_records, world_suite_report

    root, tasks = world_records(lake.home)
    return world_suite_report(tasks, root, limit)


#: family -> (the lake table its judged tasks live in, or None when the runner finds them itself; its runner)
FAMILY_SUITES: dict[str, tuple[str | None, SuiteRunner]] = {
    "compose": ("verified_composed_tasks", compose_suite),
    "terminal": ("seed_verification", terminal_suite),
    "world": (None, world_suite),
}


@click.command("redteam")
@click.option(
    "--family",
    type=click.Choice(sorted(FAMILY_SUITES)),
    default="compose",
    show_default=True,
    help="Which family's accepted tasks to attack.",
)
@click.option(
    "--tasks", "limit", type=click.IntRange(min=1), default=None, help="Attack at most N accepted tasks."
)
@click.option(
    "--sandbox",
    "backend",
    type=click.Choice(["local", "docker"]),
    default=None,
    help="Terminal bundles: sandbox backend (default: $ENVPIPELINE_SANDBOX, else Docker if it answers, else local).",
)
@home_option
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def redteam_command(
    family: str, limit: int | None, backend: str | None, home: Path | None, as_json: bool
) -> None:
    """Run every red-team policy on a store's accepted tasks; exit 1 if any policy breaks one."""
    lake = Lake(resolve_home(home))
    table, runner = FAMILY_SUITES[family]
    if table is not None and table not in lake.assets():
        raise ConfigError(
            f"no {table} in the lake at {lake.root}: run `envpipeline run` (or `envpipeline compose`) first"
        )
    report = runner(lake, limit, backend)
    if as_json:
        click.echo(json.dumps(report, indent=2, sort_keys=True))
    else:
        view = Table(title=f"red team over {report['accepted_tasks']} accepted {family} tasks")
        for column in ("policy", "attacked", "broke", "mean checklist"):
            view.add_column(column, justify="left" if column == "policy" else "right")
        for name, entry in report["policies"].items():
            view.add_row(name, str(entry["attacked"]), str(entry["broke"]), f"{entry['mean_checklist']:.2f}")
        Console().print(view)
        stored = report["candidates"]
        click.echo(
            f"candidates the red-team gate rejected, by policy: {json.dumps(stored['rejected_by_policy'])}"
        )
    if any(entry["broke"] for entry in report["policies"].values()):
        raise SystemExit(1)
