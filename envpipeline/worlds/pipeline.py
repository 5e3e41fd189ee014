"""End to end: personas -> worlds -> cross-interface tasks -> gated tasks -> metrics.

`build_and_gate(n_personas, days, seed, root)` proposes personas, builds and verifies every world
(`build_world`), generates `tasks_per_world_day` tasks on each chosen day, gates them one by one
(the diversity gate compares with the tasks accepted so far) and writes ``<root>/tasks.jsonl``
(one `GatedTask` per line) and ``<root>/summary.json``. The summary holds the worlds, the task
counts, every gate's pass rate, Cohen's kappa (verifier vs the judge panel, and per judge pair, over all rollouts),
Vendi scores and NN cosine distances of worlds and tasks (entity-masked, raw beside them), the interfaces used by accepted tasks
and the difficulty counts.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from concurrent.futures import Future
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from envpipeline.llm import LLM
from envpipeline.models.task import GateResult
from envpipeline.models.world_task import GatedTask, Rollout, WorldTask
from envpipeline.policies.base import Policy
from envpipeline.worlds.build import build_world
from envpipeline.worlds.gate_processes import (
    MIN_TASKS_FOR_PROCESSES,
    gate_pool,
    gates_in_worker,
    processes_for,
    warm_workers,
)
from envpipeline.worlds.gates import (
    GateConfig,
    diversity_gate,
    gate_task,
    gated_record,
    gates_after_diversity,
)
from envpipeline.worlds.judge_panel import judge_kappas, uninformative_judges
from envpipeline.worlds.masking import EntityLexicon, default_lexicon
from envpipeline.worlds.metrics import cohen_kappa, diversity_report
from envpipeline.worlds.personas import propose_personas
from envpipeline.worlds.rollout_services import ServicePool, sharing
from envpipeline.worlds.state import day_path
from envpipeline.worlds.tasks import generate_tasks, load_persona, task_text
from envpipeline.worlds.templates import all_templates


def world_day_text(day_dir: Path) -> str:
    """What a world day adds (its delta: activities and operation contents) as text for embeddings."""
    delta = day_dir / "delta.json"
    if not delta.is_file():
        return ""
    data = json.loads(delta.read_text(encoding="utf-8"))
    parts = [a.get("description", "") + " " + a.get("skill", "") for a in data.get("activities", [])]
    for op in data.get("ops", []):
        parts += [str(v) for v in op.get("values", {}).values() if isinstance(v, str)]
        parts += [op.get("content") or "", op.get("path") or ""]
    return " ".join(p for p in parts if p)


def gate_statistics(gated: list[GatedTask]) -> dict[str, Any]:
    """Per gate: passed / total / rate over the tasks that ran it."""
    stats: dict[str, dict[str, Any]] = {}
    for record in gated:
        for gate in record.gates:
            entry = stats.setdefault(gate.name, {"passed": 0, "total": 0})
            entry["total"] += 1
            entry["passed"] += int(gate.passed)
    for entry in stats.values():
        entry["rate"] = round(entry["passed"] / entry["total"], 4) if entry["total"] else 0.0
    return stats


def rollout_metrics(gated: list[GatedTask]) -> dict[str, Any]:
    """Kappa and agreement of the verifier vs the judge majority, success and reward means."""
    verifier, judges = [], []
    rewards = []
    per_judge: dict[str, list[bool | None]] = {}
    for record in gated:
        for r in record.rollouts:
            verifier.append(bool(r.verdict))
            judges.append(bool(r.panel))
            rewards.append(r.reward)
            for name in set(per_judge) | set(r.votes):
                per_judge.setdefault(name, [None] * (len(verifier) - 1)).append(r.votes.get(name))
    if not verifier:
        return {"rollouts": 0}
    agree = sum(a == b for a, b in zip(verifier, judges)) / len(verifier)
    hinted = [bool(r.verdict) for g in gated for r in g.rollouts if r.hinted]
    unhinted = [bool(r.verdict) for g in gated for r in g.rollouts if not r.hinted]
    return {
        "rollouts": len(verifier),
        "kappa": round(cohen_kappa(verifier, judges), 4),
        "judge_kappas": (kappas := judge_kappas(verifier, per_judge)),
        "uninformative_judges": uninformative_judges(kappas),
        "panel_ties": sum(1 for g in gated for r in g.rollouts if r.panel is None),
        "agreement": round(agree, 4),
        "success_rate": round(sum(verifier) / len(verifier), 4),
        "hinted_success_rate": round(sum(hinted) / max(len(hinted), 1), 4),
        "unhinted_success_rate": round(sum(unhinted) / max(len(unhinted), 1), 4),
        "mean_reward": round(sum(rewards) / len(rewards), 4),
    }


def world_candidates(world_dir: Path, days: list[int], per_day: int) -> list[tuple[WorldTask, Path]]:
    """Tasks of the chosen days of one world, varying templates across the persona's days."""
    persona = load_persona(day_path(world_dir, 0))
    used: set[str] = set()  # the diversity gate is strict: prefer templates not used on earlier days
    out: list[tuple[WorldTask, Path]] = []
    for day in days:
        day_dir = day_path(world_dir, day)
        tasks = generate_tasks(day_dir, per_day, persona, avoid=used)
        used |= {t.template for t in tasks}
        if len(used) == len(all_templates()):
            used = set()
        out += [(t, day_dir) for t in tasks]
    return out


