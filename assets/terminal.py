"""Terminal bundle assets: terminal_seeds -> seed_verification (per seed), with quarantine."""

import json

from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetCheckSeverity,
    AssetExecutionContext,
    DynamicPartitionsDefinition,
    MaterializeResult,
    MetadataValue,
    asset,
    asset_check,
)

from assets.automation import FRESH
from assets.check_scope import checked_partitions
from assets.partition_runs import PartitionResult, materialize_partitions, seed_backfill_policy
from envpipeline.redteam.summary import stored_outcomes, terminal_red_team_summary
from envpipeline.redteam.terminal import outcomes_or_attack
from envpipeline.store.lake import Lineage
from envpipeline.terminal.checks import check_bundle
from envpipeline.terminal.seeds import materialize_seed, next_status, verification_row
from envpipeline.terminal.verify import verify_bundle
from envpipeline.versions import Stage, code_version
from resources.sandbox import SandboxResource
from resources.store import LakeResource

TERMINAL_CODE_VERSION = code_version(Stage.TERMINAL)
TERMINAL_SEEDS = "terminal_seeds"
terminal_seed_partitions = DynamicPartitionsDefinition(name=TERMINAL_SEEDS)


@asset(
    group_name="terminal",
    partitions_def=terminal_seed_partitions,
    backfill_policy=seed_backfill_policy,
    code_version=TERMINAL_CODE_VERSION,
    kinds={"python", "parquet"},
)
def terminal_seeds(context: AssetExecutionContext, store: LakeResource) -> MaterializeResult:
    """One Harbor bundle per seed (procedural family or seeds folder, imported like ``bundle
    import``), with its static checks and its import flags, substitutions and rewrites."""
    lake = store.lake()

    def materialize_one(key: str) -> PartitionResult:
        info = materialize_seed(key, store.bundles_root, store.seeds_folder)
        report = check_bundle(info["bundle_path"])
        failed = {c.name: c.reason for c in report.checks if not c.passed}
        row = {
            **info,
            "static_passed": report.passed,
            "static_checks": json.dumps(report.model_dump(mode="json")),
        }
        lineage = Lineage(context.run.run_id, TERMINAL_CODE_VERSION, {"source": info["source_fingerprint"]})
        lake.write_partition("terminal_seeds", key, [row], lineage)
        return PartitionResult(
            metadata={
                "source": info["source"],
                "bundle_path": MetadataValue.path(info["bundle_path"]),
                "fingerprint": info["fingerprint"][:16],
                "static_checks_passed": report.passed,
                "static_failures": MetadataValue.json(failed),
                "import_status": info["import_status"],
                "import_error": info["import_error"],
                "flags": MetadataValue.json([f["name"] for f in json.loads(info["flags"])]),
                "substitutions": MetadataValue.json(
                    [f"{x['original']} -> {x['replacement']}" for x in json.loads(info["substitutions"])]
                ),
                "rewrites": len(json.loads(info["rewrites"])),
                "import_warnings": MetadataValue.json(json.loads(info["import_warnings"])),
            },
            data_version=info["fingerprint"][:16],
        )

    return materialize_partitions(context, materialize_one)


@asset_check(asset=terminal_seeds, description="Every seed bundle passes the static checks.")
def static_checks_pass(context: AssetCheckExecutionContext, store: LakeResource) -> AssetCheckResult:
    """Schema, path safety, required files, reward file, instruction length, leaks, overlap (the
    run's seeds; every seed outside a partitioned run)."""
    seeds, failing = store.lake().tally(
        "terminal_seeds", checked_partitions(context), "seed_key", "static_passed IS NOT TRUE"
    )
    return AssetCheckResult(
        passed=not failing, metadata={"seeds": seeds, "failing": MetadataValue.json(failing)}
    )


@asset(
    automation_condition=FRESH,
    group_name="terminal",
    partitions_def=terminal_seed_partitions,
    backfill_policy=seed_backfill_policy,
    deps=[terminal_seeds],
    code_version=TERMINAL_CODE_VERSION,
    kinds={"python", "parquet", "docker"},
)
def seed_verification(
    context: AssetExecutionContext, store: LakeResource, sandbox: SandboxResource
) -> MaterializeResult:
    """Gold verification of each seed: oracle = 1 twice, nop = 0; a seed that stops passing is quarantined."""
    lake = store.lake()
    backend = sandbox.get()

    def verify_one(key: str) -> PartitionResult:
        seed = lake.read("terminal_seeds", key)[0]
        previous = lake.read("seed_verification", key)
        previous_status = previous[0]["status"] if previous else None
        result = verify_bundle(seed["bundle_path"], backend)
        status = next_status(previous_status, result.passed)
        row = verification_row(key, result, status, sandbox.fingerprint())
        lineage = Lineage(context.run.run_id, TERMINAL_CODE_VERSION, {"terminal_seeds": seed["fingerprint"]})
        lake.write_partition("seed_verification", key, [row], lineage)
        if status == "quarantined":
            context.log.warning(
                f"seed {key} stopped passing gold verification and is quarantined: {result.reasons}"
            )
        return PartitionResult(
            metadata={
                "status": status,
                "verdict": result.verdict,
                "backend": result.backend,
                "oracle_rewards": MetadataValue.json(result.oracle_rewards),
                "nop_reward": result.nop_reward if result.nop_reward is not None else -1.0,
                "reasons": MetadataValue.json(result.reasons),
                "seconds": round(sum(t.durations.get("total", 0.0) for t in result.trials), 3),
                "red_team_rewards": MetadataValue.json({o.policy: o.reward for o in result.red_team}),
                "red_team_broke": MetadataValue.json([o.policy for o in result.red_team if o.broke]),
                "red_team_seconds": round(sum(o.seconds for o in result.red_team if o.policy != "nop"), 3),
            },
            tags={"envpipeline/status": status},
        )

    return materialize_partitions(context, verify_one)


