"""Envs-FORGE selector bench: the solver-free fallback against the SCIP optimum where coverage binds.

Random portfolio instances (Problem rows directly: seeds with 2-6 candidates, 4-8 coverage nodes,
high coverage shares) are kept only when coverage binds: the SCIP optimum is below the best
selection that ignores coverage, or SCIP proves the instance infeasible. Each is solved by SCIP,
by plain greedy (the old fallback) and by the new fallback (greedy + repair + swap search).
Printed: the ratio distribution to the optimum (min, mean, count below 0.98) of both, and the
infeasibility disagreements (a fallback reporting "infeasible" where SCIP found an optimum, a
feasible fallback where SCIP says infeasible, and honest "no_feasible_found").

Usage: python bench/greedy_bench.py [--instances 185] [--seed 0]
"""

from __future__ import annotations

import argparse
import random
import statistics

from envpipeline.select.fallback import fallback
from envpipeline.select.milp import solve_in_process
from envpipeline.select.problem import Problem, greedy


def random_problem(rng: random.Random) -> Problem:
    """One random portfolio instance with demanding coverage shares."""
    n_seeds = rng.randint(12, 60)
    nodes = [f"v{k}" for k in range(rng.randint(4, 8))]
    weights: list[float] = []
    groups: list[list[int]] = []
    req: dict[str, list[int]] = {}
    opt: dict[str, list[int]] = {}
    for _ in range(n_seeds):
        group = []
        for _ in range(rng.randint(2, 6)):
            c = len(weights)
            weights.append(round(rng.random(), 4))
            group.append(c)
            required = rng.sample(nodes, rng.choice([0, 1, 1, 2]))
            for v in required:
                req.setdefault(v, []).append(c)
            for v in rng.sample([v for v in nodes if v not in required], rng.choice([0, 0, 1])):
                opt.setdefault(v, []).append(c)
        groups.append(group)
    target = rng.randint(max(2, n_seeds // 4), max(3, (3 * n_seeds) // 4))
    coverage = {v: round(rng.uniform(0.25, 0.6), 3) for v in rng.sample(nodes, rng.randint(2, len(nodes)))}
    return Problem(
        mode="portfolio",
        weights=weights,
        groups=groups,
        target=target,
        req_cover={v: cs for v, cs in req.items() if v in coverage},
        opt_cover={v: cs for v, cs in opt.items() if v in coverage},
        coverage=coverage,
        max_slack=0.2,
        optional_penalty=round(rng.choice([0.0, 0.01, 0.05]), 3),
        coverage_penalty=1.0,
    )


def unconstrained(p: Problem) -> float:
    """The best objective when coverage is ignored: the N best seeds' best weights."""
    return sum(sorted((max(p.weights[c] for c in g) for g in p.groups), reverse=True)[: p.target])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--instances", type=int, default=185)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    ratios: dict[str, list[float]] = {"greedy": [], "fallback": []}
    wrong_infeasible = {"greedy": 0, "fallback": 0}
    not_found = {"greedy": 0, "fallback": 0}
    wrong_feasible = {"greedy": 0, "fallback": 0}
    infeasible_agreed = tried = 0
    kept = 0
    while kept < args.instances:
        tried += 1
        p = random_problem(rng)
        r = solve_in_process(p, None, seed=0, time_limit=60.0)
        if r.status not in ("optimal", "infeasible"):
            continue
        if r.status == "optimal" and (r.objective is None or r.objective >= unconstrained(p) - 1e-6):
            continue  # coverage does not bind
        kept += 1
        old = greedy(p)
        new, new_status = fallback(p)
        runs = {
            "greedy": (old, "heuristic" if old.feasible else "infeasible"),
            "fallback": (new, new_status),
        }
        for name, (sol, status) in runs.items():
            if r.status == "infeasible":
                wrong_feasible[name] += sol.feasible
                infeasible_agreed += name == "fallback" and status == "infeasible"
                continue
            assert r.objective is not None
            if status == "infeasible":
                wrong_infeasible[name] += 1
            elif not sol.feasible:
                not_found[name] += 1
            else:
                ratios[name].append(sol.objective / r.objective if r.objective > 0 else 1.0)
    print(f"{kept} binding instances ({tried} generated; coverage binds or SCIP proves infeasible)")
    for name in ("greedy", "fallback"):
        rs = ratios[name]
        below = sum(x < 0.98 for x in rs)
        print(
            f"  {name:8s}: ratio to SCIP optimum over {len(rs)} feasible: min {min(rs):.4f}, "
            f"mean {statistics.fmean(rs):.4f}, below 0.98: {below}; says infeasible where an optimum "
            f"exists: {wrong_infeasible[name]}; no feasible found (honest): {not_found[name]}; "
            f"feasible where SCIP says infeasible: {wrong_feasible[name]}"
        )
    print(f"  SCIP-infeasible instances proven infeasible by the fallback's certificate: {infeasible_agreed}")


if __name__ == "__main__":
    main()
