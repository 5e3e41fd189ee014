"""WildAWM assets: personas -> persona_worlds (per persona) -> world_tasks -> gated_world_tasks."""

import json
from pathlib import Path

from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetExecutionContext,
    DynamicPartitionsDefinition,
    MaterializeResult,
    MetadataValue,
    asset,
    asset_check,
    define_asset_job,
)

from assets.automation import FRESH
from assets.check_scope import checked_partitions
from assets.partition_runs import PartitionResult, materialize_partitions, world_backfill_policy
from envpipeline.models.world import Persona
from envpipeline.redteam.summary import red_team_summary
from envpipeline.store.lake import Lineage
from envpipeline.store.tables import GATED_WORLD_TASKS, PERSONAS, WORLD_DAYS, WORLD_TASKS
from envpipeline.versions import Stage, code_version
from envpipeline.worlds.state import day_path

# The world machinery (servers, the MCP SDK, sandboxes) is imported inside the assets that use it:
# every Dagster run process imports this module, and most runs are not WildAWM runs.
from resources.store import LakeResource
from resources.worlds import WorldsResource

WORLDS_CODE_VERSION = code_version(Stage.WORLDS)
PERSONA_PARTITIONS = "personas"
persona_partitions = DynamicPartitionsDefinition(name=PERSONA_PARTITIONS)


@asset(group_name="wildawm", code_version=WORLDS_CODE_VERSION, kinds={"python", "parquet"})
def personas(
    context: AssetExecutionContext, store: LakeResource, worlds: WorldsResource
) -> MaterializeResult:
    """Personas accepted by the diversity judge (up to two revisions each); with generator 'llm', the
    LLM's (and its event skills, gated and stored under the worlds root for the world builds)."""
    from envpipeline.worlds.llm.run import llm_skill_library, propose_run_personas

    llm, config = worlds.generator_llm(), worlds.llm_config()
    root = Path(worlds.root(store.home))
    root.mkdir(parents=True, exist_ok=True)
    library = llm_skill_library(llm, config, worlds.seed, root)[0] if llm is not None else None
    accepted, rejected, _ = propose_run_personas(llm, config, worlds.personas, worlds.seed, library or {})
    rows = PERSONAS.encode_all(accepted)
    store.lake().write_partition("personas", "all", rows, Lineage(context.run.run_id, WORLDS_CODE_VERSION))
    context.instance.add_dynamic_partitions(PERSONA_PARTITIONS, [p.persona_id for p in accepted])
    return MaterializeResult(
        metadata={
            "accepted": len(accepted),
            "rejected_candidates": len(rejected),
            "occupations": MetadataValue.json({p.persona_id: p.occupation for p in accepted}),
        }
    )


def _persona(store: LakeResource, persona_id: str) -> Persona:
    rows = [r for r in store.lake().read("personas", "all") if r["persona_id"] == persona_id]
    if not rows:
        raise ValueError(f"persona {persona_id} is not in the personas asset; materialize personas first")
    return PERSONAS.decode(rows[0])


@asset(
    automation_condition=FRESH,
    group_name="wildawm",
    partitions_def=persona_partitions,
    backfill_policy=world_backfill_policy,
    deps=[personas],
    code_version=WORLDS_CODE_VERSION,
    kinds={"python", "sqlite"},
)
def persona_worlds(
    context: AssetExecutionContext, store: LakeResource, worlds: WorldsResource
) -> MaterializeResult:
    """One persona's world, day by day, with every day's checks (lint, replay, declaration, live,
    review); a run over a range of personas builds each of them in turn."""
    return materialize_partitions(context, lambda key: _build_persona_world(context, store, worlds, key))


def _build_persona_world(
    context: AssetExecutionContext, store: LakeResource, worlds: WorldsResource, persona_id: str
) -> PartitionResult:
    from envpipeline.worlds.build import build_world
    from envpipeline.worlds.llm.judge import judge_world
    from envpipeline.worlds.llm.run import load_skill_library

    persona = _persona(store, persona_id)
    root = worlds.root(store.home)
    llm, config = worlds.generator_llm(), worlds.llm_config()
    build = build_world(
        persona,
        worlds.days,
        root,
        llm=worlds.reviewer_llm(),
        live_health=worlds.live_health,
        skills=load_skill_library(root),
    )
    if llm is not None and config.uses("world_judge"):
        build = judge_world(llm, persona, build, max_repairs=config.max_repairs)
    rows = [
        WORLD_DAYS.encode(d, persona_id=persona.persona_id, day_dir=str(day_path(Path(build.root), d.day)))
        for d in build.days
    ]
    store.lake().write_partition(
        "persona_worlds", persona_id, rows, Lineage(context.run.run_id, WORLDS_CODE_VERSION)
    )
    failed = [f"day {d.day}: {c.name}" for d in build.days for c in d.checks if not c.passed]
    return PartitionResult(
        metadata={
            "days": len(build.days),
            "passed": build.passed,
            "failed_checks": MetadataValue.json(failed),
            "root": MetadataValue.path(str(build.root)),
        }
    )


