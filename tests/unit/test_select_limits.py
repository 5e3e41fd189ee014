"""Selector time limits, recorded fallbacks and the exact core reduction (issue #16)."""

from __future__ import annotations

import json
import logging
import random
import subprocess
import sys
from pathlib import Path

import pytest

from envpipeline.models.selection import SeedPassRate
from envpipeline.select import milp, selector
from envpipeline.select.actions import SelectorConfig
from envpipeline.select.core import reduce_problem
from envpipeline.select.milp import solve_in_process
from envpipeline.select.problem import Problem, enumerate_exact, evaluate, greedy
from envpipeline.select.selector import build_problem, scaled_time_limit, select_actions
from envpipeline.select.skills import VOCABULARY, build_candidates

REPO = Path(__file__).resolve().parents[2]


def _seeds(n: int, seed: int) -> list[SeedPassRate]:
    rng = random.Random(seed)
    names = sorted(VOCABULARY)
    return [
        SeedPassRate(
            seed_id=f"s{i}",
            pass_rate=rng.randint(0, 8) / 8,
            required_skills=rng.sample(names, rng.randint(1, 2)),
            optional_skills=rng.sample(names, rng.randint(0, 1)),
        )
        for i in range(n)
    ]


def _binding(rng: random.Random) -> Problem:
    """A small portfolio whose coverage rows bind (optional carriers, ties in the weights)."""
    nodes = [f"v{k}" for k in range(rng.randint(3, 5))]
    weights: list[float] = []
    groups: list[list[int]] = []
    req: dict[str, list[int]] = {}
    opt: dict[str, list[int]] = {}
    for _ in range(rng.randint(8, 14)):
        groups.append([])
        for _ in range(rng.randint(1, 4)):
            c = len(weights)
            weights.append(rng.choice([0.2, 0.45, 0.7, 0.9, 1.0]) + rng.choice([0.0, 1e-3]))
            groups[-1].append(c)
            required = rng.sample(nodes, rng.choice([0, 1, 1, 2]))
            for v in required:
                req.setdefault(v, []).append(c)
            for v in rng.sample([v for v in nodes if v not in required], rng.choice([0, 0, 1])):
                opt.setdefault(v, []).append(c)
    coverage = {v: round(rng.uniform(0.2, 0.6), 3) for v in nodes}
    target = rng.randint(max(1, len(groups) // 4), (3 * len(groups)) // 4)
    return Problem("portfolio", weights, groups, target, req, opt, coverage, optional_penalty=0.01)


def test_scaled_limit_grows_with_the_instance_and_is_capped() -> None:
    config = SelectorConfig()
    limits = [scaled_time_limit(n, config) for n in (10, 24_000, 120_000, 10_000_000)]
    assert limits[0] < limits[1] < limits[2] and limits[3] == config.time_limit_max
    assert limits[1] == pytest.approx(10 + 0.5 * 24)  # documented: 10 s + 0.5 s per 1,000 candidates
    # the selector uses it when no limit is given, and records where its limit came from
    runs = []
    for n in (60, 600):
        _, trace = select_actions(_seeds(n, seed=3), mode="portfolio", target=n // 3)
        assert trace.solver is not None and trace.solver.time_limit_source == "scaled"
        assert trace.solver.time_limit == pytest.approx(scaled_time_limit(trace.solver.candidates, config))
        runs.append(trace.solver.time_limit)
    assert runs[0] < runs[1]
    _, trace = select_actions(_seeds(60, seed=3), mode="portfolio", target=20, time_limit=7.5)
    assert trace.solver is not None and (trace.solver.time_limit, trace.solver.time_limit_source) == (
        7.5,
        "explicit",
    )
    cfg = SelectorConfig(time_limit=4.0)
    _, trace = select_actions(_seeds(60, seed=3), mode="portfolio", target=20, config=cfg)
    assert trace.solver is not None and (trace.solver.time_limit, trace.solver.time_limit_source) == (
        4.0,
        "explicit",
    )


def test_tiny_limit_fallback_is_recorded_with_its_reason(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # SCIP in process with a limit far too small (no reduction): it stops itself at the limit
    def stop_at_limit(p, warm, seed, limit, start_method="fork"):  # noqa: ANN001, ANN202, ARG001
        return solve_in_process(p, warm, seed, limit, reduce=False)

    monkeypatch.setattr(selector, "solve_scip", stop_at_limit)
    with caplog.at_level(logging.WARNING, logger="envpipeline.select.selector"):
        decisions, trace = select_actions(
            _seeds(3000, seed=1), mode="portfolio", target=1000, backend="scip", time_limit=0.05
        )
    r = trace.solver
    assert r is not None and r.status == "timelimit" and r.time_limit_hit and r.time_limit == 0.05
    assert trace.backend == "greedy" and trace.status == "timelimit" and len(decisions) == 1000
    reason = trace.fallback_reason or ""
    assert "0.05 s time limit" in reason and "status 'timelimit'" in reason
    # stopped before the warm start was even read back: no gap, and the reason says so
    assert ("no solution" in reason) if r.gap is None else (f"gap {100 * r.gap:.4g}%" in reason)
    assert any(reason in rec.getMessage() for rec in caplog.records), "the fallback must be logged"


def test_optimal_answer_equals_brute_force_with_and_without_reduction() -> None:
    rng = random.Random(16)
    reduced_solves = 0
    for _ in range(30):
        p = _binding(rng)
        exact = enumerate_exact(p)
        warm = greedy(p)
        for reduce in (False, True):
            r = solve_in_process(p, warm, seed=0, time_limit=30, reduce=reduce)
            if exact is None:
                assert r.status == "infeasible"
                continue
            assert r.status == "optimal" and r.objective == pytest.approx(exact.objective, abs=1e-6)
            assert r.chosen is not None and evaluate(p, r.chosen).objective == pytest.approx(
                exact.objective, abs=1e-6
            )
            reduced_solves += reduce and r.reduction is not None
    assert reduced_solves >= 5, "the reduction must actually remove candidates on some instances"


def test_reduction_keeps_the_optimum_of_a_larger_portfolio() -> None:
    config = SelectorConfig()
    p, _, _ = build_problem(build_candidates(_seeds(1500, seed=5), config), "portfolio", 500, config)
    warm = greedy(p)
    reduced = reduce_problem(p, warm, deadline=float("inf"))
    assert reduced is not None and reduced[2].kept < p.n and reduced[2].bound >= warm.objective - 1e-6
    full = solve_in_process(p, warm, seed=0, time_limit=120, reduce=False)
    fast = solve_in_process(p, warm, seed=0, time_limit=120, reduce=True)
    assert full.status == fast.status == "optimal" and fast.reduction is not None
    assert fast.objective == pytest.approx(full.objective, abs=1e-6)
    assert fast.dual_bound is not None and fast.dual_bound >= full.objective - 1e-6  # type: ignore[operator]


def test_default_solve_of_a_large_portfolio_reports_the_reduction() -> None:
    p_size = milp.REDUCE_MIN_CANDIDATES
    _, trace = select_actions(_seeds(1200, seed=2), mode="portfolio", target=400)
    r = trace.solver
    assert trace.status == "optimal" and trace.fallback_reason is None and r is not None
    assert r.candidates >= p_size and r.core_candidates is not None and r.core_candidates < r.candidates
    assert not r.time_limit_hit and r.proof in ("scip", "lagrangian bound")


def test_a_timelimit_reason_gives_gap_and_bounds() -> None:
    r = milp.ScipResult(
        status="timelimit", objective=19.5, seconds=10.2, time_limit=10.0, gap=0.0125, dual_bound=19.74375
    )
    assert selector._reason(r) == (  # pyright: ignore[reportPrivateUsage]
        "SCIP hit its 10 s time limit after 10.2 s (status 'timelimit', gap 1.25%, best 19.500000, "
        "bound 19.743750); only 'optimal' is accepted"
    )


def test_cli_shows_the_limit_and_the_fallback(tmp_path: Path) -> None:
    path = tmp_path / "rates.jsonl"
    path.write_text("".join(json.dumps(s.model_dump()) + "\n" for s in _seeds(3000, seed=1)))
    run = subprocess.run(
        [sys.executable, "-m", "envpipeline.cli", "select", "--pass-rates", str(path), "--mode", "portfolio"]
        + ["--target", "1000", "--time-limit", "0.01", "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    trace = json.loads(run.stdout)["trace"]
    assert trace["backend"] == "greedy" and trace["solver"]["time_limit_hit"] is True
    assert "limit 0.01 s, explicit, hit" in run.stderr and "fallback:" in run.stderr
    assert trace["fallback_reason"] in " ".join(run.stderr.split())
