"""The calibrated transfer prior: shrinkage estimate, per-family fallback, the selector using it."""

from __future__ import annotations

import random

import pytest

from envpipeline.errors import ConfigError
from envpipeline.forge.ledger import append_ledger, calibrated_config, observations_from_rows, read_ledger
from envpipeline.models.selection import SeedPassRate
from envpipeline.select.actions import SelectorConfig, objective_weight, prior_deltas, projected_pass_rate
from envpipeline.select.calibration import TransferObservation, calibrate, map_fit, shrunk_fit
from envpipeline.select.selector import select_actions

PRIOR = prior_deltas(SelectorConfig())


def observed(projection, direction, pairs, family=None):
    return [
        TransferObservation(
            seed_id=f"s{i}",
            projection=projection,
            direction=direction,
            family=family,
            seed_pass_rate=p,
            measured_pass_rate=q,
        )
        for i, (p, q) in enumerate(pairs)
    ]


def multiplied(factor, n, seed=0):
    """n pairs of a solver whose increase multiplies p by `factor` (measured with K = 32 noise)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        p = rng.randint(4, 32) / 32
        q = sum(rng.random() < p * factor for _ in range(32)) / 32
        out.append((p, q))
    return out


def test_without_data_the_fit_is_the_default_prior():
    fit = calibrate([], PRIOR).fit_for("increase_complexity", "in_depth")
    assert fit is not None and fit.source == "prior" and fit.observations == 0
    assert (fit.a, fit.b) == pytest.approx((-0.25, 0.0))
    assert fit.project(0.8) == pytest.approx(0.55) and fit.project(0.1) == 0.0


def test_little_data_stays_near_the_prior_and_much_data_follows_it():
    truth = 0.6  # p' = 0.6 p: at p = 0.8 the data say 0.48, the prior 0.55
    few = calibrate(observed("increase_complexity", "in_depth", [(0.8, 0.48)]), PRIOR)
    fit = few.fit_for("increase_complexity", "in_depth")
    assert fit is not None and fit.source == "global" and fit.observations == 1
    assert abs(fit.project(0.8) - 0.55) < abs(fit.project(0.8) - 0.48)
    many = calibrate(observed("increase_complexity", "in_depth", multiplied(truth, 2000)), PRIOR)
    fit = many.fit_for("increase_complexity", "in_depth")
    assert (
        fit is not None and fit.a == pytest.approx(0.0, abs=0.02) and fit.b == pytest.approx(-0.4, abs=0.03)
    )
    for p in (0.2, 0.5, 0.9):
        assert fit.project(p) == pytest.approx(truth * p, abs=0.02)
    # the other variants saw nothing: still the prior
    other = many.fit_for("increase_complexity", "in_breadth")
    assert other is not None and other.source == "prior" and other.a == pytest.approx(-0.25)


def test_the_prior_weighs_as_much_as_strength_observations():
    pairs = [(p / 10, p / 10 - 0.1) for p in range(11)]  # data: a = -0.1, b = 0
    weak = shrunk_fit(pairs, (-0.3, 0.0), strength=0.01)[:2]
    strong = shrunk_fit(pairs, (-0.3, 0.0), strength=1e6)[:2]
    even = shrunk_fit(pairs * 8, (-0.3, 0.0), strength=88)[:2]
    assert weak == pytest.approx((-0.1, 0.0), abs=1e-3)
    assert strong == pytest.approx((-0.3, 0.0), abs=1e-3)
    assert even[0] == pytest.approx(-0.2, abs=0.01)  # as many pseudo-observations as data: halfway


def test_a_saturating_move_is_fitted_with_its_clip_not_as_a_line():
    # reduce with a solver of skill 2/3: p' = 1.5 p, saturating at 1 from p = 2/3 on
    pairs = [(p / 40, min(1.0, 1.5 * p / 40)) for p in range(41)]
    a, b, n = map_fit(pairs, (0.25, 0.0), strength=0.1)
    assert n == 41 and a == pytest.approx(0.0, abs=0.02) and b == pytest.approx(0.5, abs=0.03)
    line = shrunk_fit(pairs, (0.25, 0.0), strength=0.1)  # the unclipped ridge fit misses both ends
    fit = calibrate(observed("reduce_complexity", "in_depth", pairs), PRIOR, strength=0.1)
    model = fit.fit_for("reduce_complexity", "in_depth")
    assert model is not None
    for p in (0.2, 0.4, 0.9):
        assert model.project(p) == pytest.approx(min(1.0, 1.5 * p), abs=0.02)
    assert abs(min(1.0, 0.6 + line[0] + line[1] * 0.6) - 0.9) > 0.1


def test_a_family_with_enough_data_gets_its_own_fit_else_the_global_one():
    data = observed("reduce_complexity", "in_breadth", multiplied(1.0, 40), family="csv-json-merge")
    data += observed("reduce_complexity", "in_breadth", [(0.2, 0.9)] * 30, family="sqlite-query")
    data += observed("reduce_complexity", "in_breadth", [(0.5, 0.5)] * 2, family="git-operations")
    cal = calibrate(data, PRIOR, min_family_observations=4)
    overall = cal.fit_for("reduce_complexity", "in_breadth")
    rare = cal.fit_for("reduce_complexity", "in_breadth", "git-operations")
    unseen = cal.fit_for("reduce_complexity", "in_breadth", "cron-scheduling")
    jumpy = cal.fit_for("reduce_complexity", "in_breadth", "sqlite-query")
    flat = cal.fit_for("reduce_complexity", "in_breadth", "csv-json-merge")
    assert overall is not None and rare == overall and unseen == overall and overall.observations == 72
    assert jumpy is not None and flat is not None and jumpy.source == flat.source == "family"
    assert jumpy.project(0.2) > overall.project(0.2) > flat.project(0.2)
    assert flat.project(0.5) == pytest.approx(0.5, abs=0.08)


def seeds_at(p, n=3):
    return [
        SeedPassRate(seed_id=f"s{i}", pass_rate=p, required_skills=["json"], family="json-transform")
        for i in range(n)
    ]


def test_the_selector_follows_the_calibrated_direction_not_the_affinity():
    seeds = seeds_at(0.9)
    plain, _ = select_actions(seeds, backend="enumerate")
    assert {d.action_variant for d in plain} == {"increase_complexity/in_depth"}  # the prior's tie-break
    # measured: in_depth rewrites barely move a seed at 0.9, in_breadth ones halve it
    depth = observed("increase_complexity", "in_depth", [(p / 10, p / 10) for p in range(11)] * 3)
    breadth = observed("increase_complexity", "in_breadth", [(p / 10, p / 20) for p in range(11)] * 3)
    config = calibrated_config(depth + breadth)
    chosen, _ = select_actions(seeds, backend="enumerate", config=config)
    assert {d.action_variant for d in chosen} == {"increase_complexity/in_breadth"}
    assert chosen[0].projected_pass_rate == pytest.approx(
        projected_pass_rate(0.9, "increase_complexity", "in_breadth", config, "json-transform")
    )
    assert 0.4 < chosen[0].projected_pass_rate < 0.6
    # the same data with the directions swapped choose the other direction
    swapped = [o.model_copy(update={"direction": "in_breadth"}) for o in depth]
    swapped += [o.model_copy(update={"direction": "in_depth"}) for o in breadth]
    chosen, _ = select_actions(seeds, backend="enumerate", config=calibrated_config(swapped))
    assert {d.action_variant for d in chosen} == {"increase_complexity/in_depth"}


def test_the_affinity_is_a_tie_break_of_the_uncalibrated_prior_only():
    config = calibrated_config(observed("diversify_frontier", "in_depth", [(0.5, 0.5)]))
    assert objective_weight(0.7, "increase_complexity", "in_depth", SelectorConfig()) > 0.7
    assert objective_weight(0.7, "increase_complexity", "in_depth", config) == 0.7


def test_the_ledger_round_trips_and_names_a_bad_line(tmp_path):
    path = tmp_path / "ledger.jsonl"
    assert read_ledger(path) == []
    rows = observed("reduce_complexity", "in_depth", [(0.25, 0.5), (0.5, 0.75)], family="json-transform")
    assert append_ledger(path, rows) == 2 and append_ledger(path, rows[:1]) == 1
    assert read_ledger(path) == [*rows, rows[0]]
    with path.open("a") as handle:
        handle.write('{"seed_id": "x", "projection": "grow"}\n')
    with pytest.raises(ConfigError, match=r"ledger.jsonl:4"):
        read_ledger(path)


def test_verified_bundle_rows_become_observations():
    row = {
        "seed_id": "s",
        "bundle_path": "/x/s--increase-depth-s0",
        "action_variant": "increase_complexity/in_depth",
        "accepted": True,
        "family": "json-transform",
        "seed_pass_rate": 0.75,
        "projected_pass_rate": 0.5,
        "measured_pass_rate": 0.5625,
        "rollouts": 16,
        "policy": "solver",
    }
    rejected = {**row, "accepted": False}
    unmeasured = {**row, "measured_pass_rate": None}
    [obs] = observations_from_rows([row, rejected, unmeasured])
    assert (obs.task_name, obs.family, obs.seed_pass_rate, obs.measured_pass_rate) == (
        "s--increase-depth-s0",
        "json-transform",
        0.75,
        0.5625,
    )
