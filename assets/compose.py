"""CompoWorld assets: service_library -> composed_task_specs -> verified_composed_tasks."""

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
from assets.partition_runs import PartitionResult, compose_backfill_policy, materialize_partitions
from envpipeline.agents.rollouts import rollout_rows
from envpipeline.compose.pipeline import draft_record, verify_record
from envpipeline.compose.recording import (
    CODE_VERSION,
    record_candidates,
    record_library,
    record_verified,
    summarize,
)
from envpipeline.models.task import TaskRecord
from envpipeline.redteam.compose import red_team
from envpipeline.services import contract
from envpipeline.services.registry import all_services
from envpipeline.store.lake import Lineage
from envpipeline.store.records import fingerprint_rows, row_to_task
from resources.composer import ComposerResource
from resources.store import LakeResource

COMPOSITION_BATCHES = "composition_batches"
composition_batches = DynamicPartitionsDefinition(name=COMPOSITION_BATCHES)


@asset(group_name="compoworld", code_version=CODE_VERSION, kinds={"python", "parquet"})
def service_library(context: AssetExecutionContext, store: LakeResource) -> MaterializeResult:
    """Every registered service with its tools, schemas, links and simulated-tool flags."""
    fingerprint = record_library(store.lake(), context.run.run_id)
    services = all_services()
    n_tools = sum(len(c.tools) for c in services.values())
    n_simulated = sum(t.simulated for c in services.values() for t in c.tools.values())
    return MaterializeResult(
        metadata={
            "services": len(services),
            "tools": n_tools,
            "simulated_tools": n_simulated,
            "simulated_tool_share": round(n_simulated / n_tools, 4) if n_tools else 0.0,
            "library_fingerprint": fingerprint,
            "service_names": MetadataValue.text(", ".join(services)),
        }
    )


@asset_check(asset=service_library, blocking=True, description="Generated tests of every tool and link pass.")
def service_contract_passes() -> AssetCheckResult:
    """Run the service contract (normal invocation, error handling, links) over the library."""
    failures = {name: contract.check_service(cls) for name, cls in all_services().items()}
    failed = {name: f for name, f in failures.items() if f}
    return AssetCheckResult(
        passed=not failed,
        severity=AssetCheckSeverity.ERROR,
        metadata={
            "services_checked": len(failures),
            "services_failing": len(failed),
            "failures": MetadataValue.json({n: f[:5] for n, f in failed.items()}),
        },
    )


@asset(
    automation_condition=FRESH,
    group_name="compoworld",
    partitions_def=composition_batches,
    backfill_policy=compose_backfill_policy,
    deps=[service_library],
    code_version=CODE_VERSION,
    kinds={"python", "parquet"},
)
def composed_task_specs(
    context: AssetExecutionContext, store: LakeResource, composer: ComposerResource
) -> MaterializeResult:
    """Candidate cross-service tasks of each batch: walk, planted state, instruction, rubric."""
    config = composer.config()

    def draft_batch(key: str) -> PartitionResult:
        seeds = composer.seeds(key)
        candidates = []
        for i, seed in enumerate(seeds):
            candidates.append(draft_record(seed, config, seed_key=key))
            if (i + 1) % 25 == 0:
                context.log.info(f"{key}: drafted {i + 1}/{len(seeds)} candidates")
        fingerprint = record_candidates(store.lake(), key, candidates, context.run.run_id)
        composable = sum(c.status == "candidate" for c in candidates)
        return PartitionResult(
            metadata={
                "candidates": len(candidates),
                "composable": composable,
                "uncomposable": len(candidates) - composable,
                "seeds": f"{seeds.start}..{seeds.stop - 1}",
                "specs_fingerprint": fingerprint,
            }
        )

    return materialize_partitions(context, draft_batch)


@asset(
    automation_condition=FRESH,
    group_name="compoworld",
    partitions_def=composition_batches,
    backfill_policy=compose_backfill_policy,
    deps=[composed_task_specs],
    code_version=CODE_VERSION,
    kinds={"python", "parquet"},
)
def verified_composed_tasks(
    context: AssetExecutionContext, store: LakeResource, composer: ComposerResource
) -> MaterializeResult:
    """Every candidate of each batch judged by the gates; rejected ones keep their reasons."""
    lake = store.lake()
    config = composer.config()

    def verify_batch(key: str) -> PartitionResult:
        rows = lake.read("composed_task_specs", key)
        judged = [verify_record(row_to_task(row), config) for row in rows]
        record_verified(lake, key, judged, _fingerprint(rows), context.run.run_id)
        summary = summarize(judged)
        accepted = [r for r in judged if r.status == "accepted"]
        return PartitionResult(
            metadata={
                "accepted": summary["accepted"],
                "rejected": summary["rejected"],
                "acceptance_rate": summary["acceptance_rate"],
                "gate_pass_rates": MetadataValue.json(summary["gate_pass_rates"]),
                "top_rejection_reasons": MetadataValue.json(summary["top_rejection_reasons"]),
                "red_team_rejections_by_policy": MetadataValue.json(
                    summary["red_team"]["rejected_by_policy"]
                ),
                "accepted_hack_pass_rate": summary["red_team"]["accepted_hack_pass_rate"],
                "tasks_touching_simulated_share": summary["tasks_touching_simulated_share"],
                "preview": MetadataValue.md(task_preview(accepted[0]) if accepted else "_no accepted task_"),
            }
        )

    return materialize_partitions(context, verify_batch)


