"""CFRR rewards, checklist rewards and GRPO advantages."""

from __future__ import annotations

import statistics

import pytest

from envpipeline.rewards.cfrr import cfrr_rewards, checklist_rewards, criterion_weights, grpo_advantages

T, F = True, False
GROUP = [
    [T, T, T, T],
    [T, T, F, T],
    [T, F, F, T],
    [T, T, T, F],
    [F, F, F, F],
    [T, T, T, T],
]


def test_full_pass_scores_one_and_partials_score_strictly_less():
    rewards = cfrr_rewards(GROUP)
    full = [r for r, row in zip(rewards, GROUP) if all(row)]
    partial = [r for r, row in zip(rewards, GROUP) if not all(row)]
    assert full == [1.0, 1.0]
    assert all(0.0 <= r < 1.0 for r in partial)
    assert max(partial) < min(full)


def test_missing_only_an_easy_criterion_still_scores_below_full():
    group = [[T, T, T]] * 9 + [[T, T, F]]
    rewards = cfrr_rewards(group, floor=0.01)
    assert rewards[-1] < 1.0
    assert rewards[:9] == [1.0] * 9


def test_partial_credit_respects_the_scale():
    scaled = cfrr_rewards(GROUP, partial_scale=0.5)
    plain = cfrr_rewards(GROUP)
    for row, s, p in zip(GROUP, scaled, plain):
        assert s == (1.0 if all(row) else pytest.approx(p / 2))


def test_harder_criteria_weigh_more():
    weights = criterion_weights(GROUP)
    rates = [sum(row[c] for row in GROUP) / len(GROUP) for c in range(4)]
    for a in range(4):
        for b in range(4):
            if rates[a] < rates[b]:
                assert weights[a] > weights[b], (rates, weights)
            elif rates[a] == rates[b]:
                assert weights[a] == pytest.approx(weights[b])


def test_weights_sum_to_one_and_raw_weights_respect_the_floor():
    for floor in (0.05, 0.1, 0.5, 1.0):
        weights = criterion_weights(GROUP, floor)
        assert sum(weights) == pytest.approx(1.0)
        rates = [sum(row[c] for row in GROUP) / len(GROUP) for c in range(4)]
        raw = [floor + (1 - floor) * (1 - p) for p in rates]
        assert all(w >= floor for w in raw)
        assert weights == pytest.approx([w / sum(raw) for w in raw])
        # every normalized weight is at least the floor share of the largest possible total
        assert min(weights) >= floor / len(weights) - 1e-12


def test_every_rollout_failing_a_criterion_gives_it_the_largest_weight():
    group = [[T, F, T], [F, F, T], [T, F, T]]
    weights = criterion_weights(group)
    assert weights[1] == max(weights)
    assert weights[2] == min(weights) > 0


def test_floor_one_gives_equal_weights():
    assert criterion_weights(GROUP, 1.0) == pytest.approx([0.25] * 4)


@pytest.mark.parametrize("floor", [0.0, -0.1, 1.5])
def test_invalid_floor_is_rejected(floor):
    with pytest.raises(ValueError, match="floor"):
        criterion_weights(GROUP, floor)


@pytest.mark.parametrize("group", [[], [[]], [[T, F], [T]]])
def test_malformed_groups_are_rejected(group):
    with pytest.raises(ValueError):
        criterion_weights(group)


@pytest.mark.parametrize("scale", [0.0, 1.5])
def test_invalid_partial_scale_is_rejected(scale):
    with pytest.raises(ValueError, match="partial_scale"):
        cfrr_rewards(GROUP, partial_scale=scale)


def test_grpo_advantages_are_centred_and_order_preserving():
    rewards = cfrr_rewards(GROUP)
    advantages = grpo_advantages(rewards)
    assert statistics.fmean(advantages) == pytest.approx(0.0, abs=1e-9)
    assert statistics.stdev(advantages) == pytest.approx(1.0, rel=1e-3)
    for ra, aa in zip(rewards, advantages):
        for rb, ab in zip(rewards, advantages):
            if ra > rb:
                assert aa > ab


@pytest.mark.parametrize("rewards", [[0.4] * 5, [1.0, 1.0], [0.0]])
def test_grpo_constant_group_has_zero_advantage(rewards):
    assert grpo_advantages(rewards) == [0.0] * len(rewards)


def test_grpo_empty_group():
    assert grpo_advantages([]) == []


def test_checklist_rewards_are_pass_shares():
    assert checklist_rewards(GROUP) == [1.0, 0.75, 0.5, 0.75, 0.0, 1.0]
