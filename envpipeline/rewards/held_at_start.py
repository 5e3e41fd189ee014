"""Partial credit pays for what a rollout brought about, not for what already held at the start.

Some criteria of a task hold in its initial state: ``state_preserved`` ('nothing changed beyond the
records the task asks to change') on every composed and world task, and a composed task's keep
criteria ("'Vendor Review Cobalt' still takes place with mateo.moreau@... invited": the record
beside the one the task changes must survive). They belong in the verifier (a task is done only
when they still hold), but a rollout that does nothing passes them, so a share of criteria paid
inaction: the do-nothing policy earned 0.16 checklist credit on average (up to 0.29) on every
accepted composed task of seeds 0-119, and 0.14-0.25 on a task of every world template.

Here those criteria are conditions, not credit: a reward mode scores the criteria the rollout must
bring about, and a rollout that breaks a criterion that held at the start gets no partial credit
(it destroyed what the task said to keep). A full pass still scores 1.0, any other pass less, and
a rollout that brings nothing about scores 0.0. The paper's rubrics (CompoWorld §4.3) have no such
criteria, so for them this is CFRR as written: every criterion the agent must achieve keeps a
positive weight.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from envpipeline.rewards.modes import PassMatrix, RewardMode


def held_rewards(
    mode: RewardMode,
    pass_matrix: PassMatrix,
    weights: Sequence[float] | None,
    held: Sequence[bool],
    floor: float,
    partial_scale: float,
) -> list[float]:
    """`mode`'s rewards over the criteria not `held` at the start, 0.0 for a row that breaks a held one.

    Without held criteria (or with nothing else to achieve) this is `mode` itself.
    """
    goals = [c for c, was in enumerate(held) if not was]
    kept = [c for c, was in enumerate(held) if was]
    if not kept or not goals:
        return mode(pass_matrix, weights, floor, partial_scale)
    goal_rows = [[row[c] for c in goals] for row in pass_matrix]
    goal_weights = [weights[c] for c in goals] if weights is not None else None
    scored = mode(goal_rows, goal_weights, floor, partial_scale)
    return [reward if all(row[c] for c in kept) else 0.0 for reward, row in zip(scored, pass_matrix)]


def held_checklist(
    items: Sequence[tuple[float, Sequence[str]]], results: Mapping[str, bool], held: Collection[str]
) -> float:
    """Weighted checklist credit (items of (weight, criterion ids)) counting only items with a
    criterion not `held` at the start, and 0.0 when a held criterion fails."""
    if any(not results.get(c, False) for c in held):
        return 0.0
    scored = [(weight, ids) for weight, ids in items if not set(ids) <= set(held)] or list(items)
    total = sum(weight for weight, _ in scored)
    got = sum(weight for weight, ids in scored if all(results.get(c, False) for c in ids))
    return round(got / total, 4) if total else 0.0


def check_held_mode(mode: RewardMode, width: int = 4) -> list[str]:
    """Contract violations of `mode` under `held_rewards` over every pass vector of `width` criteria,
    the first of which held at the start (empty when it holds)."""
    held = [True] + [False] * (width - 1)
    rows = [[bool(bits >> c & 1) for c in range(width)] for bits in range(2**width)]
    problems = []
    for weights in (None, [float(c + 1) for c in range(width)]):
        for row, reward in zip(rows, held_rewards(mode, rows, weights, held, 0.1, 1.0)):
            if all(row) and reward != 1.0:
                problems.append(f"full pass scores {reward}, not 1.0 (weights {weights})")
            if not all(row) and not reward < 1.0:
                problems.append(f"partial pass {row} scores {reward}, not below 1.0 (weights {weights})")
            if not any(row[1:]) and reward != 0.0:
                problems.append(f"only the held criterion {row} scores {reward}, not 0.0 (weights {weights})")
            if not row[0] and reward != 0.0:
                problems.append(f"a broken held criterion {row} scores {reward}, not 0.0 (weights {weights})")
    return problems
