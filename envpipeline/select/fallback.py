"""The solver-free portfolio fallback: greedy, then coverage repair and swap local search.

Plain greedy (problem.py) commits to one pick at a time and can end with a coverage shortfall
beyond xi_bar although a feasible selection exists, or far below the optimum where coverage binds.
`improve` starts from the greedy selection and applies 1-swap moves (replace a selected candidate
by another of the same seed, or by one of a seed not yet selected) on a penalized objective: the
exact objective minus `big` per unit of coverage missing beyond xi_bar. The penalty makes the
search first repair feasibility, then climb the true objective; every move is evaluated exactly on
the nodes it touches. Where no single swap helps and a node is still short, a chain of two swaps
(bring a carrier of the short node in, then the best swap after it) is tried. The climb is then
restarted `KICKS` times from the best selection, alternately after random swaps and after a climb
with a cheap shortfall price (strategic oscillation), with a fixed random seed: the result is
deterministic unless `time_budget` seconds run out first.

`prove_infeasible` gives a counting certificate when one exists; when the search ends infeasible
without one, the caller must report "no feasible selection found", never "infeasible".
"""

from __future__ import annotations

import math
import random
import time

from envpipeline.select.problem import Problem, Solution, _coverage_terms, evaluate, greedy

_TOL = 1e-9
#: at most this many swap evaluations per pass scan the full neighbourhood; above it, a pool
FULL_SCAN_PAIRS = 250_000
POOL_SIZE = 64
PER_NODE = 8
#: perturbations of the iterated local search (each one restarts the swap search)
KICKS = 120
#: shortfall prices (times the full one) of the relaxed climbs
RELAXED = (0.02, 0.1, 0.005, 0.3)


def units_needed(p: Problem, v: str) -> int:
    """Carriers of v (required, or optional and activated) a feasible selection must contain."""
    return max(0, math.ceil(p.target * p.coverage[v] - p.target * p.max_slack - 1e-7))


def prove_infeasible(p: Problem) -> str | None:
    """A reason no selection keeps every shortfall within xi_bar, or None when none is proven.

    Two counting bounds: a node needs more carriers than there are seeds carrying it, or all nodes
    together need more carrier units than the N best seeds (by target nodes carried) can give.
    """
    if p.mode == "local":
        return None
    nonempty = [g for g in p.groups if g]
    if len(nonempty) < p.target:
        return f"{len(nonempty)} seeds have candidates, fewer than N = {p.target}"
    seed_of = {c: i for i, g in enumerate(p.groups) for c in g}
    carried = [0] * p.n
    for v in p.coverage:
        seeds = set()
        for c in (*p.req_cover.get(v, ()), *p.opt_cover.get(v, ())):
            seeds.add(seed_of[c])
            carried[c] += 1
        if len(seeds) < units_needed(p, v):
            return f"node {v} needs {units_needed(p, v)} carriers, only {len(seeds)} seeds carry it"
    total = sum(units_needed(p, v) for v in p.coverage)
    best_per_seed = sorted((max(carried[c] for c in g) for g in nonempty), reverse=True)
    reachable = sum(best_per_seed[: p.target])
    if total > reachable:
        return f"coverage needs {total} carrier units, N = {p.target} seeds give at most {reachable}"
    return None


def _key(p: Problem, chosen: list[int]) -> tuple[bool, float]:
    sol = evaluate(p, chosen)
    return sol.feasible, sol.objective