def gate_all(
    candidates: list[tuple[WorldTask, Path]],
    work: Path,
    llm: LLM | None = None,
    config: GateConfig | None = None,
    policy: Policy | None = None,
) -> list[GatedTask]:
    """Gate candidates in order (rollouts by `policy`, default scripted); the diversity gate
    compares with the ones accepted so far.

    Up to `config.task_workers` tasks run their later gates at once, ahead of their turn, when
    they pass the diversity gate against the tasks accepted so far (accepting more can only
    reject them, never admit one that failed); each task's diversity gate is then decided in
    order, so the records are those of gating one task after another. They run in worker
    processes, one per core, where the work can cross a process boundary (`gate_processes`), else
    in threads. With `config.reuse_services`, scripted rollouts share pooled servers and sandbox
    sessions (each worker process its own)."""
    config = config or GateConfig()
    processes = processes_for(config, len(candidates), portable=llm is None and policy is None)
    with ExitStack() as stack:
        if config.reuse_services and not processes:  # else each worker process pools its own
            stack.enter_context(sharing(stack.enter_context(ServicePool())))
        if config.task_workers <= 1:
            return _gate_one_by_one(candidates, work, llm, config, policy)
        return _gate_ahead(candidates, work, llm, config, policy, processes)


def _gate_one_by_one(
    candidates: list[tuple[WorldTask, Path]],
    work: Path,
    llm: LLM | None,
    config: GateConfig,
    policy: Policy | None,
) -> list[GatedTask]:
    gated: list[GatedTask] = []
    accepted: list[str] = []
    for task, day_dir in candidates:
        record = gate_task(task, day_dir, work, accepted, llm=llm, config=config, policy=policy)
        gated.append(record)
        if record.status == "accepted":
            accepted.append(task_text(task))
    return gated


def _gate_ahead(
    candidates: list[tuple[WorldTask, Path]],
    work: Path,
    llm: LLM | None,
    config: GateConfig,
    policy: Policy | None,
    processes: int,
) -> list[GatedTask]:
    gated: list[GatedTask] = []
    accepted: list[str] = []
    ahead: dict[int, Future[tuple[list[GateResult], list[Rollout]]]] = {}
    launched = 0

    def submit(task: WorldTask, day_dir: Path) -> Future[tuple[list[GateResult], list[Rollout]]]:
        if processes:
            return pool.submit(gates_in_worker, task, day_dir, work, config)
        return pool.submit(gates_after_diversity, task, day_dir, work, llm, config, None, policy)

    with gate_pool(config, processes) as pool:
        for index, (task, day_dir) in enumerate(candidates):
            while launched < len(candidates) and launched < index + config.task_workers:
                later, later_day = candidates[launched]
                if diversity_gate(later, accepted, config.diversity_threshold).passed:
                    ahead[launched] = submit(later, later_day)
                launched += 1
            diversity = diversity_gate(task, accepted, config.diversity_threshold)
            future = ahead.pop(index, None)
            if not diversity.passed:
                if future is not None:
                    future.cancel()
                gated.append(gated_record(task, [diversity], []))
                continue
            if future is None:  # cannot happen (see above); gate it now rather than trust that
                future = submit(task, day_dir)
            gates, rollouts = future.result()
            gated.append(record := gated_record(task, [diversity, *gates], rollouts))
            if record.status == "accepted":
                accepted.append(task_text(task))
    return gated


