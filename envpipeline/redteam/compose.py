"""The red-team gate of composed tasks: every policy attacks a fresh copy of the stored environment.

The task passes when no policy earns binary reward 1 (a policy that ends in exactly the
reference's state and reply did the task, and does not count). Each policy's binary, checklist
and CFRR scores are the gate's evidence, and a rejection names the policies that broke the task.
"""

from __future__ import annotations

from typing import Any

from envpipeline.agents.environment import ComposedEnvironment
from envpipeline.agents.reference import run_reference
from envpipeline.models.gates import GateResult
from envpipeline.models.task import TaskRecord
from envpipeline.redteam.base import ComposeAttack, PolicyOutcome, RedTeamPolicy, ReferenceRun
from envpipeline.redteam.registry import policies_for
from envpipeline.redteam.summary import red_team_gate_result
from envpipeline.rewards.held_at_start import held_rewards
from envpipeline.rewards.modes import cfrr, checklist
from envpipeline.rubric import collateral_narrowed, held_at_start, pass_vector


def stored_states(task: TaskRecord) -> dict[str, dict[str, Any]]:
    """The joint initial state agents get (distractors included), as plain JSON."""
    return ComposedEnvironment.from_task_environment(task.environment).snapshot()


def reference_run(task: TaskRecord, stored: dict[str, dict[str, Any]]) -> ReferenceRun:
    """Run the reference once on a fresh environment and keep its resolved calls and final state."""
    env = ComposedEnvironment.from_initial_state(stored)
    steps = [s.model_copy(deep=True) for s in task.reference_solution]
    observations, _ = run_reference(env, steps, [], task.reference_output)
    collateral = [c for c in task.criteria if c.kind == "state_preserved"]
    holds = all(pass_vector(collateral, env.states, task.reference_output))
    return ReferenceRun(steps, observations, task.reference_output, dict(env.states), holds)


def judged(
    task: TaskRecord, env: ComposedEnvironment, reply: str, reference: ReferenceRun
) -> tuple[list[bool], bool]:
    """An attempt's pass vector on its final state and reply, and whether that state is another
    than the reference's. The collateral checks hash only the services whose state differs from
    the reference's, when the reference passes them (the verdict is the same; the cost is not)."""
    final = reference.final_states
    differing = {name for name, state in env.states.items() if final.get(name) != state}
    criteria = collateral_narrowed(task.criteria, differing) if reference.collateral_holds else task.criteria
    return pass_vector(criteria, env.states, reply), bool(differing)


def attack(
    task: TaskRecord, policy: RedTeamPolicy, stored: dict[str, dict[str, Any]], reference: ReferenceRun
) -> tuple[list[bool], bool, int]:
    """One policy against one task: its pass vector, whether it was moot, and its call count."""
    attempt = ComposeAttack(task, ComposedEnvironment.from_initial_state(stored), reference)
    reply = policy.attack_compose(attempt)
    passes, differs = judged(task, attempt.env, reply, reference)
    moot = not attempt.blind and reply == reference.output and not differs
    return passes, moot, len(attempt.calls)


def red_team(
    task: TaskRecord,
    stored: dict[str, dict[str, Any]] | None = None,
    policies: list[RedTeamPolicy] | None = None,
) -> list[PolicyOutcome]:
    """Every composed-task policy (or the given ones) against `task`, scored as a group with the reference."""
    stored = stored if stored is not None else stored_states(task)
    reference = reference_run(task, stored)
    policies = [
        p for p in (policies if policies is not None else policies_for("compose")) if p.applies_to(task)
    ]
    results = [attack(task, policy, stored, reference) for policy in policies]
    held = held_at_start(task.criteria, ComposedEnvironment.from_initial_state(stored).states)
    matrix = [[True] * len(task.criteria)] + [passes for passes, _, _ in results]
    rewards = held_rewards(cfrr, matrix, None, held, 0.1, 1.0)[1:]
    credit = held_rewards(checklist, matrix[1:], None, held, 0.0, 1.0) if task.criteria else []
    return [
        PolicyOutcome(
            policy=policy.name,
            binary=float(all(passes)),
            checklist=round(share, 4) if passes else 0.0,
            cfrr=round(reward, 4),
            moot=moot,
            calls=calls,
            failed=[c.id for c, ok in zip(task.criteria, passes) if not ok],
        )
        for policy, (passes, moot, calls), reward, share in zip(policies, results, rewards, credit)
    ]


def red_team_gate(task: TaskRecord, stored: dict[str, dict[str, Any]] | None = None) -> GateResult:
    """Gate: no red-team policy earns full reward on the task."""
    outcomes = red_team(task, stored)
    return red_team_gate_result(outcomes)
