"""`envpipeline redteam`: run the red-team suite over the accepted tasks of a store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from envpipeline.commands.common import home_option, progress, resolve_home
from envpipeline.errors import ConfigError

#: where each family's judged tasks live in the lake
FAMILY_TABLES = {"compose": "verified_composed_tasks"}


def suite_report(records: list[Any]) -> dict[str, Any]:
    """Per policy: accepted tasks attacked, tasks broken, mean checklist credit; plus stored rejections."""
    from envpipeline.redteam.compose import red_team
    from envpipeline.redteam.summary import red_team_summary

    accepted = [r for r in records if r.status == "accepted"]
    per_policy: dict[str, dict[str, float]] = {}
    broken: list[str] = []
    with progress() as bar:
        task = bar.add_task("red team", total=len(accepted))
        for record in accepted:
            outcomes = red_team(record)
            for outcome in outcomes:
                entry = per_policy.setdefault(outcome.policy, {"attacked": 0, "broke": 0, "checklist": 0.0})
                entry["attacked"] += 1
                entry["broke"] += int(outcome.broke)
                entry["checklist"] += outcome.checklist
            if any(o.broke for o in outcomes):
                broken.append(record.task_id)
            bar.advance(task)
    for entry in per_policy.values():
        entry["mean_checklist"] = round(entry.pop("checklist") / entry["attacked"], 4)
    return {
        "accepted_tasks": len(accepted),
        "policies": dict(sorted(per_policy.items())),
        "broken_accepted_tasks": broken,
        "candidates": red_team_summary(records),
    }


@click.command("redteam")
@click.option(
    "--family",
    type=click.Choice(["compose", "world", "terminal"]),
    default="compose",
    show_default=True,
    help="Which family's accepted tasks to attack.",
)
@click.option(
    "--tasks", "limit", type=click.IntRange(min=1), default=None, help="Attack at most N accepted tasks."
)
@home_option
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def redteam_command(family: str, limit: int | None, home: Path | None, as_json: bool) -> None:
    """Run every red-team policy on a store's accepted tasks; exit 1 if any policy breaks one."""
    from envpipeline.store.lake import Lake
    from envpipeline.store.records import row_to_task

    if family == "world":
        from envpipeline.redteam.world_report import world_records, world_suite_report

        root, world_tasks = world_records(resolve_home(home))
        _show(world_suite_report(world_tasks, root, limit), family, as_json)
        return
    if family not in FAMILY_TABLES:
        raise ConfigError(
            f"the red-team suite attacks {', '.join(FAMILY_TABLES)} tasks so far; {family} is not covered yet"
        )
    lake = Lake(resolve_home(home))
    table = FAMILY_TABLES[family]
    if table not in lake.assets():
        raise ConfigError(
            f"no {table} in the lake at {lake.root}: run `envpipeline run` or `envpipeline compose` first"
        )
    records = [row_to_task(r) for r in lake.read(table)]
    accepted = [r for r in records if r.status == "accepted"][:limit]
    report = suite_report(accepted + [r for r in records if r.status != "accepted"])
    _show(report, family, as_json)


def _show(report: dict[str, Any], family: str, as_json: bool) -> None:
    """Print the report (a table, or JSON); exit 1 if any policy broke an accepted task."""
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