@asset_check(asset=persona_worlds, description="Every day of every world passes its checks.")
def world_checks_pass(context: AssetCheckExecutionContext, store: LakeResource) -> AssetCheckResult:
    """Lint, replay determinism, declaration, live health and the reviewer, for every day built by
    the run (every world's outside a partitioned run)."""
    days, failing = store.lake().tally(
        "persona_worlds", checked_partitions(context), "persona_id || ' day ' || day", "passed IS NOT TRUE"
    )
    return AssetCheckResult(
        passed=not failing, metadata={"days": days, "failing": MetadataValue.json(failing)}
    )


@asset(
    automation_condition=FRESH,
    group_name="wildawm",
    partitions_def=persona_partitions,
    backfill_policy=world_backfill_policy,
    deps=[persona_worlds],
    code_version=WORLDS_CODE_VERSION,
    kinds={"python"},
)
def world_tasks(
    context: AssetExecutionContext, store: LakeResource, worlds: WorldsResource
) -> MaterializeResult:
    """Cross-interface task candidates over one persona's world days (each persona of the run's range)."""
    return materialize_partitions(context, lambda key: _world_candidates(context, store, worlds, key))


def _world_candidates(
    context: AssetExecutionContext, store: LakeResource, worlds: WorldsResource, persona_id: str
) -> PartitionResult:
    from envpipeline.worlds.llm.run import llm_world_candidates
    from envpipeline.worlds.pipeline import world_candidates

    world_dir = Path(worlds.root(store.home)) / persona_id
    days = list(range(1, worlds.days + 1))
    llm, config = worlds.generator_llm(), worlds.llm_config()
    if llm is not None and config.uses("tasks"):
        candidates, _ = llm_world_candidates(
            llm, world_dir, days, worlds.tasks_per_world_day, config.max_repairs
        )
    else:
        candidates = world_candidates(world_dir, days, worlds.tasks_per_world_day)
    rows = [WORLD_TASKS.encode(t, day_dir=str(d)) for t, d in candidates]
    store.lake().write_partition(
        "world_tasks", persona_id, rows, Lineage(context.run.run_id, WORLDS_CODE_VERSION)
    )
    return PartitionResult(
        metadata={"candidates": len(rows), "flows": MetadataValue.json(sorted({r["flow"] for r in rows}))}
    )


@asset(
    automation_condition=FRESH,
    group_name="wildawm",
    deps=[world_tasks],
    code_version=WORLDS_CODE_VERSION,
    kinds={"python", "parquet"},
)
def gated_world_tasks(
    context: AssetExecutionContext, store: LakeResource, worlds: WorldsResource
) -> MaterializeResult:
    """Six rollouts per task through web, MCP and CLI, the five gates, and the diversity metrics."""
    from envpipeline.worlds.pipeline import gate_all, summarize, world_day_text

    lake = store.lake()
    rows = sorted(lake.read("world_tasks"), key=lambda r: (r["persona_id"], r["day"], r["task_id"]))
    candidates = [(WORLD_TASKS.decode(r), Path(r["day_dir"])) for r in rows]
    gated = gate_all(candidates, Path(worlds.root(store.home)) / ".gate-work", llm=worlds.task_judge_llm())
    accepted = [g.task for g in gated if g.status == "accepted"]
    world_rows = lake.read("persona_worlds")
    texts = [world_day_text(Path(r["day_dir"])) for r in world_rows if r["day"] > 0]
    summary = summarize([], gated, accepted, texts)
    out = GATED_WORLD_TASKS.encode_all(gated)
    lake.write_partition("gated_world_tasks", "all", out, Lineage(context.run.run_id, WORLDS_CODE_VERSION))
    metrics = summary["metrics"]
    red = red_team_summary(gated)
    return MaterializeResult(
        metadata={
            "accepted": summary["tasks"]["accepted"],
            "rejected": summary["tasks"]["rejected"],
            "interfaces_used": ", ".join(summary["interfaces_used"]),
            "difficulty": MetadataValue.json(summary["difficulty"]),
            "gate_pass_rates": MetadataValue.json({k: v["rate"] for k, v in summary["gates"].items()}),
            "cohen_kappa": metrics.get("kappa") if metrics.get("kappa") is not None else -1.0,
            "vendi_worlds": metrics["worlds"].get("vendi", 0.0),
            "vendi_tasks": metrics["tasks"].get("vendi", 0.0),  # entity-masked (headline)
            "vendi_tasks_raw": metrics["tasks"].get("vendi_raw", 0.0),
            "metrics": MetadataValue.json(metrics),
            "judge_kappas": MetadataValue.json(metrics.get("judge_kappas", {})),
            "red_team_rejections_by_policy": MetadataValue.json(red["rejected_by_policy"]),
            "accepted_hack_pass_rate": red["accepted_hack_pass_rate"],
        }
    )


