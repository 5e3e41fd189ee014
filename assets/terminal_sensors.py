"""Sensors and schedules of terminal seeds: a seeds-folder watcher, re-verification, oracle-rot refresh."""

import json

from dagster import (
    AssetSelection,
    DefaultScheduleStatus,
    DefaultSensorStatus,
    RunRequest,
    ScheduleEvaluationContext,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    define_asset_job,
    schedule,
    sensor,
)

from assets.plan_lease import plan_in_progress
from assets.sensor_intervals import sensor_interval
from assets.terminal import TERMINAL_SEEDS, seed_verification, terminal_seed_partitions, terminal_seeds
from envpipeline.terminal.seeds import discover_seed_folders, source_fingerprint
from envpipeline.terminal.verify import VERIFIER_VERSION, bundle_fingerprint
from resources.sandbox import SandboxResource
from resources.store import LakeResource

terminal_seed_job = define_asset_job(
    "terminal_seed_job",
    selection=AssetSelection.assets(terminal_seeds, seed_verification),
    description="Materialize one seed bundle, check it statically and gold-verify it.",
)
seed_verification_job = define_asset_job(
    "seed_verification_job",
    selection=AssetSelection.assets(seed_verification),
    description="Re-run gold verification of one seed.",
)


@sensor(
    job=terminal_seed_job,
    minimum_interval_seconds=sensor_interval(30),
    default_status=DefaultSensorStatus.RUNNING,
)
def seed_folder_sensor(context: SensorEvaluationContext, store: LakeResource) -> SensorResult | SkipReason:
    """Watch `<home>/seeds/` for bundles: new ones become partitions and runs; changed ones rerun."""
    if plan_in_progress(context.instance):
        return SkipReason("an `envpipeline run` plan is in progress; it materializes these assets itself")
    folders = discover_seed_folders(store.seeds_folder)
    seen: dict[str, str] = json.loads(context.cursor) if context.cursor else {}
    current = {key: bundle_fingerprint(path) for key, path in folders.items()}
    changed = {key: fp for key, fp in current.items() if seen.get(key) != fp}
    if not changed:
        return SkipReason(f"no new or changed bundles in {store.seeds_folder}")
    existing = set(context.instance.get_dynamic_partitions(TERMINAL_SEEDS))
    new_keys = sorted(set(changed) - existing)
    return SensorResult(
        run_requests=[
            RunRequest(partition_key=k, run_key=f"{k}:{fp[:16]}") for k, fp in sorted(changed.items())
        ],
        dynamic_partitions_requests=[terminal_seed_partitions.build_add_request(new_keys)]
        if new_keys
        else [],
        cursor=json.dumps({**seen, **current}, sort_keys=True),
    )


def stale_seeds(store: LakeResource, keys: list[str], environment: str) -> dict[str, str]:
    """Seeds whose verdict is stale: verifier code, sandbox environment or bundle inputs changed."""
    lake = store.lake()
    stale = {}
    for key in keys:
        verified = lake.read("seed_verification", key)
        seeds = lake.read("terminal_seeds", key)
        if not verified or not seeds:
            continue
        row = verified[0]
        if row["verifier_version"] != VERIFIER_VERSION:
            stale[key] = "verifier code version changed"
        elif row["environment_fingerprint"] != environment:
            stale[key] = "sandbox base image or toolchain changed"
        elif source_fingerprint(key, store.seeds_folder) != seeds[0]["source_fingerprint"]:
            stale[key] = "bundle inputs changed"
    return stale


@sensor(
    job=terminal_seed_job,
    minimum_interval_seconds=sensor_interval(300),
    default_status=DefaultSensorStatus.RUNNING,
)
def reverification_sensor(
    context: SensorEvaluationContext, store: LakeResource, sandbox: SandboxResource
) -> SensorResult | SkipReason:
    """Re-verify seeds when the verifier's code version, the base image or a bundle's inputs change."""
    if plan_in_progress(context.instance):
        return SkipReason("an `envpipeline run` plan is in progress; it materializes these assets itself")
    keys = list(context.instance.get_dynamic_partitions(TERMINAL_SEEDS))
    environment = sandbox.fingerprint()
    stale = stale_seeds(store, keys, environment)
    if not stale:
        return SkipReason(f"all {len(keys)} verified seeds are current")
    context.log.info(f"re-verifying {len(stale)} seeds: {stale}")
    return SensorResult(
        run_requests=[
            RunRequest(
                partition_key=k,
                run_key=f"reverify:{k}:{VERIFIER_VERSION}:{environment}:{reason}",
                tags={"envpipeline/reverify_reason": reason},
            )
            for k, reason in sorted(stale.items())
        ]
    )


@schedule(
    job=seed_verification_job,
    cron_schedule="0 4 * * *",
    default_status=DefaultScheduleStatus.STOPPED,
    description="Oracles rot as dependencies drift: re-verify every seed daily.",
)
def oracle_rot_schedule(context: ScheduleEvaluationContext):
    """One run request per seed partition (dynamic partitions need a custom schedule)."""
    keys = list(context.instance.get_dynamic_partitions(TERMINAL_SEEDS))
    stamp = context.scheduled_execution_time.strftime("%Y%m%d")
    for key in keys:
        yield RunRequest(partition_key=key, run_key=f"rot:{key}:{stamp}")
