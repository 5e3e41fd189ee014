"""Envs-FORGE assets: seed_pass_rates -> selector_decisions -> synthesized_bundles -> verified_bundles."""

import json
import shutil
from pathlib import Path

from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetExecutionContext,
    DefaultScheduleStatus,
    MaterializeResult,
    MetadataValue,
    RunRequest,
    ScheduleEvaluationContext,
    asset,
    asset_check,
    define_asset_job,
    schedule,
)

from assets.automation import FRESH
from assets.check_scope import checked_partitions
from assets.partition_runs import PartitionResult, materialize_partitions, seed_backfill_policy
from assets.terminal import (
    TERMINAL_SEEDS,
    broken_by_red_team,
    seed_verification,
    terminal_seed_partitions,
)
from envpipeline.forge.export import export_exactly
from envpipeline.forge.ledger import calibrated_config, calibration_summary, observations_from_rows
from envpipeline.forge.loop import AcceptedBundle, ForgeBudget, gold_check, gold_validator
from envpipeline.forge.passrates import estimate_pass_rate, pass_rates_from_rows
from envpipeline.forge.variants import procedural_origin
from envpipeline.models.selection import Decision
from envpipeline.redteam.summary import stored_outcomes, terminal_red_team_summary
from envpipeline.select.selector import select_actions
from envpipeline.store.lake import Lineage
from envpipeline.store.tables import SELECTOR_DECISIONS
from envpipeline.terminal.checks import check_bundle
from envpipeline.terminal.seeds import red_team_json
from envpipeline.versions import Stage, code_version
from resources.forge import ForgeResource
from resources.sandbox import SandboxResource
from resources.store import LakeResource

FORGE_CODE_VERSION = code_version(Stage.FORGE)


@asset(
    automation_condition=FRESH,
    group_name="forge",
    partitions_def=terminal_seed_partitions,
    backfill_policy=seed_backfill_policy,
    deps=[seed_verification],
    code_version=FORGE_CODE_VERSION,
    kinds={"python", "parquet"},
)
def seed_pass_rates(
    context: AssetExecutionContext, store: LakeResource, sandbox: SandboxResource, forge: ForgeResource
) -> MaterializeResult:
    """K rollouts of the current policy on each gold-verified seed; every rollout is stored."""
    lake = store.lake()

    def estimate_one(key: str) -> PartitionResult:
        verified = lake.read("seed_verification", key)
        seed = lake.read("terminal_seeds", key)[0]
        row = {"seed_id": key, "policy": forge.policy().name, "skill": forge.policy_skill, "family": None}
        if not verified or verified[0]["status"] != "verified":
            row |= {
                "pass_rate": None,
                "skipped": "seed is not gold-verified",
                "rollouts": "[]",
                "required_skills": "[]",
                "optional_skills": "[]",
            }
        else:
            rate, rollouts = estimate_pass_rate(
                key, Path(seed["bundle_path"]), forge.policy(), sandbox.get(), forge.rollouts
            )
            origin = procedural_origin(Path(seed["bundle_path"]))
            row |= {
                "family": origin["family"] if origin else None,
                "pass_rate": rate.pass_rate,
                "skipped": None,
                "rollouts": json.dumps(rollouts),
                "required_skills": json.dumps(rate.required_skills),
                "optional_skills": json.dumps(rate.optional_skills),
            }
        lake.write_partition(
            "seed_pass_rates",
            key,
            [row],
            Lineage(context.run.run_id, FORGE_CODE_VERSION, {"terminal_seeds": seed["fingerprint"]}),
        )
        return PartitionResult(
            metadata={
                "pass_rate": row["pass_rate"] if row["pass_rate"] is not None else -1.0,
                "rollouts": len(json.loads(row["rollouts"])),
                "skipped": row["skipped"] or "",
            }
        )

    return materialize_partitions(context, estimate_one)


