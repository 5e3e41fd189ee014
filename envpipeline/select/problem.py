"""The selection problem as plain data, its exact objective, and the two solver-free backends.

Portfolio model (local mode is the same without coverage, with ``sum_{c in C_i} x_c = 1``)::

    max   sum_c w_c x_c  -  lam * sum_v y_v  -  mu * sum_v xi_v
    s.t.  sum_{c in C_i} x_c <= 1                        every seed i
          sum_c x_c = N
          sum_{c: v in R_c} x_c + y_v + N xi_v >= N k_v  every coverage target v
          y_v <= sum_{c: v in O_c} x_c                   every target v with optional carriers
          x binary, y_v integer >= 0, 0 <= xi_v <= xi_bar

``w_c`` = frontier score + affinity tie-break. ``y_v`` aggregates the optional activations
``u_{c,v}`` (``u_{c,v} <= x_c``) of node v: only their sum enters the coverage row and the penalty,
and any integer ``y_v <= sum_{O_c} x_c`` is realized by activating ``y_v`` selected carriers, so the
aggregation is exact. Required nodes have ``u_{c,v} = x_c`` (substituted), optional nodes without a
coverage target have ``u = 0`` at every optimum (pure cost), so neither needs a variable.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

_TOL = 1e-9


@dataclass
class Problem:
    """One selection instance: candidate weights, seed groups, coverage rows."""

    mode: str
    weights: list[float]
    groups: list[list[int]]  # candidate indices per seed (seed order)
    target: int  # N
    req_cover: dict[str, list[int]] = field(default_factory=dict)  # target node -> candidates with v in R
    opt_cover: dict[str, list[int]] = field(default_factory=dict)  # target node -> candidates with v in O
    coverage: dict[str, float] = field(default_factory=dict)  # target node -> k_v
    max_slack: float = 0.2
    optional_penalty: float = 0.0
    coverage_penalty: float = 1.0
    forced: list[int] = field(default_factory=list)  # seeds (group indices) that must be selected

    @property
    def n(self) -> int:
        return len(self.weights)


@dataclass
class Solution:
    """A selection with its optimal coverage variables and exact objective."""

    chosen: list[int]
    y: dict[str, int]
    xi: dict[str, float]
    objective: float
    feasible: bool


def _coverage_terms(p: Problem, v: str, base: int, avail: int) -> tuple[int, float, bool]:
    """Optimal (y_v, xi_v) for fixed x: minimize lam*y + mu*xi with y <= avail, xi <= xi_bar."""
    n = p.target
    need = n * p.coverage[v] - base
    if need <= _TOL:
        return 0, 0.0, True
    lo = max(0, math.ceil(need - n * p.max_slack - 1e-7))
    if lo > avail:
        return avail, (need - avail) / n, False
    hi = min(avail, math.ceil(need - _TOL))
    best: tuple[float, int] | None = None
    for y in sorted({lo, hi, min(hi, max(lo, math.floor(need)))}):
        cost = p.optional_penalty * y + p.coverage_penalty * max(0.0, need - y) / n
        if best is None or cost < best[0] - _TOL:
            best = (cost, y)
    assert best is not None
    y = best[1]
    return y, max(0.0, need - y) / n, True


def evaluate(p: Problem, chosen: list[int]) -> Solution:
    """The exact objective of a selection, with its optimal y and xi."""
    picked = set(chosen)
    total = sum(p.weights[c] for c in chosen)
    feasible = True
    ys: dict[str, int] = {}
    xis: dict[str, float] = {}
    for v in p.coverage:
        base = sum(1 for c in p.req_cover.get(v, ()) if c in picked)
        avail = sum(1 for c in p.opt_cover.get(v, ()) if c in picked)
        y, xi, ok = _coverage_terms(p, v, base, avail)
        feasible &= ok
        ys[v], xis[v] = y, xi
        total -= p.optional_penalty * y + p.coverage_penalty * xi
    return Solution(sorted(chosen), ys, xis, total, feasible)


def _best_in_group(p: Problem, group: list[int]) -> int:
    return max(group, key=lambda c: (p.weights[c], -c))


def solve_local_exact(p: Problem) -> Solution:
    """Local mode decomposes per seed: the argmax of each seed (lowest index on ties) is exact."""
    return evaluate(p, [_best_in_group(p, g) for g in p.groups if g])


def greedy(p: Problem) -> Solution:
    """Deterministic coverage-aware lazy greedy: N picks, at most one per seed.

    The gain of a candidate is its weight plus, for each coverage node it carries, the marginal
    value of one more unit of coverage: large while the shortfall exceeds xi_bar (feasibility),
    mu/N while it is within the slack, 0 once met; optional carriers pay lam. Gains only fall as
    coverage grows, so stale heap entries are re-scored lazily. Ties: lower candidate index.
    """
    if p.mode == "local":
        return solve_local_exact(p)
    n = p.target
    big = 10.0 * (1.0 + max(p.weights, default=0.0))
    seed_of = {c: i for i, g in enumerate(p.groups) for c in g}
    req: dict[int, list[str]] = {}
    opt: dict[int, list[str]] = {}
    for v, cs in p.req_cover.items():
        for c in cs:
            req.setdefault(c, []).append(v)
    for v, cs in p.opt_cover.items():
        for c in cs:
            opt.setdefault(c, []).append(v)
    cover = dict.fromkeys(p.coverage, 0)

    def unit(v: str) -> float:
        deficit = n * p.coverage[v] - cover[v]
        if deficit > n * p.max_slack + _TOL:
            return big
        return p.coverage_penalty / n if deficit > _TOL else 0.0

    def gain(c: int) -> float:
        g = p.weights[c] + sum(unit(v) for v in req.get(c, ()))
        return g + sum(max(0.0, unit(v) - p.optional_penalty) for v in opt.get(c, ()))

    heap = [(-gain(c), c) for c in range(p.n)]
    heapq.heapify(heap)
    taken: set[int] = set()
    chosen: list[int] = []
    while heap and len(chosen) < n:
        _, c = heapq.heappop(heap)
        if seed_of[c] in taken:
            continue
        fresh = -gain(c)
        if heap and (fresh, c) > heap[0]:
            heapq.heappush(heap, (fresh, c))
            continue
        chosen.append(c)
        taken.add(seed_of[c])
        for v in req.get(c, ()):
            cover[v] += 1
        for v in opt.get(c, ()):
            if unit(v) > p.optional_penalty:
                cover[v] += 1
    return evaluate(p, chosen)


def enumerate_exact(p: Problem) -> Solution | None:
    """Exact search over every selection (branch and bound on seeds); None when infeasible."""
    if p.mode == "local":
        return solve_local_exact(p)
    groups = [sorted(g, key=lambda c: (-p.weights[c], c)) for g in p.groups if g]
    tops = [p.weights[g[0]] for g in groups]
    best: list[Solution | None] = [None]

    def bound(k: int, need: int) -> float:
        return sum(sorted(tops[k:], reverse=True)[:need])

    def dfs(k: int, chosen: list[int], value: float) -> None:
        need = p.target - len(chosen)
        if need == 0:
            sol = evaluate(p, chosen)
            if sol.feasible and (best[0] is None or sol.objective > best[0].objective + _TOL):
                best[0] = sol
            return
        if len(groups) - k < need:
            return
        if best[0] is not None and value + bound(k, need) <= best[0].objective + _TOL:
            return
        for c in groups[k]:
            dfs(k + 1, [*chosen, c], value + p.weights[c])
        dfs(k + 1, chosen, value)

    dfs(0, [], 0.0)
    return best[0]
