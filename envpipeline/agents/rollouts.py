"""Rollout groups and SFT trajectories of composed tasks, scored with CFRR and GRPO advantages."""

from __future__ import annotations

import json
from typing import Any

from envpipeline.agents.environment import ComposedEnvironment
from envpipeline.agents.metatools import META_TOOL_SCHEMAS
from envpipeline.agents.scripted import ScriptedAgent
from envpipeline.errors import ConfigError
from envpipeline.models.task import TaskRecord
from envpipeline.policies.base import ComposedTarget, Policy, RolloutRecord
from envpipeline.policies.registry import PolicyConfig, build_policy
from envpipeline.rewards.cfrr import grpo_advantages
from envpipeline.rewards.held_at_start import held_rewards
from envpipeline.rewards.modes import cfrr
from envpipeline.rubric import held_at_start


def sft_trajectory(task: TaskRecord) -> list[dict[str, Any]] | None:
    """The reference solution executed through the meta-tools, or None if it does not pass."""
    rollout = ScriptedAgent(error_rate=0.0).run(task)
    return rollout.messages if all(rollout.passes) else None


def rollout_group(
    task: TaskRecord,
    group_size: int = 6,
    error_rate: float = 0.1,
    floor: float = 0.1,
    seed: int = 0,
    policy: Policy | None = None,
) -> dict[str, Any]:
    """Run `group_size` episodes of `policy` (default: the scripted agent at `error_rate`, `seed`);
    return the pass matrix, CFRR rewards (over the criteria the initial state does not already
    meet: `rewards.held_at_start`) and advantages."""
    player = policy or build_policy(PolicyConfig(seed=seed, error_rate=error_rate))
    records = [player.rollout(ComposedTarget(task), i) for i in range(group_size)]
    matrix = [_passes(task, r) for r in records]
    initial = ComposedEnvironment.from_task_environment(task.environment).states
    rewards = held_rewards(cfrr, matrix, None, held_at_start(list(task.criteria), initial), floor, 1.0)
    return {
        "task_id": task.task_id,
        "group_size": group_size,
        "error_rate": error_rate,
        "pass_matrix": json.dumps(matrix),
        "rewards": json.dumps([round(r, 6) for r in rewards]),
        "advantages": json.dumps([round(a, 6) for a in grpo_advantages(rewards)]),
        "mean_reward": sum(rewards) / group_size,
        "full_success_rate": sum(all(row) for row in matrix) / group_size,
        "zero_signal": len(set(rewards)) == 1,
        "tool_calls": sum(r.steps for r in records),
    }


def _passes(task: TaskRecord, record: RolloutRecord) -> list[bool]:
    """The record's per-criterion results in the task's criterion order (CFRR needs them)."""
    ids = [c.id for c in task.criteria]
    if record.criteria is None or set(record.criteria) != set(ids):
        raise ConfigError(
            f"policy {record.policy!r} gave no per-criterion results for every criterion of task "
            f"{task.task_id!r} ({ids}); CFRR rollout groups need them"
        )
    return [record.criteria[c] for c in ids]


def rollout_rows(
    tasks: list[TaskRecord], group_size: int = 6, error_rate: float = 0.1, policy: Policy | None = None
) -> list[dict[str, Any]]:
    """One row per accepted task: its SFT trajectory and one scored rollout group."""
    rows = []
    for task in tasks:
        if task.status != "accepted":
            continue
        messages = sft_trajectory(task)
        rows.append(
            {
                **rollout_group(task, group_size, error_rate, policy=policy),
                "sft_messages": json.dumps(messages) if messages is not None else None,
                "tools": json.dumps(META_TOOL_SCHEMAS),
            }
        )
    return rows
