"""The default job: materialize the whole asset graph offline as real Dagster runs, then summarize.

Dynamic partitions cannot share one run, so the graph is materialized as a sequence of runs on
the persistent instance (``DAGSTER_HOME``, default ``<repo>/dagster_home``): the library, one run
per composition batch, then the catalog. Every run shows up in the Dagster UI (`make ui`).

Started by ``envpipeline run`` as ``python -m assets.default_run --home DIR ... --summary FILE``;
the data folder reaches the resources through each run's config, never through the environment.
"""

import argparse
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
#: Tag of every run the default job launches: the launching process (``<host>:<pid>``).
OWNER_TAG = "envpipeline/owner"


def _prepare_instance_home() -> Path:
    dagster_home = Path(os.environ.get("DAGSTER_HOME") or REPO_ROOT / "dagster_home").resolve()
    dagster_home.mkdir(parents=True, exist_ok=True)
    config = dagster_home / "dagster.yaml"
    if not config.exists() and (REPO_ROOT / "dagster.yaml").exists():
        shutil.copy(REPO_ROOT / "dagster.yaml", config)
    os.environ["DAGSTER_HOME"] = str(dagster_home)
    return dagster_home


def run_default_job(
    home: Path,
    batches: int = 4,
    candidates_per_batch: int = 50,
    seeds_per_family: int = 1,
    console: Any = None,
) -> dict[str, Any]:
    """Run library -> compose batches -> catalog on the persistent instance; return a summary."""
    dagster_home = _prepare_instance_home()
    from dagster import DagsterInstance

    from assets.compose import COMPOSITION_BATCHES
    from assets.definitions import defs
    from assets.terminal import TERMINAL_SEEDS
    from assets.worlds import PERSONA_PARTITIONS
    from envpipeline.compose.recording import summarize
    from envpipeline.redteam.summary import red_team_summary, stored_outcomes, terminal_red_team_summary
    from envpipeline.store.lake import Lake
    from envpipeline.store.records import row_to_task
    from envpipeline.store.tables import GATED_WORLD_TASKS
    from envpipeline.terminal.seeds import default_procedural_keys, discover_seed_folders

    keys = [f"batch-{i:04d}" for i in range(batches)]
    lake_home = Path(home)
    seed_keys = default_procedural_keys(seeds_per_family) + sorted(discover_seed_folders(lake_home / "seeds"))
    runs = 0
    quiet = {
        "loggers": {"console": {"config": {"log_level": "WARNING"}}},
        "resources": {"store": {"config": {"home": str(home)}}},
    }
    with DagsterInstance.get() as instance:
        for run_id in fail_dead_runs(instance):
            if console is not None:
                console.print(
                    f"[yellow]dagster[/] run {run_id} was left STARTED by a killed process: marked failed"
                )
        instance.add_dynamic_partitions(COMPOSITION_BATCHES, keys)
        _execute(defs, "library_job", instance, None, console, quiet)
        runs += 1
        batch_config = {
            **quiet,
            "resources": {
                **quiet["resources"],
                "composer": {"config": {"candidates_per_batch": candidates_per_batch}},
            },
        }
        for key in keys:
            _execute(defs, "compose_batch_job", instance, key, console, batch_config)
            runs += 1
        instance.add_dynamic_partitions(TERMINAL_SEEDS, seed_keys)
        for key in seed_keys:
            _execute(defs, "terminal_seed_job", instance, key, console, quiet)
            _execute(defs, "pass_rate_job", instance, key, console, quiet)
            runs += 2
        _execute(defs, "selector_job", instance, None, console, quiet)
        runs += 1
        for key in seed_keys:
            _execute(defs, "forge_bundle_job", instance, key, console, quiet)
            runs += 1
        _execute(defs, "forge_export_job", instance, None, console, quiet)
        runs += 1
        _execute(defs, "personas_job", instance, None, console, quiet)
        runs += 1
        for persona_id in instance.get_dynamic_partitions(PERSONA_PARTITIONS):
            _execute(defs, "persona_world_job", instance, persona_id, console, quiet)
            runs += 1
        _execute(defs, "gated_tasks_job", instance, None, console, quiet)
        _execute(defs, "datasets_job", instance, None, console, quiet)
        runs += 2
        _execute(defs, "catalog_job", instance, None, console, quiet)
        runs += 1
    lake = Lake(home)
    verified = [row_to_task(r) for key in keys for r in lake.read("verified_composed_tasks", key)]
    groups = [r for key in keys for r in lake.read("composed_rollouts", key)]
    n = len(groups) or 1
    seeds = [r for key in seed_keys for r in lake.read("seed_verification", key)]
    exported = [r for key in seed_keys for r in lake.read("verified_bundles", key)]
    rates = [
        r["pass_rate"]
        for key in seed_keys
        for r in lake.read("seed_pass_rates", key)
        if r["pass_rate"] is not None
    ]
    gated = lake.read("gated_world_tasks", "all")
    world_days = lake.read("persona_worlds")
    datasets = Path(home) / "datasets"
    return {
        "datasets": {
            "accepted_tasks": len(lake.read("accepted_tasks", "all")),
            "path": str(datasets),
            "splits": json.loads((datasets / "splits.json").read_text())["report"]["split_sizes"]
            if (datasets / "splits.json").exists()
            else {},
        },
        "worlds": {
            "personas": len({r["persona_id"] for r in world_days}),
            "days": len([r for r in world_days if r["day"] > 0]),
            "failed_days": sum(not r["passed"] for r in world_days),
            "accepted_tasks": sum(r["status"] == "accepted" for r in gated),
            "candidates": len(gated),
            "interfaces": sorted(
                {i for r in gated if r["status"] == "accepted" for i in r["flow"].split(">")}
            ),
            "red_team": red_team_summary(GATED_WORLD_TASKS.decode(r) for r in gated),
        },
        "forge": {
            "seeds_with_pass_rate": len(rates),
            "mean_pass_rate": sum(rates) / len(rates) if rates else None,
            "pass_rate_range": [min(rates), max(rates)] if rates else None,
            "pass_rates": {
                key: r["pass_rate"]
                for key in seed_keys
                for r in lake.read("seed_pass_rates", key)
                if r["pass_rate"] is not None
            },
            "decisions": len(lake.read("selector_decisions", "all")),
            "accepted": sum(bool(r["accepted"]) for r in exported),
            "rejected": sum(not r["accepted"] for r in exported),
            "exported": len(lake.read("forge_export", "all")),
            "export": str(Path(home) / "bundles" / "export"),
        },
        "terminal": {
            "seeds": len(seeds),
            "verified": sum(r["status"] == "verified" for r in seeds),
            "failed": sum(r["status"] == "failed" for r in seeds),
            "quarantined": sum(r["status"] == "quarantined" for r in seeds),
            "backends": sorted({r["backend"] for r in seeds}),
            "failures": {r["seed_key"]: r["verdict"] for r in seeds if r["status"] != "verified"},
            "red_team": terminal_red_team_summary(
                [(r["status"] == "verified", stored_outcomes(r)) for r in seeds]
                + [(bool(r["accepted"]), stored_outcomes(r)) for r in exported]
            ),
        },
        "rollouts": {
            "groups": len(groups),
            "mean_reward": sum(r["mean_reward"] for r in groups) / n,
            "full_success_rate": sum(r["full_success_rate"] for r in groups) / n,
            "zero_signal": sum(bool(r["zero_signal"]) for r in groups),
        },
        "home": str(home),
        "dagster_home": str(dagster_home),
        "runs": runs,
        "asset_rows": {asset: len(lake.read(asset)) for asset in lake.assets()},
        "compose": summarize(verified),
        "candidates_per_batch": candidates_per_batch,
    }


