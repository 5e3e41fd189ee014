"""Gather every accepted task of the three families from the store, in one schema."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from envpipeline.export.unified import (
    AcceptedTask,
    from_bundle,
    from_gated_task,
    from_task_record,
    gated_from_lake_rows,
)
from envpipeline.redteam.summary import stored_outcomes
from envpipeline.store.lake import Lake
from envpipeline.store.records import row_to_task


def _rows(lake: Lake, asset: str, where: str) -> list[dict[str, Any]]:
    if asset not in lake.assets():
        return []
    return lake.query(f"SELECT * FROM {asset} WHERE {where}")


def accepted_sources(lake: Lake) -> dict[str, list[Any]]:
    """The accepted items per family: composed TaskRecords, gated world tasks, terminal bundle folders."""
    composed = [row_to_task(r) for r in _rows(lake, "verified_composed_tasks", "status = 'accepted'")]
    composed = sorted({t.task_id: t for t in composed}.values(), key=lambda t: t.task_id)
    worlds = gated_from_lake_rows(_rows(lake, "gated_world_tasks", "status = 'accepted'"))
    seeds = {r["seed_key"] for r in _rows(lake, "seed_verification", "status = 'verified'")}
    bundles = [
        Path(r["bundle_path"]) for r in _rows(lake, "terminal_seeds", "true") if r["seed_key"] in seeds
    ]
    bundles += [Path(r["bundle_path"]) for r in _rows(lake, "verified_bundles", "accepted")]
    return {"compose": composed, "world": worlds, "terminal": sorted(p for p in set(bundles) if p.is_dir())}


def harbor_items(lake: Lake) -> list[Any]:
    """What `export_harbor` takes for every accepted task: records, bundle folders, (world task, day) pairs."""
    sources = accepted_sources(lake)
    days = {(r["persona_id"], r["day"]): Path(r["day_dir"]) for r in _rows(lake, "persona_worlds", "true")}
    worlds = [
        (g, days[(g.task.persona_id, g.task.day)])
        for g in sources["world"]
        if (g.task.persona_id, g.task.day) in days
    ]
    return [*sources["compose"], *sources["terminal"], *worlds]


def terminal_red_team(lake: Lake) -> dict[Path, list[dict[str, Any]]]:
    """The stored red-team outcomes of every verified terminal bundle, by bundle folder."""
    seeds = {r["seed_key"]: Path(r["bundle_path"]) for r in _rows(lake, "terminal_seeds", "true")}
    found: dict[Path, list[dict[str, Any]]] = {}
    for row in _rows(lake, "seed_verification", "status = 'verified'"):
        if row["seed_key"] in seeds:
            found[seeds[row["seed_key"]]] = stored_outcomes(row)
    for row in _rows(lake, "verified_bundles", "accepted"):
        found[Path(row["bundle_path"])] = stored_outcomes(row)
    return found


def collect_accepted(lake: Lake) -> list[AcceptedTask]:
    """Every accepted task of every family as an `AcceptedTask` (compose SFT from the reference run).

    Terminal bundles carry the oracle and nop gates and, when their verification stored it, the
    red_team gate (so the dataset card's Red team section counts them).
    """
    sources = accepted_sources(lake)
    tasks = [from_task_record(t, source="verified_composed_tasks") for t in sources["compose"]]
    # world rows inline their W0 (env_spec) from the day folders persona_worlds recorded
    days = {(r["persona_id"], r["day"]): Path(r["day_dir"]) for r in _rows(lake, "persona_worlds", "true")}
    for g in sources["world"]:
        day_dir = days.get((g.task.persona_id, g.task.day))
        root = day_dir.parent.parent if day_dir is not None and (day_dir / "apps").is_dir() else None
        tasks.append(from_gated_task(g, source="gated_world_tasks", worlds_root=root))
    red_team = terminal_red_team(lake)
    tasks += [
        from_bundle(p, verification={"oracle": True, "nop": True}, red_team=red_team.get(p))
        for p in sources["terminal"]
    ]
    return tasks