class _Search:
    """Incremental state of one selection: per-node carrier counts and the penalized objective."""

    def __init__(self, p: Problem, chosen: list[int]) -> None:
        self.p = p
        self.full_big = 10.0 * (1.0 + max((abs(w) for w in p.weights), default=0.0))
        self.big = self.full_big
        self.seed_of = {c: i for i, g in enumerate(p.groups) for c in g}
        self.req: list[tuple[str, ...]] = [()] * p.n
        self.opt: list[tuple[str, ...]] = [()] * p.n
        for attr, table in (("req", p.req_cover), ("opt", p.opt_cover)):
            rows: dict[int, list[str]] = {}
            for v, cs in table.items():
                if v in p.coverage:
                    for c in cs:
                        rows.setdefault(c, []).append(v)
            getattr(self, attr)[:] = [tuple(rows.get(c, ())) for c in range(p.n)]
        self.carriers: dict[str, list[int]] = {
            v: sorted({*p.req_cover.get(v, ()), *p.opt_cover.get(v, ())}, key=lambda c: (-p.weights[c], c))
            for v in p.coverage
        }
        self._cost: dict[tuple[str, int, int], float] = {}
        self.reset(chosen)

    def reset(self, chosen: list[int]) -> None:
        """Make `chosen` the current selection."""
        self.chosen = set(chosen)
        self.taken = {self.seed_of[c]: c for c in chosen}
        self.base = dict.fromkeys(self.p.coverage, 0)
        self.avail = dict.fromkeys(self.p.coverage, 0)
        for c in chosen:
            for v in self.req[c]:
                self.base[v] += 1
            for v in self.opt[c]:
                self.avail[v] += 1

    def set_big(self, big: float) -> None:
        """Price each carrier unit missing beyond xi_bar at `big`."""
        self.big = big
        self._cost.clear()

    def cost(self, v: str, base: int, avail: int) -> float:
        key = (v, base, avail)
        hit = self._cost.get(key)
        if hit is None:
            p = self.p
            y, xi, ok = _coverage_terms(p, v, base, avail)
            hit = p.optional_penalty * y + p.coverage_penalty * xi
            if not ok:
                short = p.target * (p.coverage[v] - p.max_slack) - base - avail
                hit += self.big * (max(0, units_needed(p, v) - base - avail) + max(0.0, short))
            self._cost[key] = hit
        return hit

    def delta(self, out: int | None, into: int | None) -> float:
        """Change of the penalized objective when `out` leaves and `into` joins the selection."""
        change: dict[str, list[int]] = {}
        gain = 0.0
        for c, sign in ((out, -1), (into, 1)):
            if c is None:
                continue
            gain += sign * self.p.weights[c]
            for v in self.req[c]:
                change.setdefault(v, [0, 0])[0] += sign
            for v in self.opt[c]:
                change.setdefault(v, [0, 0])[1] += sign
        for v, (db, da) in change.items():
            b, a = self.base[v], self.avail[v]
            gain -= self.cost(v, b + db, a + da) - self.cost(v, b, a)
        return gain

    def apply(self, out: int, into: int) -> None:
        self.chosen.discard(out)
        del self.taken[self.seed_of[out]]
        self.chosen.add(into)
        self.taken[self.seed_of[into]] = into
        for c, sign in ((out, -1), (into, 1)):
            for v in self.req[c]:
                self.base[v] += sign
            for v in self.opt[c]:
                self.avail[v] += sign

    def free(self, d: int) -> bool:
        return d not in self.chosen and self.seed_of[d] not in self.taken

    def pool(self, full: bool) -> list[int]:
        """Candidates of seeds not selected that may enter by a cross-seed swap."""
        outside = [d for d in range(self.p.n) if self.free(d)]
        if full:
            return outside
        ranked = sorted(outside, key=lambda d: (-self.delta(None, d), d))[:POOL_SIZE]
        for v in self.p.coverage:  # carriers of nodes short of their target, best weight first
            if self.cost(v, self.base[v], self.avail[v]) > _TOL:
                ranked += [d for d in self.carriers[v][: 4 * PER_NODE] if self.free(d)][:PER_NODE]
        return list(dict.fromkeys(ranked))

    def node_pool(self, c: int) -> list[int]:
        out: list[int] = []
        for v in (*self.req[c], *self.opt[c]):
            out += [d for d in self.carriers[v][: 4 * PER_NODE] if self.free(d)][:PER_NODE]
        return out

    def short_nodes(self) -> list[str]:
        return [v for v in self.p.coverage if units_needed(self.p, v) > self.base[v] + self.avail[v]]

    def best_swap(self) -> tuple[float, int, int] | None:
        """The best swap of the whole neighbourhood (seed-compatible), or None."""
        best: tuple[float, int, int] | None = None
        for c in sorted(self.chosen):
            for d in range(self.p.n):
                if d in self.chosen or not (self.free(d) or self.seed_of[d] == self.seed_of[c]):
                    continue
                g = self.delta(c, d)
                if best is None or g > best[0]:
                    best = (g, c, d)
        return best

    def repair_chain(self, deadline: float) -> bool:
        """Two chained swaps that bring a carrier of a short node in (the first may lose)."""
        for v in self.short_nodes():
            for d in self.carriers[v]:
                if _cpu_clock() > deadline:
                    return False
                if d in self.chosen:
                    continue
                seed = self.seed_of[d]
                if seed in self.taken:
                    c = self.taken[seed]
                else:
                    c = max(sorted(self.chosen), key=lambda c: self.delta(c, d))
                first = self.delta(c, d)
                self.apply(c, d)
                second = self.best_swap()
                if second is not None and first + second[0] > _TOL:
                    self.apply(second[1], second[2])
                    return True
                self.apply(d, c)
        return False

    def one_pass(self, deadline: float) -> bool:
        """Apply every improving swap met in one sweep over the selection; True if any."""
        p = self.p
        outside = p.n - len(self.chosen)
        full = len(self.chosen) * outside <= FULL_SCAN_PAIRS
        pool = self.pool(full)
        improved = False
        for c in sorted(self.chosen, key=lambda c: (p.weights[c], c)):
            if _cpu_clock() > deadline:
                break
            if c not in self.chosen:
                continue
            same = [d for d in p.groups[self.seed_of[c]] if d != c]
            cross = pool if full else [*pool, *self.node_pool(c)]
            best, best_gain = None, _TOL
            for d in (*same, *cross):
                if d in self.chosen or (d not in same and not self.free(d)):
                    continue
                g = self.delta(c, d)
                if g > best_gain:
                    best, best_gain = d, g
            if best is not None:
                self.apply(c, best)
                improved = True
        return improved


