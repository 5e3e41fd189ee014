"""Exact problem reduction for large portfolio solves: Lagrangian bound and reduced-cost core.

Relaxing the coverage rows (multipliers lambda_v >= 0), the optional rows (rho_v >= 0) and the
cardinality row (mu) of the portfolio model (problem.py) leaves one independent choice per seed.
With the reduced weight ``r_c = w_c + sum_{v in R_c} lambda_v + sum_{v in O_c} rho_v - mu`` and the
seed value ``pi_i = max(0, max_{c in C_i} r_c)`` the Lagrangian bound is::

    L = mu N - sum_v lambda_v N k_v + sum_v xi_bar max(0, N lambda_v - mu_pen) + sum_i pi_i

``L`` bounds every selection for any multipliers, and a selection that contains candidate c is
worth at most ``L - (pi_i - r_c)``. So, for a threshold delta, no selection worth at least
``L - delta`` contains a candidate with ``pi_i - r_c > delta``: the *core* of the candidates with
``pi_i - r_c <= delta`` holds them all. If the core's MILP optimum reaches ``L - delta`` it is the
optimum of the whole problem; otherwise the core of ``delta = L - best`` is complete and is solved.

The multipliers are the duals of the LP relaxation, solved by column generation: the LP holds a
few candidates per seed (seed rows only where a seed has two), every candidate is priced, and the
ones whose reduced weight beats their seed's value join, until none does (or `ROUNDS` rounds; the
bound stays valid either way, only weaker). The LP has a few dozen rows plus the seed rows of the
few seeds with competing candidates, far smaller than the full relaxation (one row per seed).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from envpipeline.select.problem import Problem, Solution

#: column-generation rounds of the LP relaxation before the multipliers are used as they are
ROUNDS = 12
_TOL = 1e-9


@dataclass
class Multipliers:
    """Duals of the relaxed rows and the Lagrangian bound they give over every candidate."""

    cover: dict[str, float]  # lambda_v
    optional: dict[str, float]  # rho_v
    cardinality: float  # mu
    bound: float = 0.0
    reduced: list[float] = field(default_factory=list)  # r_c
    seed_value: list[float] = field(default_factory=list)  # pi_i
    lp_rounds: int = 0


def _rows_of(p: Problem) -> tuple[list[list[str]], list[list[str]]]:
    req: list[list[str]] = [[] for _ in range(p.n)]
    opt: list[list[str]] = [[] for _ in range(p.n)]
    for v, cs in p.req_cover.items():
        if v in p.coverage:
            for c in cs:
                req[c].append(v)
    for v, cs in p.opt_cover.items():
        if v in p.coverage:
            for c in cs:
                opt[c].append(v)
    return req, opt


def lagrangian(p: Problem, cover: dict[str, float], optional: dict[str, float], mu: float) -> Multipliers:
    """The Lagrangian bound of the multipliers, with every reduced weight and seed value."""
    req, opt = _rows_of(p)
    lam = {v: max(0.0, cover.get(v, 0.0)) for v in p.coverage}
    rho = {v: max(0.0, optional.get(v, 0.0)) for v in p.coverage}
    reduced = [
        p.weights[c] + sum(lam[v] for v in req[c]) + sum(rho[v] for v in opt[c]) - mu for c in range(p.n)
    ]
    seed_value = [max(0.0, *(reduced[c] for c in g)) if g else 0.0 for g in p.groups]
    n = p.target
    bound = mu * n + sum(seed_value)
    for v, share in p.coverage.items():
        bound += -lam[v] * n * share + p.max_slack * max(0.0, n * lam[v] - p.coverage_penalty)
        # y_v <= |O_v| carries lambda_v - lam_pen - rho_v; rho_v >= lambda_v - lam_pen makes it <= 0
        over = lam[v] - p.optional_penalty - rho[v]
        if over > 0:
            bound += over * len(p.opt_cover.get(v, ()))
    return Multipliers(lam, rho, mu, bound, reduced, seed_value)


def _solve_lp(p: Problem, cols: list[int], req: list[list[str]], opt: list[list[str]]) -> tuple[Any, dict]:
    """The LP relaxation over `cols`; returns (lp, row index map)."""
    from pyscipopt import LP

    lp = LP("selection_core", sense="maximize")
    nodes = list(p.coverage)
    # rows: cardinality, cover_v, optional_v, then seed rows of seeds with two or more columns
    index: dict[str, int] = {"card": 0}
    for k, v in enumerate(nodes):
        index[f"cover:{v}"] = 1 + k
        index[f"opt:{v}"] = 1 + len(nodes) + k
    seed_of = {c: i for i, g in enumerate(p.groups) for c in g}
    by_seed: dict[int, list[int]] = {}
    for c in cols:
        by_seed.setdefault(seed_of[c], []).append(c)
    multi = [i for i, cs in by_seed.items() if len(cs) > 1]
    base = 1 + 2 * len(nodes)
    for k, i in enumerate(multi):
        index[f"seed:{i}"] = base + k
    n = p.target
    rows: list[list[tuple[int, float]]] = [[] for _ in range(base + len(multi))]
    lhs = [float(n)] + [n * p.coverage[v] for v in nodes] + [0.0] * len(nodes) + [-lp.infinity()] * len(multi)
    rhs = [float(n)] + [lp.infinity()] * len(nodes) + [lp.infinity()] * len(nodes) + [1.0] * len(multi)
    lp.addRows([[] for _ in rows], lhss=lhs, rhss=rhs)  # empty rows, filled by the columns
    entries: list[list[tuple[int, float]]] = []
    objs: list[float] = []
    ubs: list[float] = []
    for c in cols:
        col = [(0, 1.0)]
        col += [(index[f"cover:{v}"], 1.0) for v in req[c]]
        col += [(index[f"opt:{v}"], 1.0) for v in opt[c]]  # sum_O x - y >= 0
        seed_row = index.get(f"seed:{seed_of[c]}")
        if seed_row is not None:
            col.append((seed_row, 1.0))
        entries.append(col)
        objs.append(p.weights[c])
        ubs.append(1.0)
    for v in nodes:  # y_v and xi_v
        carriers = len(p.opt_cover.get(v, ()))
        if carriers:
            entries.append([(index[f"cover:{v}"], 1.0), (index[f"opt:{v}"], -1.0)])
            objs.append(-p.optional_penalty)
            ubs.append(float(carriers))
        entries.append([(index[f"cover:{v}"], float(n))])
        objs.append(-p.coverage_penalty)
        ubs.append(p.max_slack)
    lp.addCols(entries, objs=objs, lbs=[0.0] * len(entries), ubs=ubs)
    lp.solve()
    return lp, index


def lp_multipliers(p: Problem, start: list[int], deadline: float) -> Multipliers | None:
    """LP-dual multipliers by column generation from the columns `start` (a feasible selection
    plus each seed's best candidate); None when the LP fails (no bound: nothing is reduced)."""
    req, opt = _rows_of(p)
    cols = set(start)
    for g in p.groups:
        if g:
            cols.add(max(g, key=lambda c: (p.weights[c], -c)))
    best: Multipliers | None = None
    for rounds in range(1, ROUNDS + 1):
        ordered = sorted(cols)
        try:
            lp, index = _solve_lp(p, ordered, req, opt)
            duals = lp.getDual()
        except Exception:  # an LP failure leaves the solve unreduced, never wrong
            return best
        # SoPlex's duals of a maximization: <= 0 on the >= rows, the multipliers are their negation
        lam = {v: -duals[index[f"cover:{v}"]] for v in p.coverage}
        rho = {v: -duals[index[f"opt:{v}"]] for v in p.coverage}
        mu = duals[index["card"]]
        m = lagrangian(p, lam, rho, mu)
        m.lp_rounds = rounds
        if best is None or m.bound < best.bound:
            best = m
        seed_of = {c: i for i, g in enumerate(p.groups) for c in g}
        in_cols: dict[int, float] = {}
        for c in ordered:
            i = seed_of[c]
            in_cols[i] = max(in_cols.get(i, 0.0), m.reduced[c])
        new = [c for c in range(p.n) if c not in cols and m.reduced[c] > in_cols.get(seed_of[c], 0.0) + 1e-7]
        if not new or time.perf_counter() > deadline:
            break
        cols.update(new)
    return best


def core(p: Problem, m: Multipliers, delta: float, keep: list[int]) -> list[int]:
    """Candidates with ``pi_i - r_c <= delta`` (plus `keep`), in index order."""
    seed_of = {c: i for i, g in enumerate(p.groups) for c in g}
    kept = {c for c in range(p.n) if m.seed_value[seed_of[c]] - m.reduced[c] <= delta + 1e-7}
    return sorted(kept | set(keep))


def restrict(p: Problem, cols: list[int]) -> tuple[Problem, list[int]]:
    """The sub-problem over `cols` (indices renumbered) and the map back to `p`'s indices."""
    new = {c: k for k, c in enumerate(cols)}
    groups = [[new[c] for c in g if c in new] for g in p.groups]
    sub = Problem(
        mode=p.mode,
        weights=[p.weights[c] for c in cols],
        groups=[g for g in groups if g],
        target=p.target,
        req_cover={v: [new[c] for c in cs if c in new] for v, cs in p.req_cover.items()},
        opt_cover={v: [new[c] for c in cs if c in new] for v, cs in p.opt_cover.items()},
        coverage=dict(p.coverage),
        max_slack=p.max_slack,
        optional_penalty=p.optional_penalty,
        coverage_penalty=p.coverage_penalty,
    )
    sub.req_cover = {v: cs for v, cs in sub.req_cover.items() if cs}
    sub.opt_cover = {v: cs for v, cs in sub.opt_cover.items() if cs}
    return sub, cols


def lift(chosen: list[int], cols: list[int]) -> list[int]:
    """A sub-problem selection in the full problem's indices."""
    return sorted(cols[c] for c in chosen)


@dataclass
class Reduction:
    """What the reduction did, for the solver trace."""

    bound: float  # Lagrangian (LP) upper bound over every candidate
    incumbent: float  # the warm start's objective: the threshold delta = bound - incumbent
    kept: int  # candidates in the core
    total: int
    forced_seeds: int  # seeds every selection at least as good as the incumbent must use
    lp_rounds: int
    seconds: float


def reduce_problem(
    p: Problem, warm: Solution, deadline: float
) -> tuple[Problem, list[int], Reduction] | None:
    """The complete core of `p` for the threshold ``delta = L - warm.objective``: its optimum is the
    optimum of `p`. None when the LP fails or nothing would be removed."""
    started = time.perf_counter()
    if p.mode != "portfolio" or not warm.feasible:
        return None
    m = lp_multipliers(p, warm.chosen, deadline)
    if m is None:
        return None
    delta = max(0.0, m.bound - warm.objective)
    cols = core(p, m, delta, warm.chosen)
    if len(cols) >= p.n:
        return None
    sub, cols = restrict(p, cols)
    # a selection that leaves seed i out is worth at most L - pi_i: below the incumbent when pi_i > delta
    forced = [k for k, g in enumerate(p.groups) if g and m.seed_value[k] > delta + 1e-6]
    colset = set(cols)
    new_seed: dict[int, int] = {}
    for k, g in enumerate(p.groups):
        if any(c in colset for c in g):
            new_seed[k] = len(new_seed)
    sub.forced = sorted(new_seed[k] for k in forced if k in new_seed)
    info = Reduction(
        bound=m.bound,
        incumbent=warm.objective,
        kept=len(cols),
        total=p.n,
        forced_seeds=len(sub.forced),
        lp_rounds=m.lp_rounds,
        seconds=time.perf_counter() - started,
    )
    return sub, cols, info
