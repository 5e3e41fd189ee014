"""The red-team gate of world tasks: every policy attacks a fresh copy of the task's stored W0.

The reference is the task's scripted solution run by a mistake-free hinted agent through the
real interfaces. A policy acts on its own copy of W0 (through the agent, a modified solution, or
the day's `WorldStore` directly, recording each call as the interface it stands for) and is scored
by the criteria verifier on its final state and trajectory, as a group with the reference for
CFRR. A policy that ends in the reference's exact state through the same writes did the task
(moot). The task passes when no policy earns binary reward 1; rejections name the policy.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from envpipeline.models.gates import GateResult
from envpipeline.models.world_task import WorldTask
from envpipeline.redteam.base import PolicyOutcome, RedTeamPolicy
from envpipeline.redteam.registry import policies_for
from envpipeline.redteam.world_attack import WorldAttack, WorldReference
from envpipeline.rewards.held_at_start import held_rewards
from envpipeline.rewards.modes import cfrr
from envpipeline.scratch import scratch_folder
from envpipeline.worlds.state import world_hash
from envpipeline.worlds.verifier import checklist_credit, evaluate, held_at_start


def write_calls(trajectory: list[dict[str, Any]]) -> list[str]:
    """Names of the tool calls of a trajectory, in order (the interface signature of an attempt)."""
    return [c["function"]["name"] for m in trajectory for c in m.get("tool_calls") or []]


def reference_run(task: WorldTask, w0: Path, work: Path) -> WorldReference:
    """Run the reference on a copy of W0 and keep its trajectory and final hash."""
    final = work / "reference" / w0.name
    shutil.copytree(w0, final)
    attack = WorldAttack(task, w0, final, WorldReference([], "", []))
    attack.run_solution()
    return WorldReference(attack.trajectory, world_hash(final), write_calls(attack.trajectory), final)


def attack_once(
    task: WorldTask, policy: RedTeamPolicy, w0: Path, reference: WorldReference, work: Path
) -> tuple[dict[str, bool], bool, int]:
    """One policy against one task: its criteria results, whether it was moot, and its call count."""
    world = work / policy.name / w0.name
    shutil.copytree(w0, world)
    attack = WorldAttack(task, w0, world, reference)
    policy.attack_world(attack)
    results = evaluate(task, w0, world, attack.trajectory).criteria
    moot = world_hash(world) == reference.final_hash and write_calls(attack.trajectory) == reference.writes
    return results, moot, len(write_calls(attack.trajectory))


def red_team_world(
    task: WorldTask, w0: Path, policies: list[RedTeamPolicy] | None = None
) -> list[PolicyOutcome]:
    """Every world policy (or the given ones) against `task`, scored as a group with the reference."""
    policies = policies if policies is not None else policies_for("world")
    with scratch_folder("wildawm-redteam-") as tmp:
        work = Path(tmp)
        reference = reference_run(task, w0, work)
        results = [attack_once(task, policy, w0, reference, work) for policy in policies]
    ids = [c.id for c in task.criteria]
    held = set(held_at_start(task.criteria))
    matrix = [[True] * len(ids)] + [[r.get(c, False) for c in ids] for r, _, _ in results]
    rewards = (
        held_rewards(cfrr, matrix, None, [c in held for c in ids], 0.1, 1.0)[1:]
        if ids
        else [0.0] * len(policies)
    )
    outcomes = []
    for policy, (passes, moot, calls), reward in zip(policies, results, rewards):
        outcomes.append(
            PolicyOutcome(
                policy=policy.name,
                binary=float(bool(passes) and all(passes.values())),
                checklist=checklist_credit(task, passes),
                cfrr=round(reward, 4),
                moot=moot,
                calls=calls,
                failed=[c for c in ids if not passes.get(c, False)],
            )
        )
    return outcomes


def world_red_team_gate(task: WorldTask, w0: Path, policies: list[RedTeamPolicy] | None = None) -> GateResult:
    """Gate: no policy earns full reward, and each scores strictly below the reference (1.0)."""
    outcomes = red_team_world(task, w0, policies)
    broke = [o.policy for o in outcomes if o.broke]
    partial = [o.policy for o in outcomes if not o.moot and not o.broke and o.checklist >= 1.0]
    failing = broke + partial
    return GateResult(
        name="red_team",
        passed=not failing,
        reason=f"broken by {', '.join(failing)}" if failing else "",
        evidence={
            "policies": {o.policy: o.model_dump(exclude={"policy"}) for o in outcomes},
            "broke": failing,
        },
    )