@asset(
    group_name="forge",
    deps=[seed_pass_rates],
    code_version=FORGE_CODE_VERSION,
    kinds={"python", "scip"},
)
def selector_decisions(
    context: AssetExecutionContext, store: LakeResource, forge: ForgeResource
) -> MaterializeResult:
    """One MILP over every seed with a pass rate: the action per seed, with the solver trace; the
    transfer is calibrated on the measured pass rates of earlier rounds' ``verified_bundles``."""
    lake = store.lake()
    rates = pass_rates_from_rows(lake.read("seed_pass_rates"))
    config = calibrated_config(observations_from_rows(lake.read("verified_bundles")))
    decisions, trace = (
        select_actions(rates, mode=forge.mode, backend=forge.backend, config=config) if rates else ([], None)
    )
    rows = SELECTOR_DECISIONS.encode_all(decisions)
    lake.write_partition("selector_decisions", "all", rows, Lineage(context.run.run_id, FORGE_CODE_VERSION))
    trace_json = trace.model_dump(mode="json") if trace else {"status": "no seeds with a pass rate"}
    if trace and trace.fallback_reason:
        context.log.warning(f"selector fell back to {trace.backend}: {trace.fallback_reason}")
    Path(store.home, "forge").mkdir(parents=True, exist_ok=True)
    Path(store.home, "forge", "trace.json").write_text(json.dumps(trace_json, indent=2))
    return MaterializeResult(
        metadata={
            "decisions": len(decisions),
            "status": trace_json.get("status", ""),
            "objective": trace_json.get("objective") or 0.0,
            "fallback_reason": trace_json.get("fallback_reason") or "",
            "trace": MetadataValue.json(trace_json),
            "actions": MetadataValue.json({d.seed_id: d.action_variant for d in decisions}),
            "calibration": MetadataValue.json(calibration_summary(config)),
        }
    )


def _decision_for(store: LakeResource, key: str) -> Decision | None:
    rows = [r for r in store.lake().read("selector_decisions", "all") if r["seed_id"] == key]
    if not rows:
        return None
    return SELECTOR_DECISIONS.decode(rows[0])


@asset(
    automation_condition=FRESH,
    group_name="forge",
    partitions_def=terminal_seed_partitions,
    backfill_policy=seed_backfill_policy,
    deps=[selector_decisions],
    code_version=FORGE_CODE_VERSION,
    kinds={"python"},
)
def synthesized_bundles(
    context: AssetExecutionContext, store: LakeResource, forge: ForgeResource
) -> MaterializeResult:
    """Bundles synthesized for one seed's selected action (static checks in the loop); each seed
    of the run's range in turn."""
    return materialize_partitions(context, lambda key: _synthesize_for_seed(context, store, forge, key))


def _synthesize_for_seed(
    context: AssetExecutionContext, store: LakeResource, forge: ForgeResource, key: str
) -> PartitionResult:
    decision = _decision_for(store, key)
    folder = Path(store.home, "bundles", "synthesized", key)
    shutil.rmtree(folder, ignore_errors=True)
    rows = []
    if decision is not None:
        seed_dir = Path(store.lake().read("terminal_seeds", key)[0]["bundle_path"])
        synthesizer = forge.synthesizer()
        for sample in range(forge.bundles_per_seed):
            result = synthesizer.synthesize(
                seed_dir,
                decision,
                out_dir=folder / f"{key}--s{sample}",
                sample_index=sample,
                validate=lambda d: [
                    f"static:{c.name}: {c.reason}" for c in check_bundle(d).checks if not c.passed
                ],
            )
            rows.append(
                {
                    "seed_id": key,
                    "sample": sample,
                    "action_variant": decision.action_variant,
                    "bundle_path": str(result.bundle_dir) if result.bundle_dir else None,
                    "attempts": len(result.attempts),
                    "prompt_tokens": result.prompt_tokens,
                    "completion_tokens": result.completion_tokens,
                    "failures": json.dumps([f for a in result.attempts for f in a.failures]),
                }
            )
    store.lake().write_partition(
        "synthesized_bundles", key, rows, Lineage(context.run.run_id, FORGE_CODE_VERSION)
    )
    return PartitionResult(
        metadata={
            "action": decision.action_variant if decision else "no decision for this seed",
            "synthesized": sum(r["bundle_path"] is not None for r in rows),
            "attempts": sum(r["attempts"] for r in rows),
            "tokens": sum(r["prompt_tokens"] + r["completion_tokens"] for r in rows),
        }
    )


@asset(
    automation_condition=FRESH,
    group_name="forge",
    partitions_def=terminal_seed_partitions,
    backfill_policy=seed_backfill_policy,
    deps=[synthesized_bundles],
    code_version=FORGE_CODE_VERSION,
    kinds={"python", "docker"},
)
def verified_bundles(
    context: AssetExecutionContext, store: LakeResource, sandbox: SandboxResource, forge: ForgeResource
) -> MaterializeResult:
    """Gold verification of one seed's synthesized bundles (each seed of the run's range);
    accepted ones are exported and their pass rate measured with the seeds' policy and K, next to
    the projected one."""
    return materialize_partitions(
        context, lambda key: _verify_seed_bundles(context, store, sandbox, forge, key)
    )


