"""The default job: materialize the whole asset graph offline as real Dagster runs, then summarize.

The graph is a plan of stages (`default_plan`): the library, the composition batches, the
terminal seeds, the selector, the forge bundles, the personas' worlds, the datasets and the
catalog. `envpipeline run` submits it to the persistent instance (``DAGSTER_HOME``, default
``<repo>/dagster_home``): every run goes through the instance's run queue and is launched by the
daemon in its own process, independent stages side by side (`assets.launch`). Every run shows up
in the Dagster UI (`make ui`) with its partition.

``--serial`` keeps the old way for comparison (`bench/default_run.py`): the same stages one run
after another, each executed in this process.

Started by ``envpipeline run`` as ``python -m assets.default_run --home DIR ... --summary FILE``;
the data folder reaches the resources through each run's config, never through the environment.
"""

import argparse
import contextlib
import json
import os
import shutil
import signal
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported for real inside the functions, once DAGSTER_HOME is set
    from collections.abc import Callable

    from assets.code_server import SharedCodeServer
    from assets.launch import PlanResult, RunSubmitter, Stage

REPO_ROOT = Path(__file__).resolve().parents[1]
MANAGED_MARK = "envpipeline-managed"
#: A partitioned stage of the queued plan is spread over at least this many runs (two cores).
RUNS_PER_STAGE = 2
#: The tag of the plan's runs off its longest chain (`dagster.yaml` limits them to four at a time).
SIDE_LANE = {"envpipeline/lane": "side"}
#: The tag of the plan's runs that only fill idle cores (the library and the composition batches;
#: `dagster.yaml` limits them to two at a time).
FILLER = {**SIDE_LANE, "envpipeline/nice": "10"}
#: Run config that executes a run's steps one after another in its own process.
IN_PROCESS = {"execution": {"config": {"in_process": {}}}}


def _prepare_instance_home() -> Path:
    """DAGSTER_HOME with this project's instance settings (refreshed while the copy is ours)."""
    dagster_home = Path(os.environ.get("DAGSTER_HOME") or REPO_ROOT / "dagster_home").resolve()
    dagster_home.mkdir(parents=True, exist_ok=True)
    config, template = dagster_home / "dagster.yaml", REPO_ROOT / "dagster.yaml"
    ours = not config.exists() or MANAGED_MARK in config.read_text()
    if ours and template.exists() and (not config.exists() or config.read_text() != template.read_text()):
        shutil.copy(template, config)
    os.environ["DAGSTER_HOME"] = str(dagster_home)
    return dagster_home