def fail_dead_runs(instance: Any) -> list[str]:
    """Mark failed the runs this job launched whose process is gone (killed while STARTED); their ids."""
    from dagster import DagsterRunStatus, RunsFilter

    from envpipeline.sandbox.ownership import owner_gone

    now = time.time()
    failed = []
    active = RunsFilter(statuses=[DagsterRunStatus.STARTING, DagsterRunStatus.STARTED])
    for run in instance.get_runs(filters=active):
        launcher = run.tags.get(OWNER_TAG)
        if launcher and owner_gone(launcher, "", now):
            instance.report_run_failed(run, message=f"the process that ran it ({launcher}) is gone")
            failed.append(run.run_id)
    return failed


def _execute(
    defs: Any, job_name: str, instance: Any, partition_key: str | None, console: Any, run_config: dict
) -> None:
    from envpipeline.sandbox.ownership import owner

    if console is not None:
        console.print(f"[bold]dagster[/] {job_name}" + (f" \\[{partition_key}]" if partition_key else ""))
    result = defs.resolve_job_def(job_name).execute_in_process(
        instance=instance,
        partition_key=partition_key,
        run_config=run_config,
        raise_on_error=True,
        tags={OWNER_TAG: owner()},
    )
    if not result.success:
        raise RuntimeError(f"dagster run {result.run_id} of {job_name} failed")


def main(argv: list[str] | None = None) -> None:
    """Command-line entry of the shell (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m assets.default_run", description=__doc__)
    parser.add_argument("--home", type=Path, required=True, help="data folder (lake, catalog, bundles)")
    parser.add_argument("--batches", type=int, default=4)
    parser.add_argument("--candidates-per-batch", type=int, default=50)
    parser.add_argument("--seeds-per-family", type=int, default=1)
    parser.add_argument("--summary", type=Path, required=True, help="where to write the summary JSON")
    args = parser.parse_args(argv)
    from rich.console import Console

    summary = run_default_job(
        args.home.resolve(),
        batches=args.batches,
        candidates_per_batch=args.candidates_per_batch,
        seeds_per_family=args.seeds_per_family,
        console=Console(stderr=True),
    )
    args.summary.write_text(json.dumps(summary, indent=2, sort_keys=True, default=str))


if __name__ == "__main__":
    main()