def build_and_gate(
    n_personas: int = 3,
    days: int = 5,
    seed: int = 0,
    root: Path | str = "worlds",
    tasks_per_world_day: int = 3,
    llm: LLM | None = None,
    task_days: list[int] | None = None,
    config: GateConfig | None = None,
    live_health: bool = True,
    replay: bool = True,
    policy: Policy | None = None,
) -> dict[str, Any]:
    """Build `n_personas` worlds of `days` days, generate and gate tasks; return the summary."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    if processes_for(
        config or GateConfig(), MIN_TASKS_FOR_PROCESSES, portable=llm is None and policy is None
    ):
        warm_workers()  # the gating workers' fork server imports their code while the worlds build
    personas, rejected_personas = propose_personas(n_personas, seed)
    worlds, world_texts, candidates = [], [], []
    for persona in personas:
        t0 = time.monotonic()
        build = build_world(persona, days, root, llm=llm, live_health=live_health, replay=replay)
        worlds.append(
            {
                "persona_id": persona.persona_id,
                "occupation": persona.occupation,
                "days": len(build.days),
                "passed": build.passed,
                "failed_checks": [
                    f"day {d.day}: {c.name}" for d in build.days for c in d.checks if not c.passed
                ],
                "seconds": round(time.monotonic() - t0, 3),
            }
        )
        chosen = list(task_days or range(1, days + 1))
        world_texts += [world_day_text(day_path(Path(build.root), day)) for day in chosen]
        if build.passed:
            candidates += world_candidates(Path(build.root), chosen, tasks_per_world_day)
    built = time.monotonic()
    gated = gate_all(candidates, root / ".gate-work", llm=llm, config=config, policy=policy)
    accepted = [g.task for g in gated if g.status == "accepted"]
    gate_seconds = time.monotonic() - built
    with (root / "tasks.jsonl").open("w", encoding="utf-8") as out:
        for record in gated:
            out.write(record.model_dump_json() + "\n")
    lexicon = default_lexicon().with_extra(
        names=[n for p in personas for n in (p.name, p.username, *(c.name for c in p.contacts))],
        places=[p.city for p in personas],
    )
    summary = summarize(worlds, gated, accepted, world_texts, rejected_personas, lexicon=lexicon)
    summary["personas"] = {"requested": n_personas, "accepted": len(personas)}
    summary["seconds"] = {
        "build": round(built - started, 2),
        "gate": round(gate_seconds, 2),
        "total": round(time.monotonic() - started, 2),
    }
    summary["throughput"] = {
        "tasks_gated_per_minute": round(len(gated) / gate_seconds * 60, 2) if gate_seconds else 0.0
    }
    (root / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return summary


def summarize(
    worlds: list[dict[str, Any]],
    gated: list[GatedTask],
    accepted: list[WorldTask],
    world_texts: list[str],
    rejected_personas: list[dict[str, Any]] | None = None,
    lexicon: EntityLexicon | None = None,
) -> dict[str, Any]:
    """The summary dict of a run; diversity figures are entity-masked (`lexicon`, default
    `masking.default_lexicon()`) with the raw ones beside them (`metrics.diversity_report`)."""
    ok = [g for g in gated if g.status == "accepted"]
    return {
        "worlds": worlds,
        "personas_rejected": len(rejected_personas or []),
        "tasks": {
            "candidates": len(gated),
            "accepted": len(ok),
            "rejected": len(gated) - len(ok),
            "by_template": dict(sorted(Counter(g.task.template for g in ok).items())),
            "flows": dict(sorted(Counter(">".join(g.task.interface_flow) for g in ok).items())),
            "rejections": [{"task_id": g.task.task_id, "reasons": g.reasons} for g in gated if g.reasons],
        },
        "gates": gate_statistics(gated),
        "metrics": {
            **rollout_metrics(gated),
            "worlds": diversity_report([t for t in world_texts if t], lexicon),
            "tasks": diversity_report([task_text(t) for t in accepted], lexicon),
            "candidate_tasks": diversity_report([task_text(g.task) for g in gated], lexicon),
        },
        "interfaces_used": sorted({i for t in accepted for i in t.interface_flow}),
        "difficulty": dict(sorted(Counter(g.difficulty for g in ok if g.difficulty).items())),
    }