def default_plan(
    batch_keys: list[str], seed_keys: list[str], run_config: dict[str, Any], batch_config: dict[str, Any]
) -> list["Stage"]:
    """The default job's stages, in an order that respects the asset graph (checked by a test).

    Priorities put the longest chain first in the queue: the personas' worlds and their gated
    tasks (about 60 s of work, mostly in one run that gates tasks with several worker threads),
    then the seeds -> selector -> forge bundles chain (about 55 s), then the library and the
    composition batches that wait for it (about 30 s). The stages off the first chain run in the
    "side" lane (`SIDE_LANE`), which `dagster.yaml` limits to four of the five runs at a time: the
    chain's next run never waits for a place. The library and the composition batches, the chain
    with the most slack, are fillers (`FILLER`): their workers run at nice 10, so they take the
    cores the two longer chains leave idle instead of slowing them, and they hold at most two of
    the places, so that the forge runs never wait for one. The datasets come last, as
    three runs side by side once the accepted tasks are collected: the training files, the
    Harbor tasks and the catalog.

    A partitioned stage runs its partitions in ranges, as a backfill does (`assets.partition_runs`):
    at most a backfill run's worth each, spread over `RUNS_PER_STAGE` runs so that two of them can
    use two cores (the worlds, on the chain, in one run). A run per partition paid a run's start
    (about 0.6 s of CPU) 38 times."""
    from assets.compose import COMPOSITION_BATCHES
    from assets.launch import Stage
    from assets.partition_runs import (
        COMPOSE_PARTITIONS_PER_RUN,
        SEED_PARTITIONS_PER_RUN,
        WORLD_PARTITIONS_PER_RUN,
    )
    from assets.terminal import TERMINAL_SEEDS
    from assets.worlds import PERSONA_PARTITIONS

    def persona_keys(instance: Any) -> list[str]:
        return list(instance.get_dynamic_partitions(PERSONA_PARTITIONS))

    def ranges(partition_set: str, per_run: int, runs: int = RUNS_PER_STAGE) -> dict[str, Any]:
        return {"partition_set": partition_set, "max_partitions_per_run": per_run, "min_runs": runs}

    side: dict[str, Any] = {"tags": SIDE_LANE}
    seeds: dict[str, Any] = {**ranges(TERMINAL_SEEDS, SEED_PARTITIONS_PER_RUN), **side}
    return [
        Stage("personas", "personas_job", run_config=run_config, priority=4),
        Stage(
            "worlds",
            "persona_world_job",
            persona_keys,
            ("personas",),
            run_config,
            priority=4,
            **ranges(PERSONA_PARTITIONS, WORLD_PARTITIONS_PER_RUN, runs=1),
        ),
        Stage("gated_tasks", "gated_tasks_job", after=("worlds",), run_config=run_config, priority=4),
        Stage("seeds", "seed_job", seed_keys, run_config=run_config, priority=3, **seeds),
        Stage("library", "library_job", run_config=run_config, priority=2, tags=FILLER),
        Stage("selector", "selector_job", after=("seeds",), run_config=run_config, priority=3, **side),
        Stage("forge_bundles", "forge_bundle_job", seed_keys, ("selector",), run_config, 3, **seeds),
        Stage(
            "forge_export",
            "forge_export_job",
            after=("forge_bundles",),
            run_config=run_config,
            priority=3,
            **side,
        ),
        Stage(
            "compose",
            "compose_batch_job",
            batch_keys,
            ("library",),
            batch_config,
            priority=1,
            **ranges(COMPOSITION_BATCHES, COMPOSE_PARTITIONS_PER_RUN),
            tags=FILLER,
        ),
        Stage(
            "accepted",
            "accepted_tasks_job",
            after=("compose", "forge_bundles", "gated_tasks"),
            run_config=run_config,
        ),
        # the last three take the accepted tasks side by side
        Stage("datasets", "training_datasets_job", after=("accepted",), run_config=run_config),
        Stage("harbor", "harbor_tasks_job", after=("accepted",), run_config=run_config),
        Stage("catalog", "catalog_job", after=("accepted", "forge_export"), run_config=run_config),
    ]