@asset_check(
    asset=gated_world_tasks, description="Accepted tasks passed every gate and use all three interfaces."
)
def gated_tasks_cover_interfaces(store: LakeResource) -> AssetCheckResult:
    """Initial unsatisfaction, solvability, judge consistency and the probe hold; web, CLI and MCP all used."""
    rows = [r for r in store.lake().read("gated_world_tasks") if r["status"] == "accepted"]
    bad = [r["task_id"] for r in rows if not all(g["passed"] for g in json.loads(r["gates"]))]
    used = {i for r in rows for i in r["flow"].split(">")}
    return AssetCheckResult(
        passed=not bad and {"web", "cli", "mcp"} <= used,
        metadata={
            "accepted": len(rows),
            "violations": MetadataValue.json(bad),
            "interfaces": ", ".join(sorted(used)),
        },
    )


@asset_check(
    asset=gated_world_tasks,
    description="Every accepted world task ran the red team and no policy earned full reward on it.",
)
def gated_tasks_resist_red_team(store: LakeResource) -> AssetCheckResult:
    """From the stored red_team gate evidence: a missing gate or a policy with binary reward 1 fails."""
    rows = [r for r in store.lake().read("gated_world_tasks") if r["status"] == "accepted"]
    broken: dict[str, list[str]] = {}
    for row in rows:
        gate = next((g for g in json.loads(row["gates"]) if g["name"] == "red_team"), None)
        if gate is None:
            broken[row["task_id"]] = ["(no red_team gate)"]
            continue
        full = [
            name for name, o in gate["evidence"]["policies"].items() if o["binary"] == 1.0 and not o["moot"]
        ]
        if full:
            broken[row["task_id"]] = full
    return AssetCheckResult(
        passed=not broken,
        metadata={
            "accepted_checked": len(rows),
            "hack_pass_rate": round(len(broken) / len(rows), 4) if rows else 0.0,
            "broken": MetadataValue.json(dict(list(broken.items())[:20])),
        },
    )


@asset_check(
    asset=gated_world_tasks,
    description="A careless agent (one value wrong, one step skipped) earns nothing on an accepted task "
    "of each template.",
)
def gated_tasks_fail_careless_agents(store: LakeResource) -> AssetCheckResult:
    """`worlds.careless` on the first accepted task of each template, rebuilt on its stored world day:
    a slip the verifier rewards while the world ends elsewhere is a hole in that template's criteria."""
    from envpipeline.worlds.careless import careless_audit

    lake = store.lake()
    days = {r["task_id"]: Path(r["day_dir"]) for r in lake.read("world_tasks")}
    accepted = [
        GATED_WORLD_TASKS.decode(r).task for r in lake.read("gated_world_tasks") if r["status"] == "accepted"
    ]
    audit = careless_audit([(t, days[t.task_id]) for t in accepted if t.task_id in days])
    return AssetCheckResult(
        passed=not audit.holes,
        metadata={
            "templates_probed": len(audit.templates),
            "slips_tried": audit.slips,
            "slips_that_changed_the_world": audit.changed,
            "holes": MetadataValue.json([list(h) for h in audit.holes[:20]]),
        },
    )


personas_job = define_asset_job("personas_job", selection=[personas], description="Propose personas.")
persona_world_job = define_asset_job(
    "persona_world_job",
    selection=[persona_worlds, world_tasks],
    description="Build one persona's world and its task candidates.",
)
gated_tasks_job = define_asset_job(
    "gated_tasks_job", selection=[gated_world_tasks], description="Gate tasks."
)