def _latest_verifications(
    context: AssetCheckExecutionContext, store: LakeResource, columns: str
) -> list[dict]:
    return store.lake().scan("seed_verification", checked_partitions(context), columns)


@asset_check(asset=seed_verification, description="The oracle scores 1 on every verified seed.")
def oracle_scores_one(context: AssetCheckExecutionContext, store: LakeResource) -> AssetCheckResult:
    """Oracle = 1 on every seed of the run (failures and quarantines listed)."""
    rows = _latest_verifications(context, store, "seed_key, oracle_rewards")
    bad = [r["seed_key"] for r in rows if any(x != 1.0 for x in json.loads(r["oracle_rewards"]))]
    return AssetCheckResult(
        passed=not bad, metadata={"seeds": len(rows), "oracle_failures": MetadataValue.json(bad)}
    )


@asset_check(asset=seed_verification, description="Doing nothing scores 0 on every seed.")
def nop_scores_zero(context: AssetCheckExecutionContext, store: LakeResource) -> AssetCheckResult:
    """Nop = 0 on every seed of the run."""
    seeds, bad = store.lake().tally(
        "seed_verification", checked_partitions(context), "seed_key", "nop_reward IS DISTINCT FROM 0.0"
    )
    return AssetCheckResult(
        passed=not bad, metadata={"seeds": seeds, "nop_failures": MetadataValue.json(bad)}
    )


@asset_check(asset=seed_verification, description="No seed is quarantined (oracle rot).")
def no_quarantined_seeds(context: AssetCheckExecutionContext, store: LakeResource) -> AssetCheckResult:
    """Seeds of the run that passed before and fail now are quarantined until they pass again."""
    rows = _latest_verifications(context, store, "seed_key, status, reasons")
    quarantined = {r["seed_key"]: json.loads(r["reasons"]) for r in rows if r["status"] == "quarantined"}
    return AssetCheckResult(
        passed=not quarantined,
        severity=AssetCheckSeverity.WARN,
        metadata={"quarantined": len(quarantined), "seeds": MetadataValue.json(quarantined)},
    )


def broken_by_red_team(
    verified: list[tuple[str, str, list[dict]]], sandbox: SandboxResource
) -> tuple[dict[str, list[str]], dict]:
    """{name: policies that broke it} over verified (name, bundle path, stored outcomes), and figures."""
    backend = sandbox.get() if any(not stored for _, _, stored in verified) else None
    broken: dict[str, list[str]] = {}
    pairs = []
    for name, path, stored in verified:
        outcomes = stored if stored or backend is None else outcomes_or_attack(path, stored, backend)
        pairs.append((True, outcomes))
        broke = [o["policy"] for o in outcomes if o.get("binary") == 1.0 and not o.get("moot")]
        if broke:
            broken[name] = broke
    return broken, terminal_red_team_summary(pairs)


@asset_check(
    asset=seed_verification,
    description="No red-team policy earns reward 1 on a verified seed (seeds verified before the gate are attacked now).",
)
def seeds_defeat_red_team(
    context: AssetCheckExecutionContext, store: LakeResource, sandbox: SandboxResource
) -> AssetCheckResult:
    """Every verified seed's red-team outcomes (the run's seeds): one reward 1 fails the check."""
    lake, keys = store.lake(), checked_partitions(context)
    paths = {
        r["seed_key"]: r["bundle_path"] for r in lake.scan("terminal_seeds", keys, "seed_key, bundle_path")
    }
    checked = lake.scan("seed_verification", keys)  # every column: old rows have no red_team
    rows = [r for r in checked if r["status"] == "verified"]
    verified = [(r["seed_key"], paths.get(r["seed_key"], ""), stored_outcomes(r)) for r in rows]
    broken, figures = broken_by_red_team([v for v in verified if v[1]], sandbox)
    every = terminal_red_team_summary((r["status"] == "verified", stored_outcomes(r)) for r in checked)
    return AssetCheckResult(
        passed=not broken,
        metadata={
            "verified_checked": len(verified),
            "hack_pass_rate": round(len(broken) / len(verified), 4) if verified else 0.0,
            "broken": MetadataValue.json(dict(list(broken.items())[:20])),
            "attacked_by_policy": MetadataValue.json(figures["attacked_by_policy"]),
            "red_team_rejections_by_policy": MetadataValue.json(every["rejected_by_policy"]),
        },
    )