def run_default_job(
    home: Path,
    batches: int = 4,
    candidates_per_batch: int = 50,
    seeds_per_family: int = 1,
    console: Any = None,
    serial: bool = False,
    retries: int = 1,
) -> dict[str, Any]:
    """Run the default plan on the persistent instance (queued, or `serial` in this process); a summary."""
    dagster_home = _prepare_instance_home()
    from dagster import DagsterInstance

    from assets.compose import COMPOSITION_BATCHES
    from assets.daemon_control import fail_orphaned_runs
    from assets.terminal import TERMINAL_SEEDS
    from envpipeline.terminal.seeds import default_procedural_keys, discover_seed_folders

    keys = [f"batch-{i:04d}" for i in range(batches)]
    lake_home = Path(home)
    seed_keys = default_procedural_keys(seeds_per_family) + sorted(discover_seed_folders(lake_home / "seeds"))
    quiet = {
        "loggers": {"console": {"config": {"log_level": "WARNING"}}},
        "resources": {"store": {"config": {"home": str(home)}}},
    }
    batch_config = {
        **quiet,
        "resources": {
            **quiet["resources"],
            "composer": {"config": {"candidates_per_batch": candidates_per_batch}},
        },
    }
    plan = default_plan(keys, seed_keys, quiet, batch_config)
    with DagsterInstance.get() as instance:
        for run_id, why in fail_orphaned_runs(instance).items():
            if console is not None:
                console.print(f"[yellow]dagster[/] run {run_id} could not finish ({why}): marked failed")
        instance.add_dynamic_partitions(COMPOSITION_BATCHES, keys)
        instance.add_dynamic_partitions(TERMINAL_SEEDS, seed_keys)
        if serial:
            runs, failed = _run_serially(plan, instance, console), {}
            summary = summarize_home(home, keys, seed_keys)
        else:
            # the summary of the lake is read while the last runs write the datasets' files
            with ThreadPoolExecutor(max_workers=1, thread_name_prefix="summary") as reader:
                lake_writers, lake_summary = {"accepted", "forge_export"}, []

                def stage_done(name: str) -> None:
                    lake_writers.discard(name)
                    if not lake_writers and not lake_summary:
                        lake_summary.append(reader.submit(summarize_lake, home, keys, seed_keys))

                result = _run_queued(plan, instance, console, retries, stage_done)
                runs, failed = result.runs, {**result.failed, **{s: [] for s in result.skipped}}
                # (read now when a stage failed before the lake was written: what is there)
                summary = lake_summary[0].result() if lake_summary else summarize_lake(home, keys, seed_keys)
            summary["datasets"] = summarize_datasets(home)
    summary.update(
        {
            "dagster_home": str(dagster_home),
            "runs": runs,
            "mode": "serial" if serial else "queued",
            "failed_runs": failed,
            "candidates_per_batch": candidates_per_batch,
        }
    )
    return summary


def _run_serially(plan: list["Stage"], instance: Any, console: Any) -> int:
    """Today's baseline: every stage's runs one after another, executed in this process (holding
    the plan lease, so that a daemon's sensors and freshness automation leave them to it)."""
    from assets.definitions import defs
    from assets.plan_lease import plan_lease

    runs = 0
    with plan_lease(instance, f"serial-{os.getpid()}") as renew:
        for stage in plan:
            for key in stage.partition_keys(instance):
                _execute(defs, stage.job, instance, key, console, stage.run_config)
                runs += 1
                renew()
    return runs


def _run_queued(
    plan: list["Stage"],
    instance: Any,
    console: Any,
    retries: int,
    stage_done: "Callable[[str], None] | None" = None,
) -> "PlanResult":
    """Submit the plan to the run queue; the daemon launches the runs; show progress until done."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from assets.code_server import shared_code_server
    from assets.daemon_control import daemon_alive, running_daemon
    from assets.launch import run_plan
    from assets.run_tags import OWNER_TAG
    from envpipeline.sandbox.ownership import owner

    workspace = REPO_ROOT / "workspace.yaml"
    # Concurrency comes from concurrent runs: the multiprocess executor would start a Python process
    # and import the project (~3.5 s of CPU) for every step, more than most steps take here.
    plan = [replace(stage, run_config={**stage.run_config, **IN_PROCESS}) for stage in plan]

    def log(message: str) -> None:
        if console is not None:
            console.print(f"[bold]dagster[/] {message}")

    progress = Progress(
        TextColumn("[bold]dagster runs[/]"),
        BarColumn(),
        TextColumn("{task.fields[line]}"),
        TimeElapsedColumn(),
        console=console,
        disable=console is None,
    )
    bar = progress.add_task("runs", total=None, line="starting")

    def show(counts: dict[str, int]) -> None:
        progress.update(
            bar,
            completed=counts["done"] + counts["failed"],
            total=max(counts["known"], 1),
            line=(
                f"{counts['done']} done, {counts['running']} running, {counts['queued']} queued, "
                f"{counts['failed']} failed; {counts['materializations']} assets materialized"
            ),
        )

    with contextlib.ExitStack() as stack:
        # one code server for the daemon and the submitter (assets/code_server.py), unless a
        # daemon already runs on the instance (it has its own)
        served = None
        if not daemon_alive(instance):
            log_file = Path(os.environ["DAGSTER_HOME"]) / "code-server.log"
            served = stack.enter_context(shared_code_server(workspace, log_file))
        opener = stack.enter_context(ThreadPoolExecutor(max_workers=1, thread_name_prefix="submitter"))
        # the submitter connects while the daemon starts (about 3 s)
        opening = opener.submit(_open_submitter, instance, workspace, served)
        try:
            with running_daemon(instance, workspace, log, served) as daemon, progress:
                result = run_plan(
                    instance,
                    opening.result(),
                    plan,
                    retries=retries,
                    progress=show,
                    log=log,
                    tags={OWNER_TAG: owner()},
                    daemon=daemon,
                    stage_done=stage_done,
                )
        finally:
            if opening.exception() is None:
                opening.result().close()
    for label, run_ids in result.failed.items():
        log(f"[red]failed[/] {label}: runs {', '.join(run_ids)} (see them in the UI)")
    for name in result.skipped:
        log(f"[yellow]skipped[/] stage {name}: a stage it waits for failed")
    return result


def _open_submitter(instance: Any, workspace: Path, served: "SharedCodeServer | None") -> "RunSubmitter":
    """A `RunSubmitter` for `workspace`, or for the shared code server once it answers."""
    from assets.launch import RunSubmitter

    if served is None:
        return RunSubmitter(instance, workspace)
    served.wait_until_serving()
    return RunSubmitter(instance, served.workspace_file)


def summarize_home(home: Path, keys: list[str], seed_keys: list[str]) -> dict[str, Any]:
    """Today's figures, read back from the lake and the datasets folder of `home`."""
    return {**summarize_lake(home, keys, seed_keys), "datasets": summarize_datasets(home)}


