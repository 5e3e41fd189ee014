"""The solver-free portfolio fallback: quality where coverage binds, repair, honest infeasibility."""

from __future__ import annotations

import random

import pytest

from envpipeline.select.fallback import fallback, prove_infeasible
from envpipeline.select.milp import solve_in_process
from envpipeline.select.problem import Problem, enumerate_exact, greedy


def _problem(groups: list[list[tuple[float, list[str]]]], target: int, coverage: dict[str, float]) -> Problem:
    """A portfolio Problem from seeds given as lists of (weight, required coverage nodes)."""
    weights: list[float] = []
    index: list[list[int]] = []
    req: dict[str, list[int]] = {}
    for seed in groups:
        index.append([])
        for weight, nodes in seed:
            c = len(weights)
            weights.append(weight)
            index[-1].append(c)
            for v in nodes:
                req.setdefault(v, []).append(c)
    return Problem("portfolio", weights, index, target, req_cover=req, coverage=coverage)


def _binding(rng: random.Random) -> Problem:
    """A small random instance with demanding coverage shares (and optional carriers)."""
    nodes = [f"v{k}" for k in range(rng.randint(3, 6))]
    weights: list[float] = []
    groups: list[list[int]] = []
    req: dict[str, list[int]] = {}
    opt: dict[str, list[int]] = {}
    for _ in range(rng.randint(10, 24)):
        groups.append([])
        for _ in range(rng.randint(2, 5)):
            c = len(weights)
            weights.append(round(rng.random(), 4))
            groups[-1].append(c)
            required = rng.sample(nodes, rng.choice([0, 1, 1, 2]))
            for v in required:
                req.setdefault(v, []).append(c)
            for v in rng.sample([v for v in nodes if v not in required], rng.choice([0, 0, 1])):
                opt.setdefault(v, []).append(c)
    coverage = {v: round(rng.uniform(0.25, 0.6), 3) for v in nodes}
    target = rng.randint(len(groups) // 4, (3 * len(groups)) // 4)
    return Problem("portfolio", weights, groups, target, req, opt, coverage, optional_penalty=0.01)


def _unconstrained(p: Problem) -> float:
    return sum(sorted((max(p.weights[c] for c in g) for g in p.groups), reverse=True)[: p.target])


def _binding_instances(count: int) -> list[tuple[Problem, float]]:
    """The first `count` instances (fixed seed) whose SCIP optimum is below the coverage-free best."""
    rng = random.Random(2026)
    out = []
    while len(out) < count:
        p = _binding(rng)
        r = solve_in_process(p, None, seed=0, time_limit=30)
        if r.status == "optimal" and r.objective is not None and r.objective < _unconstrained(p) - 1e-6:
            out.append((p, r.objective))
    return out


def test_fallback_reaches_098_of_the_optimum_where_coverage_binds() -> None:
    instances = _binding_instances(25)
    new = [fallback(p)[0] for p, _ in instances]
    assert all(s.feasible for s in new)
    ratios = [s.objective / opt for s, (_, opt) in zip(new, instances, strict=True)]
    assert min(ratios) >= 0.98, ratios
    assert all(r <= 1 + 1e-9 for r in ratios)
    # the same check rejects plain greedy (the old fallback) on these instances
    old = [greedy(p) for p, _ in instances]
    old_ratios = [
        s.objective / opt if s.feasible else 0.0 for s, (_, opt) in zip(old, instances, strict=True)
    ]
    assert min(old_ratios) < 0.98


def _greedy_trap() -> Problem:
    """Six nodes, each wanted by half of N = 2 picks (one carrier each). Greedy takes the seed that
    covers four nodes first; no single second pick covers the other two. Feasible: seeds b + c."""
    return _problem(
        [
            [(0.9, ["v1", "v2", "v4", "v5"])],
            [(0.5, ["v1", "v2", "v3"])],
            [(0.5, ["v4", "v5", "v6"])],
        ],
        target=2,
        coverage={f"v{k}": 0.5 for k in range(1, 7)},
    )


def test_fallback_repairs_where_greedy_gets_stuck() -> None:
    p = _greedy_trap()
    assert not greedy(p).feasible  # the old fallback ends infeasible here ...
    assert prove_infeasible(p) is None  # ... without any proof, since b + c is feasible
    sol, status = fallback(p)
    assert status == "heuristic" and sol.feasible and sol.chosen == [1, 2]
    exact = enumerate_exact(p)
    assert exact is not None and sol.objective == pytest.approx(exact.objective)


def test_infeasible_instance_is_reported_infeasible() -> None:
    # N = 1 but two nodes each need a carrier and no candidate carries both
    p = _problem([[(0.5, ["git"])], [(0.5, ["sqlite"])]], target=1, coverage={"git": 1.0, "sqlite": 1.0})
    assert enumerate_exact(p) is None
    sol, status = fallback(p)
    assert status == "infeasible" and not sol.feasible
    assert "carrier units" in (prove_infeasible(p) or "")
    # a node needing more carriers than seeds carry it
    p = _problem([[(0.5, ["git"])], [(0.5, [])], [(0.5, [])]], target=3, coverage={"git": 1.0})
    assert "only 1 seeds" in (prove_infeasible(p) or "") and fallback(p)[1] == "infeasible"


def test_unproven_infeasibility_is_not_called_infeasible() -> None:
    # both seeds must be picked (N = 2): a1 + b1 misses v4, a2 + b1 misses v2; the counting
    # bounds cannot see it, so the fallback says it found nothing rather than "infeasible"
    p = _problem(
        [[(0.5, ["v1", "v2"]), (0.5, ["v3", "v4"])], [(0.5, ["v1", "v3"])]],
        target=2,
        coverage={f"v{k}": 0.5 for k in range(1, 5)},
    )
    assert enumerate_exact(p) is None and prove_infeasible(p) is None
    sol, status = fallback(p)
    assert status == "no_feasible_found" and not sol.feasible


def test_feasible_instances_are_never_certified_infeasible() -> None:
    for p, _ in _binding_instances(10):
        assert prove_infeasible(p) is None
    assert prove_infeasible(_greedy_trap()) is None
