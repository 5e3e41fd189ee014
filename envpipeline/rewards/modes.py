"""Reward modes: how a rollout group's criteria pass matrix becomes one reward per rollout.

Each mode registers here under its name; `score_group` (export/rewards.py) looks it up. Every mode
keeps the contract `check_reward_mode` tests: a full pass scores 1.0, any partial pass strictly
less, a rollout that passes nothing 0.0.

* ``cfrr``: Completion-Focused Rubric Reward (`envpipeline.rewards.cfrr`); optional prior
  weights multiply the CFRR weights before normalization;
* ``checklist``: weighted share of criteria passed (uniform weights by default);
* ``binary``: 1.0 when every criterion passes, else 0.0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from envpipeline.plugins import PluginRegistry
from envpipeline.rewards.cfrr import cfrr_rewards, checklist_rewards, criterion_weights

PassMatrix = Sequence[Sequence[bool]]


class RewardMode(Protocol):
    """Rewards of one group from its pass matrix (rows: rollouts, columns: criteria)."""

    def __call__(
        self, pass_matrix: PassMatrix, weights: Sequence[float] | None, floor: float, partial_scale: float
    ) -> list[float]: ...


_REGISTRY: PluginRegistry[RewardMode] = PluginRegistry("reward mode", __name__)


def register_reward_mode(name: str, mode: RewardMode) -> RewardMode:
    """Add a reward mode; a second, different one under a taken name is an error."""
    return _REGISTRY.register(name, mode)


def reward_modes() -> dict[str, RewardMode]:
    """Every reward mode by name."""
    return _REGISTRY.all()


def get_reward_mode(name: str) -> RewardMode:
    """One reward mode by name, with a clear error listing the known ones."""
    return _REGISTRY.get(name)


def binary(
    pass_matrix: PassMatrix, weights: Sequence[float] | None, floor: float, partial_scale: float
) -> list[float]:
    """1.0 when every criterion passes, else 0.0."""
    return [1.0 if all(row) else 0.0 for row in pass_matrix]


def checklist(
    pass_matrix: PassMatrix, weights: Sequence[float] | None, floor: float, partial_scale: float
) -> list[float]:
    """The (weighted) share of criteria passed."""
    if weights is None:
        return checklist_rewards(pass_matrix)
    total = sum(weights)
    return [sum(w for w, ok in zip(weights, row) if ok) / total for row in pass_matrix]


def cfrr(
    pass_matrix: PassMatrix, weights: Sequence[float] | None, floor: float, partial_scale: float
) -> list[float]:
    """CFRR: rarely passed criteria weigh more; a full pass is 1.0, partial credit scaled below it."""
    if weights is None:
        return cfrr_rewards(pass_matrix, floor=floor, partial_scale=partial_scale)
    raw = [w * p for w, p in zip(criterion_weights(pass_matrix, floor), weights)]
    normalized = [w / sum(raw) for w in raw]
    return [
        1.0 if all(row) else partial_scale * sum(w for w, ok in zip(normalized, row) if ok)
        for row in pass_matrix
    ]


for _name, _mode in (("cfrr", cfrr), ("checklist", checklist), ("binary", binary)):
    register_reward_mode(_name, _mode)


def check_reward_mode(mode: RewardMode, width: int = 4) -> list[str]:
    """Contract violations of a mode over every pass vector of `width` criteria (empty when it holds)."""
    rows = [[bool(bits >> c & 1) for c in range(width)] for bits in range(2**width)]
    problems = []
    for weights in (None, [float(c + 1) for c in range(width)]):
        rewards = mode(rows, weights, 0.1, 1.0)
        for row, reward in zip(rows, rewards):
            if all(row) and reward != 1.0:
                problems.append(f"full pass scores {reward}, not 1.0 (weights {weights})")
            if not all(row) and not reward < 1.0:
                problems.append(f"partial pass {row} scores {reward}, not below 1.0 (weights {weights})")
            if not any(row) and reward != 0.0:
                problems.append(f"nothing passed scores {reward}, not 0.0 (weights {weights})")
    return problems
