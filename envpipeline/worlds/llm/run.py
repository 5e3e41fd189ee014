"""`build_and_gate_llm`: the WildAWM run with LLM stages, through the same gates as the procedural run.

Stages (`STAGES`, each chosen on its own; the others stay procedural):

- ``skills``: the model proposes event-creation skills; each must pass `skill_gate` on a probe
  world before the planner may use it;
- ``personas``: LLM personas accepted by the rule-based diversity judge (and the LLM diversity
  judge), revised with feedback;
- ``world_judge``: the LLM reviewer adds an ``llm_world_judge`` check to every built day (a failed
  day fails the world, whose days then yield no tasks);
- ``tasks``: LLM-synthesized tasks on every chosen day (checked, then gated by `gate_all`);
- ``task_judge``: the LLM judge joins the rollout judge panel (off unless asked: it adds calls per
  rollout and probe).

The run writes the same ``tasks.jsonl`` and ``summary.json`` as `build_and_gate`; the summary adds
``generator`` and an ``llm`` section (stages, per-stage request records, usage totals).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from envpipeline.llm.protocol import LLM
from envpipeline.models.world import Persona
from envpipeline.models.world_task import WorldTask
from envpipeline.policies.base import Policy
from envpipeline.worlds.build import build_world
from envpipeline.worlds.gates import GateConfig
from envpipeline.worlds.llm.config import WorldsLLMConfig
from envpipeline.worlds.llm.judge import judge_world
from envpipeline.worlds.llm.personas import propose_personas_llm
from envpipeline.worlds.llm.skills import DeclarativeSkill, SkillDraft, propose_skills
from envpipeline.worlds.llm.tasks import synthesize_task
from envpipeline.worlds.personas import generate_persona, propose_personas
from envpipeline.worlds.pipeline import gate_all, summarize, world_candidates, world_day_text
from envpipeline.worlds.skills.base import Skill
from envpipeline.worlds.skills.registry import all_skills
from envpipeline.worlds.state import day_path
from envpipeline.worlds.tasks import load_persona

SKILLS_FILE = "llm-skills.json"


def llm_skill_library(
    llm: LLM, config: WorldsLLMConfig, seed: int, root: Path | None = None
) -> tuple[dict[str, Skill], dict[str, Any]]:
    """The built-in skills plus the LLM skills that passed `skill_gate` (on a procedural probe persona).

    With `root`, the admitted skills' drafts are written to ``<root>/llm-skills.json``."""
    library: dict[str, Skill] = dict(all_skills())
    if not config.uses("skills") or config.skills == 0:
        return library, {"proposed": 0, "admitted": []}
    probe = generate_persona(seed, 0)
    admitted, records, request = propose_skills(
        llm, config.skills, probe, existing=library, max_repairs=config.max_repairs
    )
    library.update(admitted)
    if root is not None:
        drafts = [json.loads(s.draft.model_dump_json()) for _, s in sorted(admitted.items())]
        (Path(root) / SKILLS_FILE).write_text(json.dumps(drafts, indent=2) + "\n", encoding="utf-8")
    return library, {"request": request.summary(), "proposals": records, "admitted": sorted(admitted)}


def load_skill_library(root: Path | str) -> dict[str, Skill]:
    """The built-in skills plus the admitted LLM skills a run stored under `root` (if any)."""
    library: dict[str, Skill] = dict(all_skills())
    path = Path(root) / SKILLS_FILE
    if path.is_file():
        for data in json.loads(path.read_text(encoding="utf-8")):
            skill = DeclarativeSkill(SkillDraft.model_validate(data))
            library[skill.name] = skill
    return library


def propose_run_personas(
    llm: LLM | None, config: WorldsLLMConfig, n: int, seed: int, library: dict[str, Skill]
) -> tuple[list[Persona], list[dict[str, Any]], dict[str, Any]]:
    """LLM personas when the stage is on (and an LLM is given), else the procedural ones."""
    if llm is None or not config.uses("personas"):
        accepted, rejected = propose_personas(n, seed)
        return accepted, rejected, {}
    accepted, rejected, calls = propose_personas_llm(
        llm,
        n,
        seed,
        max_revisions=config.max_revisions,
        max_repairs=config.max_repairs,
        llm_judge=config.persona_llm_judge,
        skills=library,
    )
    return accepted, rejected, {"accepted": len(accepted), "rejected": rejected, "requests": calls}