def _climb(search: _Search, deadline: float) -> None:
    while _cpu_clock() < deadline:
        if search.one_pass(deadline):
            continue
        relaxed = search.big < search.full_big  # chains only repair at the full shortfall price
        if relaxed or not search.short_nodes() or not search.repair_chain(deadline):
            return


def _kick(search: _Search, rng: random.Random, size: int) -> None:
    """Replace `size` random selected candidates by random candidates of unselected seeds."""
    p = search.p
    for c in rng.sample(sorted(search.chosen), min(size, len(search.chosen))):
        free = [g for i, g in enumerate(p.groups) if g and i not in search.taken]
        if not free:
            return
        search.apply(c, rng.choice(rng.choice(free)))


def _cpu_clock() -> float:
    """The search's clock: CPU seconds of this process, so that a busy machine (other processes
    taking the cores) does not cut the search short and change its answer."""
    return time.process_time()


def improve(p: Problem, start: Solution, time_budget: float = 5.0, kicks: int = KICKS) -> Solution:
    """Repair coverage, then swap-improve `start` (iterated local search, fixed random seed) for at
    most `time_budget` CPU seconds."""
    if p.mode == "local" or not start.chosen:
        return start
    deadline = _cpu_clock() + time_budget
    search = _Search(p, start.chosen)
    _climb(search, deadline)
    best = sorted(search.chosen)
    best_key = _key(p, best)
    rng = random.Random(0)
    for k in range(kicks):
        if _cpu_clock() > deadline:
            break
        search.reset(best)
        if k % 2:
            _kick(search, rng, 2 + k % 3)
        else:  # strategic oscillation: climb with a cheap shortfall, then repair at full price
            search.set_big(search.full_big * RELAXED[(k // 2) % len(RELAXED)])
            _climb(search, deadline)
            search.set_big(search.full_big)
        _climb(search, deadline)
        key = _key(p, sorted(search.chosen))
        if key > best_key:
            best, best_key = sorted(search.chosen), key
    sol = evaluate(p, best)
    if (sol.feasible, sol.objective) >= (start.feasible, start.objective):
        return sol
    return start


def fallback(p: Problem, time_budget: float = 5.0) -> tuple[Solution, str]:
    """The best solver-free selection and its honest status.

    Status: ``optimal`` in local mode (exact there), ``heuristic`` for a feasible portfolio,
    ``infeasible`` only with a counting certificate (`prove_infeasible`), and ``no_feasible_found``
    when the search ends infeasible without one (a feasible selection may still exist).
    """
    start = greedy(p)
    if p.mode == "local":
        return start, "optimal"
    sol = improve(p, start, time_budget)
    if sol.feasible:
        return sol, "heuristic"
    return sol, "infeasible" if prove_infeasible(p) else "no_feasible_found"
