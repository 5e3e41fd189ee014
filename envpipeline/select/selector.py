"""`select_actions`: candidates -> problem -> backend -> decisions and a solver trace (appendix B).

Backends: ``scip`` (compact MILP, child process, hard wall-clock limit, greedy warm start; only
status ``optimal`` is accepted), ``enumerate`` (exact, for at most ``enumerate_max`` = 24
candidates; local mode decomposes per seed so it enumerates each seed's <= 6), ``greedy``
(coverage-aware greedy, then coverage repair and swap search: fallback.py). When SCIP is unavailable, not optimal, crashed or killed, the
selection falls back to enumeration (<= 24 candidates) or greedy, and the trace says why. The
trace's ``status`` is SCIP's status whenever SCIP was tried; otherwise ``optimal`` for enumeration
and for local-mode greedy (exact there), ``heuristic`` for a feasible portfolio fallback,
``infeasible`` when no selection keeps every coverage shortfall within xi_bar (proven: by
enumeration or a counting certificate), ``no_feasible_found`` when the fallback found none but
cannot prove that none exists.

Time limit: ``--time-limit`` / ``time_limit=`` / ``SelectorConfig.time_limit`` when given, else
scaled to the instance (`scaled_time_limit`)::

    limit = min(time_limit_max, time_limit_base + time_limit_per_1k * candidates / 1000)

(defaults 10 s + 0.5 s per 1,000 candidates, capped at 600 s: 22 s for the 10,000-seed bench
portfolio, 69 s for the 50,000-seed one). The trace's ``solver`` records the limit, its source,
whether it was hit, SCIP's gap and bounds; a fallback is logged as a warning with its reason.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Collection
from typing import Literal

from envpipeline.errors import ConfigError
from envpipeline.models.selection import (
    Backend,
    Candidate,
    Decision,
    SeedPassRate,
    SelectionTrace,
    SolverReport,
)
from envpipeline.select.actions import SelectorConfig, objective_weight, reward_band
from envpipeline.select.fallback import fallback
from envpipeline.select.milp import ScipResult, solve_scip
from envpipeline.select.problem import Problem, Solution, enumerate_exact, evaluate, greedy
from envpipeline.select.skills import Taxonomy, build_candidates

Mode = Literal["local", "portfolio"]
MODES: tuple[Mode, ...] = ("local", "portfolio")
BACKENDS: tuple[Backend, ...] = ("scip", "enumerate", "greedy")
#: wall-clock budget of the fallback's repair and swap search (capped by the solve's time limit)
FALLBACK_SECONDS = 5.0

logger = logging.getLogger(__name__)


def scaled_time_limit(n_candidates: int, config: SelectorConfig) -> float:
    """The SCIP wall-clock limit for an instance of `n_candidates` (module docstring)."""
    scaled = config.time_limit_base + config.time_limit_per_1k * n_candidates / 1000
    return min(config.time_limit_max, scaled)


def _report(r: ScipResult, p: Problem, source: str) -> SolverReport:
    return SolverReport(
        status=r.status,
        seconds=round(r.seconds, 6),
        time_limit=r.time_limit or 0.0,
        time_limit_source="explicit" if source == "explicit" else "scaled",
        time_limit_hit=r.status in ("timelimit", "killed"),
        gap=r.gap,
        objective=r.objective,
        dual_bound=r.dual_bound,
        proof=r.proof,
        candidates=p.n,
        core_candidates=r.reduction.kept if r.reduction else None,
    )


def _reason(r: ScipResult) -> str:
    """Why a SCIP result was not accepted: status, limit, gap and bounds."""
    if r.status == "timelimit":
        gap = f"gap {100 * r.gap:.4g}%" if r.gap is not None else "no solution"
        bounds = f", best {r.objective:.6f}, bound {r.dual_bound:.6f}" if r.objective and r.dual_bound else ""
        text = f"SCIP hit its {r.time_limit:g} s time limit after {r.seconds:.1f} s (status 'timelimit', {gap}{bounds})"
    else:
        text = f"SCIP status '{r.status}'" + (f": {r.error}" if r.error else "")
    return text + "; only 'optimal' is accepted"


def _coverage(eligible: list[Candidate], n: int, config: SelectorConfig) -> dict[str, float]:
    """Requested coverage k_v: configured, or each node's share of the eligible seeds' required
    nodes; clipped to what at most one candidate per seed can reach (attainable / N)."""
    seeds: dict[str, set[str]] = {}
    carried: dict[str, set[str]] = {}
    for c in eligible:
        seeds.setdefault(c.seed_id, set()).update(c.required_skills)
        for v in (*c.required_skills, *c.optional_skills):
            carried.setdefault(v, set()).add(c.seed_id)
    if config.coverage_targets is None:
        counts: dict[str, int] = {}
        for skills in seeds.values():
            for v in skills:
                counts[v] = counts.get(v, 0) + 1
        wanted = {v: k / len(seeds) for v, k in counts.items()}
    else:
        wanted = dict(config.coverage_targets)
    out = {}
    for v in sorted(wanted):
        share = min(wanted[v], min(n, len(carried.get(v, ()))) / n)
        if share > 0:
            out[v] = share
    return out


def _dominated(cands: list[Candidate], weights: list[float], group: list[int], targets: set[str]) -> set[int]:
    """Candidates of one seed that another candidate of it beats or ties on every count (exact)."""
    req = {c: set(cands[c].required_skills) & targets for c in group}
    carry = {c: req[c] | (set(cands[c].optional_skills) & targets) for c in group}
    out = set()
    for c in group:
        for d in group:
            covers = req[c] <= req[d] and carry[c] <= carry[d]
            better = weights[d] > weights[c] or (weights[d] == weights[c] and d < c)
            if d != c and d not in out and covers and better:
                out.add(c)
                break
    return out


def build_problem(
    eligible: list[Candidate], mode: Mode, target: int, config: SelectorConfig
) -> tuple[Problem, list[Candidate], int]:
    """The Problem of the eligible candidates (dominated ones dropped in portfolio mode)."""
    weights = [objective_weight(c.frontier_score, c.projection, c.direction, config) for c in eligible]
    coverage = _coverage(eligible, target, config) if mode == "portfolio" else {}
    by_seed: dict[str, list[int]] = {}
    for k, c in enumerate(eligible):
        by_seed.setdefault(c.seed_id, []).append(k)
    drop: set[int] = set()
    if mode == "portfolio" and config.dominance:
        for group in by_seed.values():
            drop |= _dominated(eligible, weights, group, set(coverage))
    kept = [c for k, c in enumerate(eligible) if k not in drop]
    kept_w = [w for k, w in enumerate(weights) if k not in drop]
    groups: list[list[int]] = []
    index: dict[str, int] = {}
    req: dict[str, list[int]] = {v: [] for v in coverage}
    opt: dict[str, list[int]] = {v: [] for v in coverage}
    for k, c in enumerate(kept):
        if c.seed_id not in index:
            index[c.seed_id] = len(groups)
            groups.append([])
        groups[index[c.seed_id]].append(k)
        for v in c.required_skills:
            if v in req:
                req[v].append(k)
        for v in c.optional_skills:
            if v in opt and v not in c.required_skills:
                opt[v].append(k)
    problem = Problem(
        mode=mode,
        weights=kept_w,
        groups=groups,
        target=target,
        coverage=coverage,
        req_cover={v: cs for v, cs in req.items() if cs},
        opt_cover={v: cs for v, cs in opt.items() if cs},
        max_slack=config.max_slack,
        optional_penalty=config.optional_penalty,
        coverage_penalty=config.coverage_penalty,
    )
    return problem, kept, len(drop)


def _solve(
    p: Problem, backend: Backend, config: SelectorConfig, time_limit: float | None
) -> tuple[Solution, Backend, str, str | None, SolverReport | None]:
    """(solution, backend used, status, fallback reason, SCIP report)."""
    small = p.mode == "local" or p.n <= config.enumerate_max
    source = "explicit" if time_limit is not None else "scaled"
    limit = time_limit if time_limit is not None else scaled_time_limit(p.n, config)
    if backend == "enumerate":
        if not small:
            raise ConfigError(f"enumeration is exact only up to {config.enumerate_max} candidates; got {p.n}")
        sol = enumerate_exact(p)
        if sol:
            return sol, "enumerate", "optimal", None, None
        return greedy(p), "greedy", "infeasible", None, None
    budget = min(limit, FALLBACK_SECONDS)
    if backend == "greedy":
        sol, status = fallback(p, budget)
        return sol, "greedy", status, None, None
    warm = greedy(p)
    r = solve_scip(p, warm, config.scip_seed, limit, config.start_method)
    report = _report(r, p, source)
    if r.status == "optimal" and r.chosen is not None and r.objective is not None:
        exact = evaluate(p, r.chosen)
        exact.objective = r.objective
        exact.y = r.y or {}
        exact.xi = r.xi or {}
        return exact, "scip", "optimal", None, report
    reason = _reason(r)
    if small:
        sol = enumerate_exact(p)
        if sol is not None:
            logger.warning("selector fell back to enumeration: %s", reason)
            return sol, "enumerate", r.status, reason, report
    sol, status = fallback(p, budget)
    if status == "no_feasible_found":
        reason += "; the fallback found no feasible selection (infeasibility not proven)"
    logger.warning("selector fell back to greedy + swap search (%s): %s", status, reason)
    return sol, "greedy", r.status, reason, report


def _activated(p: Problem, sol: Solution) -> dict[int, list[str]]:
    """Decode u for optional nodes: y_v of the selected carriers of v, in candidate order."""
    picked = set(sol.chosen)
    out: dict[int, list[str]] = {}
    for v, count in sol.y.items():
        for c in [c for c in p.opt_cover.get(v, []) if c in picked][: max(0, count)]:
            out.setdefault(c, []).append(v)
    return out


def select_actions(
    pass_rates: list[SeedPassRate],
    mode: str = "local",
    target: int | None = None,
    backend: str = "scip",
    config: SelectorConfig | None = None,
    taxonomy: Taxonomy | None = None,
    time_limit: float | None = None,
    allowed_actions: Collection[str] | None = None,
) -> tuple[list[Decision], SelectionTrace]:
    """Choose one action per seed (local) or N actions, at most one per seed (portfolio).

    `mode` is one of `MODES` and `backend` one of `BACKENDS` (ConfigError otherwise).
    `allowed_actions` restricts the action variants (a fixed recipe's action mask); None: all six.
    `time_limit`: the SCIP wall-clock limit, s; None: `config.time_limit`, else `scaled_time_limit`.
    """
    started = time.perf_counter()
    config = config or SelectorConfig()
    if mode not in MODES:
        raise ConfigError(f"unknown mode '{mode}' (local or portfolio)")
    if backend not in BACKENDS:
        raise ConfigError(f"unknown backend '{backend}' ({', '.join(BACKENDS)})")
    ids = [s.seed_id for s in pass_rates]
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})[:5]
        raise ConfigError(f"duplicate seed ids: {', '.join(dup)}")
    candidates = build_candidates(pass_rates, config, taxonomy)
    if allowed_actions is not None:
        candidates = [c for c in candidates if c.action_variant in allowed_actions]
    eligible = [c for c in candidates if c.eligible]
    ineligible = {
        f"{c.seed_id}:{c.action_variant}": c.ineligible_reasons for c in candidates if not c.eligible
    }
    n_seeds = len({c.seed_id for c in eligible})
    if mode == "local":
        if target is not None and target != n_seeds:
            raise ConfigError(f"local mode selects one action per seed ({n_seeds}); --target {target} given")
        n = n_seeds
    else:
        n = n_seeds if target is None else target
        if not 1 <= n <= n_seeds:
            raise ConfigError(
                f"target {n} must be between 1 and the {n_seeds} seeds with eligible candidates"
            )
    if n_seeds == 0:
        trace = SelectionTrace(
            backend=backend,
            formulation=mode,
            status="empty",
            objective=None,
            n_candidates=0,
            n_seeds=0,
            target_count=0,
            ineligible=ineligible,
            seconds=time.perf_counter() - started,
        )
        return [], trace
    problem, kept, dominated = build_problem(eligible, mode, n, config)
    limit = time_limit if time_limit is not None else config.time_limit
    sol, used, status, reason, report = _solve(problem, backend, config, limit)
    optional = _activated(problem, sol)
    decisions = []
    for c in sol.chosen:
        cand = kept[c]
        decisions.append(
            Decision(
                seed_id=cand.seed_id,
                projection=cand.projection,
                direction=cand.direction,
                action_variant=cand.action_variant,
                pass_rate=cand.pass_rate,
                reward_band=reward_band(cand.pass_rate),
                projected_pass_rate=cand.projected_pass_rate,
                frontier_score=cand.frontier_score,
                backend=used,
                required_skills=cand.required_skills,
                selected_optional_skills=optional.get(c, []),
                optional_skills=cand.optional_skills,
                removable_skills=cand.removable_skills,
            )
        )
    order = {s: k for k, s in enumerate(ids)}
    decisions.sort(key=lambda d: order[d.seed_id])
    nodes = sorted({v for d in decisions for v in (*d.required_skills, *d.selected_optional_skills)})
    trace = SelectionTrace(
        backend=used,
        formulation=mode,
        status=status,
        objective=round(sol.objective, 9),
        n_candidates=len(eligible),
        n_seeds=n_seeds,
        target_count=n,
        n_coverage_targets=len(problem.coverage),
        requested_coverage=problem.coverage,
        realized_slack={v: round(x, 9) for v, x in sol.xi.items()},
        selected_actions=[f"{d.seed_id}:{d.action_variant}" for d in decisions],
        selected_skill_nodes=nodes,
        seconds=round(time.perf_counter() - started, 6),
        fallback_reason=reason,
        solver=report,
        ineligible=ineligible,
        dominated=dominated,
    )
    return decisions, trace