def llm_world_candidates(
    llm: LLM, world_dir: Path, days: list[int], per_day: int, max_repairs: int = 2
) -> tuple[list[tuple[WorldTask, Path]], list[dict[str, Any]]]:
    """LLM-synthesized tasks (that passed the pre-gate checks) on the chosen days of one world."""
    persona = load_persona(day_path(world_dir, 0))
    candidates, records = [], []
    for day in days:
        for index in range(per_day):
            task, record = synthesize_task(
                llm, day_path(world_dir, day), persona, index, max_repairs=max_repairs
            )
            records.append(record)
            if task is not None:
                candidates.append((task, day_path(world_dir, day)))
    return candidates, records


def build_and_gate_llm(
    llm: LLM,
    config: WorldsLLMConfig | None = None,
    n_personas: int = 3,
    days: int = 5,
    seed: int = 0,
    root: Path | str = "worlds",
    tasks_per_world_day: int = 3,
    *,
    live_health: bool = True,
    replay: bool = True,
    gate_config: GateConfig | None = None,
    policy: Policy | None = None,
) -> dict[str, Any]:
    """Skills -> personas -> worlds (+ LLM judge) -> tasks -> gates; returns the summary.

    Raises:
        LLMError: the endpoint failed after the client's retries.
    """
    config = config or WorldsLLMConfig()
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    library, skill_report = llm_skill_library(llm, config, seed, root)
    report: dict[str, Any] = {"stages": list(config.stages), "skills": skill_report}
    personas, rejected, report["personas"] = propose_run_personas(llm, config, n_personas, seed, library)
    worlds, world_texts, candidates, task_records = [], [], [], []
    chosen = list(range(1, days + 1))
    for persona in personas:
        t0 = time.monotonic()
        build = build_world(persona, days, root, live_health=live_health, replay=replay, skills=library)
        if config.uses("world_judge"):
            build = judge_world(llm, persona, build, max_repairs=config.max_repairs)
        worlds.append(
            {
                "persona_id": persona.persona_id,
                "occupation": persona.occupation,
                "days": len(build.days),
                "passed": build.passed,
                "failed_checks": [
                    f"day {d.day}: {c.name}" for d in build.days for c in d.checks if not c.passed
                ],
                "llm_skills_used": sorted(
                    {s for d in build.days for s in d.skills if s in skill_report["admitted"]}
                ),
                "seconds": round(time.monotonic() - t0, 3),
            }
        )
        world_dir = Path(build.root)
        world_texts += [world_day_text(day_path(world_dir, day)) for day in chosen]
        if not build.passed:
            continue
        if config.uses("tasks"):
            found, records = llm_world_candidates(
                llm, world_dir, chosen, tasks_per_world_day, config.max_repairs
            )
            candidates += found
            task_records += records
        else:
            candidates += world_candidates(world_dir, chosen, tasks_per_world_day)
    built = time.monotonic()
    judge_llm = llm if config.uses("task_judge") else None
    gated = gate_all(candidates, root / ".gate-work", llm=judge_llm, config=gate_config, policy=policy)
    accepted: list[WorldTask] = [g.task for g in gated if g.status == "accepted"]
    with (root / "tasks.jsonl").open("w", encoding="utf-8") as out:
        for record in gated:
            out.write(record.model_dump_json() + "\n")
    summary = summarize(worlds, gated, accepted, world_texts, rejected)
    report["tasks"] = {
        "requested": len(task_records),
        "synthesized": sum(1 for r in task_records if r["ok"]),
        "refused": [r for r in task_records if not r["ok"]],
        "requests": task_records,
    }
    report["usage"] = llm.usage().model_dump()
    summary["generator"] = "llm"
    summary["llm"] = report
    summary["seconds"] = {"build": round(built - started, 2), "total": round(time.monotonic() - started, 2)}
    (root / "summary.json").write_text(
        json.dumps(summary, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8"
    )
    return summary