def _verify_seed_bundles(
    context: AssetExecutionContext,
    store: LakeResource,
    sandbox: SandboxResource,
    forge: ForgeResource,
    key: str,
) -> PartitionResult:
    backend = sandbox.get()
    export = Path(store.home, "bundles", "verified")
    decision = _decision_for(store, key)
    seed_rate = next(iter(store.lake().read("seed_pass_rates", key)), {})
    # a recorded table has no rollouts of bundles synthesized after it was written
    policy = forge.policy() if forge.policy_kind != "recorded" else None
    rows = []
    for item in store.lake().read("synthesized_bundles", key):
        if not item["bundle_path"]:
            continue
        failures, result = gold_check(Path(item["bundle_path"]), backend)
        target = export / Path(item["bundle_path"]).name
        measured = None
        if not failures:
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(item["bundle_path"], target)
            if policy is not None:
                measured = estimate_pass_rate(target.name, target, policy, backend, forge.rollouts)[0]
        same = decision is not None and decision.action_variant == item["action_variant"]
        rows.append(
            {
                "seed_id": key,
                "action_variant": item["action_variant"],
                "accepted": not failures,
                "bundle_path": str(target) if not failures else item["bundle_path"],
                "reasons": json.dumps(failures),
                "verdict": result.verdict if result else "static_failed",
                "red_team": red_team_json(result) if result else "[]",
                "family": seed_rate.get("family"),
                "policy": policy.name if policy is not None else None,
                "rollouts": forge.rollouts if measured else 0,
                "seed_pass_rate": decision.pass_rate if same and decision else None,
                "projected_pass_rate": decision.projected_pass_rate if same and decision else None,
                "measured_pass_rate": measured.pass_rate if measured else None,
            }
        )
    store.lake().write_partition(
        "verified_bundles", key, rows, Lineage(context.run.run_id, FORGE_CODE_VERSION)
    )
    figures = terminal_red_team_summary((bool(r["accepted"]), stored_outcomes(r)) for r in rows)
    return PartitionResult(
        metadata={
            "accepted": sum(r["accepted"] for r in rows),
            "rejected": sum(not r["accepted"] for r in rows),
            "red_team_rejections_by_policy": MetadataValue.json(figures["rejected_by_policy"]),
            "accepted_hack_pass_rate": figures["accepted_hack_pass_rate"],
            "export": MetadataValue.path(str(export)),
            "pass_rates": MetadataValue.json(
                [
                    {
                        k: r[k]
                        for k in (
                            "bundle_path",
                            "seed_pass_rate",
                            "projected_pass_rate",
                            "measured_pass_rate",
                        )
                    }
                    for r in rows
                    if r["accepted"]
                ]
            ),
        }
    )


@asset_check(
    asset=verified_bundles,
    description="No red-team policy earns reward 1 on an accepted synthesized bundle.",
)
def verified_bundles_defeat_red_team(
    context: AssetCheckExecutionContext, store: LakeResource, sandbox: SandboxResource
) -> AssetCheckResult:
    """Every accepted bundle's red-team outcomes (attacked now if verified before the gate), over
    the run's seeds (every seed outside a partitioned run)."""
    rows = store.lake().scan("verified_bundles", checked_partitions(context))
    accepted = [r for r in rows if r["accepted"]]
    verified = [(Path(r["bundle_path"]).name, r["bundle_path"], stored_outcomes(r)) for r in accepted]
    broken, figures = broken_by_red_team(verified, sandbox)
    every = terminal_red_team_summary((bool(r["accepted"]), stored_outcomes(r)) for r in rows)
    return AssetCheckResult(
        passed=not broken,
        metadata={
            "accepted_checked": len(accepted),
            "hack_pass_rate": round(len(broken) / len(accepted), 4) if accepted else 0.0,
            "broken": MetadataValue.json(dict(list(broken.items())[:20])),
            "attacked_by_policy": MetadataValue.json(figures["attacked_by_policy"]),
            "red_team_rejections_by_policy": MetadataValue.json(every["rejected_by_policy"]),
        },
    )