def summarize_datasets(home: Path) -> dict[str, Any]:
    """The datasets' figures: the accepted tasks and the splits of the training files."""
    from envpipeline.store.lake import Lake

    lake, datasets = Lake(home), Path(home) / "datasets"
    return {
        "accepted_tasks": len(lake.read("accepted_tasks", "all")),
        "path": str(datasets),
        "splits": json.loads((datasets / "splits.json").read_text())["report"]["split_sizes"]
        if (datasets / "splits.json").exists()
        else {},
    }


def summarize_lake(home: Path, keys: list[str], seed_keys: list[str]) -> dict[str, Any]:
    """Today's figures of every family, read back from the lake of `home`."""
    from envpipeline.compose.recording import LibraryShape, summarize
    from envpipeline.redteam.summary import red_team_summary, stored_outcomes, terminal_red_team_summary
    from envpipeline.store.lake import Lake
    from envpipeline.store.records import row_to_task
    from envpipeline.store.tables import GATED_WORLD_TASKS

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
    return {
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
        "asset_rows": {asset: lake.count_rows(asset) for asset in lake.assets()},
        # the library the lake's tasks were composed with, as the library run stored it: the queued
        # plan's process need not build the library itself (about 2.5 s of CPU)
        "compose": summarize(verified, LibraryShape.stored(lake)),
    }


def _execute(
    defs: Any, job_name: str, instance: Any, partition_key: str | None, console: Any, run_config: dict
) -> None:
    from assets.run_tags import OWNER_TAG
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
    parser.add_argument(
        "--serial", action="store_true", help="the old way: every run in this process, one after another"
    )
    parser.add_argument("--retries", type=int, default=1, help="times a failed run is submitted again")
    args = parser.parse_args(argv)
    # a terminated run stops the daemon it started (the `finally` blocks run on SystemExit)
    signal.signal(signal.SIGTERM, lambda signum, _frame: sys.exit(128 + signum))
    from rich.console import Console

    summary = run_default_job(
        args.home.resolve(),
        batches=args.batches,
        candidates_per_batch=args.candidates_per_batch,
        seeds_per_family=args.seeds_per_family,
        console=Console(stderr=True),
        serial=args.serial,
        retries=args.retries,
    )
    args.summary.write_text(json.dumps(summary, indent=2, sort_keys=True, default=str))


if __name__ == "__main__":
    from envpipeline.quick_exit import freeze_for_exit

    try:
        main()
    finally:
        freeze_for_exit()  # the process is done: exit without the interpreter's last collections
