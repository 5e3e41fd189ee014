r"""Completion-Focused Rubric Reward (CFRR) and GRPO group advantages.

For a rollout group of G trajectories and C criteria with pass matrix s[i][c] in {0, 1}:

    p_c   = (1/G) * sum_i s[i][c]                        group pass rate of criterion c
    w_c   = lam + (1 - lam) * (1 - p_c)                  raw weight: lower pass rate -> heavier,
                                                         and never below the floor lam > 0
    w^_c  = w_c / sum_c' w_c'                            normalized weights (sum to 1)
    r_i   = 1.0                            if every criterion passes for rollout i
          = kappa * sum_c w^_c * s[i][c]   otherwise (partial credit, kappa <= 1)

Because every w^_c > 0, a rollout that misses any criterion scores strictly below
kappa <= 1.0, so full completion always sits strictly above any partial score. A criterion that
every rollout fails gets the largest weight but cannot separate rollouts (paper, section 4.3).

GRPO advantage: A_i = (r_i - mean(r)) / (std(r) + eps), unbiased std; a group whose rewards are
all equal gets A = 0 for everyone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def criterion_weights(pass_matrix: Sequence[Sequence[bool]], floor: float = 0.1) -> list[float]:
    """Normalized CFRR weights of each criterion for one rollout group."""
    if not 0.0 < floor <= 1.0:
        raise ValueError("the weight floor lambda must be in (0, 1]")
    if not pass_matrix or not pass_matrix[0]:
        raise ValueError("a rollout group needs at least one rollout and one criterion")
    n = len(pass_matrix)
    width = len(pass_matrix[0])
    if any(len(row) != width for row in pass_matrix):
        raise ValueError("every rollout must report the same criteria")
    rates = [sum(bool(row[c]) for row in pass_matrix) / n for c in range(width)]
    raw = [floor + (1.0 - floor) * (1.0 - p) for p in rates]
    total = sum(raw)
    return [w / total for w in raw]


def cfrr_rewards(
    pass_matrix: Sequence[Sequence[bool]], floor: float = 0.1, partial_scale: float = 1.0
) -> list[float]:
    """CFRR reward of each rollout in a group (see the module docstring)."""
    if not 0.0 < partial_scale <= 1.0:
        raise ValueError("partial_scale must be in (0, 1]")
    weights = criterion_weights(pass_matrix, floor)
    rewards = []
    for row in pass_matrix:
        if all(row):
            rewards.append(1.0)
        else:
            rewards.append(partial_scale * sum(w for w, ok in zip(weights, row) if ok))
    return rewards


def checklist_rewards(pass_matrix: Sequence[Sequence[bool]]) -> list[float]:
    """Unweighted partial credit: the share of criteria each rollout passes."""
    return [sum(map(bool, row)) / len(row) for row in pass_matrix]


def grpo_advantages(rewards: Sequence[float], eps: float = 1e-6) -> list[float]:
    """Group-relative advantages (r - mean) / (unbiased std + eps)."""
    n = len(rewards)
    if n == 0:
        return []
    mean = sum(rewards) / n
    if n == 1:
        return [0.0]
    std = math.sqrt(sum((r - mean) ** 2 for r in rewards) / (n - 1))
    return [(r - mean) / (std + eps) for r in rewards]