@asset(
    automation_condition=FRESH,
    group_name="compoworld",
    partitions_def=composition_batches,
    backfill_policy=compose_backfill_policy,
    deps=[verified_composed_tasks],
    code_version=CODE_VERSION,
    kinds={"python", "parquet"},
)
def composed_rollouts(
    context: AssetExecutionContext, store: LakeResource, composer: ComposerResource
) -> MaterializeResult:
    """Per accepted task: the SFT trajectory (reference via meta-tools) and a scored rollout group."""
    lake = store.lake()

    def roll_out_batch(key: str) -> PartitionResult:
        rows = lake.read("verified_composed_tasks", key)
        tasks = [row_to_task(r) for r in rows if r["status"] == "accepted"]
        out = rollout_rows(tasks, composer.rollout_group_size, composer.rollout_error_rate)
        lineage = Lineage(
            context.run.run_id, CODE_VERSION, {f"verified_composed_tasks/{key}": _fingerprint(rows)}
        )
        lake.write_partition("composed_rollouts", key, out, lineage)
        n = len(out) or 1
        return PartitionResult(
            metadata={
                "groups": len(out),
                "sft_trajectories": sum(r["sft_messages"] is not None for r in out),
                "mean_cfrr_reward": round(sum(r["mean_reward"] for r in out) / n, 4),
                "full_success_rate": round(sum(r["full_success_rate"] for r in out) / n, 4),
                "zero_signal_groups": sum(r["zero_signal"] for r in out),
            }
        )

    return materialize_partitions(context, roll_out_batch)


def _fingerprint(rows: list[dict]) -> str:
    return fingerprint_rows([{k: v for k, v in r.items() if not k.startswith("_")} for r in rows])


@asset_check(
    asset=composed_rollouts, description="Every SFT trajectory exists and full rewards top partial ones."
)
def rollouts_are_consistent(context: AssetCheckExecutionContext, store: LakeResource) -> AssetCheckResult:
    """Every accepted task of the run has an SFT trajectory; a full-pass reward is 1.0 and above any partial."""
    rows = store.lake().scan(
        "composed_rollouts", checked_partitions(context), "task_id, sft_messages, pass_matrix, rewards"
    )
    missing = [r["task_id"] for r in rows if r["sft_messages"] is None]
    inverted = []
    for r in rows:
        matrix, rewards = json.loads(r["pass_matrix"]), json.loads(r["rewards"])
        full = [x for row, x in zip(matrix, rewards) if all(row)]
        partial = [x for row, x in zip(matrix, rewards) if not all(row)]
        if any(x != 1.0 for x in full) or (partial and max(partial) >= 1.0):
            inverted.append(r["task_id"])
    return AssetCheckResult(
        passed=not missing and not inverted,
        metadata={"groups": len(rows), "missing_sft": len(missing), "reward_violations": len(inverted)},
    )


@asset_check(
    asset=verified_composed_tasks, description="Accepted tasks have >= 4 criteria over >= 3 services."
)
def accepted_tasks_meet_rubric_floor(
    context: AssetCheckExecutionContext, store: LakeResource
) -> AssetCheckResult:
    """Every accepted task of the run checks enough of the joint state, and passed every gate."""
    rows = store.lake().scan(
        "verified_composed_tasks",
        checked_partitions(context),
        "task_id, status, gates, n_criteria, n_services",
    )
    bad = []
    for row in rows:
        if row["status"] != "accepted":
            continue
        gates_ok = all(g["passed"] for g in json.loads(row["gates"]))
        if row["n_criteria"] < 4 or row["n_services"] < 3 or not gates_ok:
            bad.append(row["task_id"])
    return AssetCheckResult(
        passed=not bad, metadata={"checked": len(rows), "violations": MetadataValue.json(bad[:20])}
    )


@asset_check(
    asset=verified_composed_tasks,
    description="No red-team policy earns full reward on an accepted task (the suite is run again).",
)
def accepted_tasks_defeat_red_team(
    context: AssetCheckExecutionContext, store: LakeResource
) -> AssetCheckResult:
    """Re-run every red-team policy on every accepted task of the run; one full reward fails the check."""
    rows = store.lake().scan(
        "verified_composed_tasks", checked_partitions(context), where="status = 'accepted'"
    )
    broken: dict[str, list[str]] = {}
    for row in rows:
        outcomes = red_team(row_to_task(row))
        if any(o.broke for o in outcomes):
            broken[row["task_id"]] = [o.policy for o in outcomes if o.broke]
    return AssetCheckResult(
        passed=not broken,
        metadata={
            "accepted_checked": len(rows),
            "hack_pass_rate": round(len(broken) / len(rows), 4) if rows else 0.0,
            "broken": MetadataValue.json(dict(list(broken.items())[:20])),
        },
    )


def task_preview(record: TaskRecord) -> str:
    """A markdown preview of one task for the Dagster UI."""
    lines = [
        f"### {record.task_id}",
        "",
        "**Instruction**",
        "",
        *[f"> {x}" for x in record.instruction.splitlines()],
    ]
    lines += ["", "**Criteria**", ""] + [
        f"- `{c.id}` ({c.service or 'output'}): {c.description}" for c in record.criteria
    ]
    lines += ["", "**Reference solution**", ""] + [
        f"{i + 1}. `{s.tool}`" for i, s in enumerate(record.reference_solution)
    ]
    lines += ["", "**Gates**: " + ", ".join(f"{g.name} {'✅' if g.passed else '❌'}" for g in record.gates)]
    return "\n".join(lines)
