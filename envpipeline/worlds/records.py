"""WildAWM gated tasks as `TaskRecord`s: one record per gated cross-interface task."""

from __future__ import annotations

from envpipeline.models.task import Provenance, WorldEnvironmentRef, WorldTaskRecord
from envpipeline.models.world_task import GatedTask
from envpipeline.models.world_task import Rollout as WorldRollout
from envpipeline.versions import WORLD_GENERATOR

GENERATOR = "wildawm.templates"


def best_hinted_rollout(gated: GatedTask) -> WorldRollout | None:
    """The successful hinted rollout with the highest reward (then fewest tool calls), or None."""
    good = [
        r
        for r in gated.rollouts
        if r.hinted
        and r.verdict == 1
        and r.format_ok
        and r.criteria
        and all(r.criteria.values())
        and r.trajectory
    ]
    return min(good, key=lambda r: (-r.reward, r.tool_calls, r.index), default=None)


def world_task_record(gated: GatedTask) -> WorldTaskRecord:
    """The record of one gated world task.

    Its metadata keeps what exports need from the rollouts: the best successful hinted trajectory
    (``demonstration``, hints still in its user turn), every rollout's trajectory (for the tool
    schemas), and the rollout counts.
    """
    task = gated.task
    best = best_hinted_rollout(gated)
    return WorldTaskRecord(
        task_id=task.task_id,
        family="world",
        seed_key=task.persona_id,
        instruction=task.instruction,
        environment=WorldEnvironmentRef(
            persona_id=task.persona_id,
            day=task.day,
            template=task.template,
            interface_flow=list(task.interface_flow),
            hints=list(task.hints),
            checklist=[item.model_dump() for item in task.checklist],
        ),
        criteria=list(task.criteria),
        metadata={
            "difficulty": gated.difficulty or "unknown",
            "interfaces_needed": list(task.interfaces_needed),
            "depends_on_days": list(task.depends_on_days),
            "rollouts": len(gated.rollouts),
            "rollout_success": sum(r.verdict == 1 for r in gated.rollouts),
            "demonstration": None if best is None else [dict(m) for m in best.trajectory],
            "trajectories": [r.trajectory for r in gated.rollouts],
            # the operations that turn the day into W0: a trainer row rebuilds the task from them
            "setup": [op.model_dump(mode="json") for op in task.setup],
        },
        provenance=Provenance(generator=GENERATOR, generator_version=WORLD_GENERATOR, seed=task.index),
        gates=list(gated.gates),
        status=gated.status,
        reasons=list(gated.reasons),
    )