@asset(
    automation_condition=FRESH,
    group_name="forge",
    deps=[verified_bundles, selector_decisions],
    code_version=FORGE_CODE_VERSION,
    kinds={"python", "docker"},
)
def forge_export(
    context: AssetExecutionContext, store: LakeResource, sandbox: SandboxResource, forge: ForgeResource
) -> MaterializeResult:
    """Exactly N accepted bundles (N = `forge.target`, default one per decision): the verified ones
    interleaved by action and trimmed to N, or topped up by the bounded gold-verified loop."""
    lake = store.lake()
    decisions = [SELECTOR_DECISIONS.decode(r) for r in lake.read("selector_decisions", "all")]
    target = forge.target or len(decisions)
    synthesized = {
        Path(r["bundle_path"]).name: r for r in lake.read("synthesized_bundles") if r["bundle_path"]
    }
    accepted = []
    for row in lake.read("verified_bundles"):
        if row["accepted"]:
            work = synthesized.get(Path(row["bundle_path"]).name, {})
            accepted.append(
                AcceptedBundle(
                    task_name=Path(row["bundle_path"]).name,
                    seed_id=row["seed_id"],
                    action_variant=row["action_variant"],
                    bundle_path=row["bundle_path"],
                    attempts=work.get("attempts", 0),
                    tokens=work.get("prompt_tokens", 0) + work.get("completion_tokens", 0),
                )
            )
    seeds = {d.seed_id: Path(lake.read("terminal_seeds", d.seed_id)[0]["bundle_path"]) for d in decisions}
    exported, report = (
        export_exactly(
            accepted,
            target,
            Path(store.home, "bundles", "export"),
            decisions=decisions,
            seed_dirs=seeds,
            synthesizer=forge.synthesizer(),
            validate=gold_validator(sandbox.get()),
            budget=ForgeBudget(max_attempts=forge.max_attempts),
            first_sample=forge.bundles_per_seed,
        )
        if target
        else ([], None)
    )
    rows = [{**b.model_dump(), "topped_up": k >= min(len(accepted), target)} for k, b in enumerate(exported)]
    lake.write_partition("forge_export", "all", rows, Lineage(context.run.run_id, FORGE_CODE_VERSION))
    return MaterializeResult(
        metadata={
            "target": target,
            "exported": len(exported),
            "verified_available": len(accepted),
            "topped_up": sum(r["topped_up"] for r in rows),
            "trimmed": max(0, len(accepted) - target),
            "actions": MetadataValue.json(_count(b.action_variant for b in exported)),
            "top_up": MetadataValue.json(report.summary() if report else {}),
        }
    )


def _count(items) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    return dict(sorted(counts.items()))


@asset_check(asset=forge_export, description="forge_export holds exactly N accepted bundles.")
def forge_export_has_target(store: LakeResource, forge: ForgeResource) -> AssetCheckResult:
    """Fails when the top-up ran out of budget (fewer than N) or the export folder disagrees."""
    lake = store.lake()
    rows = lake.read("forge_export", "all")
    target = forge.target or len(lake.read("selector_decisions", "all"))
    export = Path(store.home, "bundles", "export")
    on_disk = [p for p in export.iterdir() if p.is_dir()] if export.is_dir() else []
    return AssetCheckResult(
        passed=len(rows) == target == len(on_disk) and bool(target),
        metadata={"target": target, "rows": len(rows), "folders": len(on_disk)},
    )


pass_rate_job = define_asset_job(
    "pass_rate_job",
    selection=[seed_pass_rates],
    description="Re-estimate one seed's pass rate with the current policy.",
)
selector_job = define_asset_job(
    "selector_job", selection=[selector_decisions], description="Reselect actions."
)
forge_bundle_job = define_asset_job(
    "forge_bundle_job",
    selection=[synthesized_bundles, verified_bundles],
    description="Synthesize and gold-verify one seed's bundles.",
)
forge_export_job = define_asset_job(
    "forge_export_job",
    selection=[forge_export],
    description="Export exactly N accepted bundles: trim the verified ones or top up with the bounded loop.",
)


@schedule(
    job=pass_rate_job,
    cron_schedule="0 5 * * 1",
    default_status=DefaultScheduleStatus.STOPPED,
    description="Weekly: re-estimate every seed's pass rate with the current policy (then reselect).",
)
def forge_refresh_schedule(context: ScheduleEvaluationContext):
    """One run per seed; when they are done `forge_sensors.forge_reselect_sensor` runs the selector."""
    stamp = context.scheduled_execution_time.strftime("%Y%m%d")
    for key in context.instance.get_dynamic_partitions(TERMINAL_SEEDS):
        yield RunRequest(partition_key=key, run_key=f"refresh:{key}:{stamp}")
