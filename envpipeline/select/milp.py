"""The SCIP solve of a selection problem, in a child process killed at a hard wall-clock limit.

SCIP can overrun its own ``limits/time`` (long presolve or LP rounds check the clock rarely), so the
model is built and solved in a child process (fork by default, spawn/forkserver configurable);
the parent waits for the result until the deadline and kills the child otherwise. The child is
deterministic: fixed random seeds, one thread, wall-clock timing, no output. It is warm-started
from the greedy solution (``addSol``). Only status ``optimal`` is accepted by the caller; the
objective is read only when a solution exists, and x is decoded at 0.5.

Large portfolio instances (at least `REDUCE_MIN_CANDIDATES` candidates) are first reduced exactly
(core.py): the LP relaxation's duals give a Lagrangian bound L, and only the candidates that can
appear in a selection at least as good as the warm start are handed to SCIP (with the seeds every
such selection must use forced in). When L does not exceed the warm start's objective by more
than `PROOF_TOL`, the warm start is optimal and SCIP is not run (``proof="lagrangian bound"``).
On the 50,000-seed bench portfolio this keeps ~23% of the candidates; see bench/milp_bench.py.
"""

from __future__ import annotations

import multiprocessing
import time
from dataclasses import dataclass
from multiprocessing.context import ForkContext, ForkServerContext, SpawnContext
from typing import Any, Literal

from envpipeline.select.core import Reduction, lift, reduce_problem
from envpipeline.select.problem import Problem, Solution, evaluate

#: portfolio instances with at least this many candidates are reduced before SCIP (core.py)
REDUCE_MIN_CANDIDATES = 1000
#: the warm start is proven optimal when the Lagrangian bound exceeds it by at most this much
PROOF_TOL = 1e-6

StartMethod = Literal["fork", "spawn", "forkserver"]


@dataclass
class ScipResult:
    """What came back from the child (or why nothing did)."""

    status: str  # SCIP status, or "killed" / "crashed" / "unavailable"
    objective: float | None = None
    chosen: list[int] | None = None
    y: dict[str, int] | None = None
    xi: dict[str, float] | None = None
    seconds: float = 0.0
    error: str | None = None
    time_limit: float | None = None  # the wall-clock limit the solve ran under, s
    gap: float | None = None  # SCIP's relative primal-dual gap when it stopped
    dual_bound: float | None = None  # the best proven upper bound (SCIP's, or the Lagrangian L)
    proof: str | None = None  # "scip", or "lagrangian bound" when L proves the warm start optimal
    reduction: Reduction | None = None


def scip_available() -> str | None:
    """None when PySCIPOpt imports, else the import error."""
    try:
        import pyscipopt  # noqa: F401
    except Exception as e:  # ImportError, or a broken shared library
        return f"{type(e).__name__}: {e}"
    return None


def _set_params(model: Any, seed: int, time_limit: float) -> None:
    model.hideOutput()
    params = {
        "limits/time": time_limit,
        "timing/clocktype": 2,  # wall clock
        "randomization/randomseedshift": seed,
        "randomization/permutationseed": seed,
        "randomization/lpseed": seed,
        "lp/threads": 1,
        "parallel/maxnthreads": 1,
        # symmetry detection: on the 5,000-seed bench core (7,268 candidates) it took most of the
        # presolve (2.5 CPU s in all vs 0.8 without, same optimum): interchangeable seeds do not
        # slow a solve whose LP bound is already (nearly) tight
        "misc/usesymmetry": 0,
    }
    for name, value in params.items():
        try:
            model.setParam(name, value)
        except (KeyError, LookupError, ValueError):  # a parameter this SCIP build lacks
            continue
    # fast presolve: the default presolve spends ~4 s on the 10k-seed portfolio (dominated-column
    # and probing rounds) for no gain; the fast setting cuts presolve to ~0.5 s, same optimum.
    # pyscipopt re-exports this class as SCIP_PARAMSETTING; its typed home is pyscipopt.scip
    from pyscipopt.scip import PY_SCIP_PARAMSETTING

    model.setPresolve(PY_SCIP_PARAMSETTING.FAST)


def build_model(p: Problem, warm: Solution | None, seed: int = 0, time_limit: float = 1e20) -> tuple:
    """The compact PySCIPOpt model of `p` (see problem.py) and its variables."""
    from pyscipopt import Model, quicksum

    model = Model("envs_forge_selection")
    _set_params(model, seed, time_limit)
    x = [model.addVar(f"x{c}", vtype="B", obj=p.weights[c]) for c in range(p.n)]
    y: dict[str, Any] = {}
    xi: dict[str, Any] = {}
    exact = p.mode == "local"
    forced = set(p.forced)
    for i, group in enumerate(p.groups):
        if exact or i in forced:
            model.addCons(quicksum(x[c] for c in group) == 1, name=f"one_{i}")
        elif len(group) > 1:
            model.addCons(quicksum(x[c] for c in group) <= 1, name=f"atmost_{i}")
    if not exact:
        model.addCons(quicksum(x) == p.target, name="cardinality")
        for v, share in p.coverage.items():
            carriers = p.opt_cover.get(v, [])
            terms = [x[c] for c in p.req_cover.get(v, [])]
            xi[v] = model.addVar(f"xi_{v}", vtype="C", lb=0.0, ub=p.max_slack, obj=-p.coverage_penalty)
            if carriers:
                y[v] = model.addVar(f"y_{v}", vtype="I", lb=0, ub=len(carriers), obj=-p.optional_penalty)
                model.addCons(y[v] <= quicksum(x[c] for c in carriers), name=f"optional_{v}")
                terms.append(y[v])
            model.addCons(quicksum(terms) + p.target * xi[v] >= p.target * share, name=f"cover_{v}")
    model.setMaximize()
    if warm is not None and warm.feasible:
        sol = model.createSol()
        picked = set(warm.chosen)
        for c in range(p.n):
            model.setSolVal(sol, x[c], 1.0 if c in picked else 0.0)
        for v in y:
            model.setSolVal(sol, y[v], float(warm.y.get(v, 0)))
        for v in xi:
            model.setSolVal(sol, xi[v], warm.xi.get(v, 0.0))
        model.addSol(sol, free=True)
    return model, x, y, xi


def _finite(value: float) -> float | None:
    return value if abs(value) < 1e19 else None


def solve_in_process(
    p: Problem, warm: Solution | None, seed: int, time_limit: float, reduce: bool | None = None
) -> ScipResult:
    """Build and solve `p` here; decode x and y at 0.5 when a solution exists.

    `reduce`: run the exact core reduction first (None: for portfolio instances of at least
    `REDUCE_MIN_CANDIDATES` candidates with a feasible warm start)."""
    started = time.perf_counter()
    if reduce is None:
        reduce = p.mode == "portfolio" and p.n >= REDUCE_MIN_CANDIDATES
    reduction: Reduction | None = None
    cols: list[int] | None = None
    model_p, model_warm = p, warm
    if reduce and warm is not None and warm.feasible:
        reduced = reduce_problem(p, warm, started + 0.5 * time_limit)
        if reduced is not None:
            model_p, cols, reduction = reduced
            if reduction.bound - warm.objective <= PROOF_TOL:
                return ScipResult(
                    status="optimal",
                    objective=warm.objective,
                    chosen=list(warm.chosen),
                    y=dict(warm.y),
                    xi=dict(warm.xi),
                    seconds=time.perf_counter() - started,
                    time_limit=time_limit,
                    gap=0.0,
                    dual_bound=reduction.bound,
                    proof="lagrangian bound",
                    reduction=reduction,
                )
            position = {c: k for k, c in enumerate(cols)}
            model_warm = evaluate(model_p, [position[c] for c in warm.chosen])
    remaining = max(0.01, time_limit - (time.perf_counter() - started))
    model, x, y, xi = build_model(model_p, model_warm, seed, remaining)
    model.optimize()
    status = model.getStatus()
    result = ScipResult(status=status, time_limit=time_limit, proof="scip", reduction=reduction)
    result.dual_bound = _finite(model.getDualbound())
    if model.getNSols() > 0:
        best = model.getBestSol()
        result.objective = model.getSolObjVal(best)
        result.gap = _finite(model.getGap())
        chosen = [c for c in range(model_p.n) if model.getSolVal(best, x[c]) > 0.5]
        result.chosen = chosen if cols is None else lift(chosen, cols)
        result.y = {v: round(model.getSolVal(best, var)) for v, var in y.items()}
        result.xi = {v: max(0.0, model.getSolVal(best, var)) for v, var in xi.items()}
    result.seconds = time.perf_counter() - started
    return result


def _child(
    p: Problem, warm: Solution | None, seed: int, time_limit: float, conn: Any, reduce: bool | None = None
) -> None:
    try:
        conn.send(solve_in_process(p, warm, seed, time_limit, reduce))
    except BaseException as e:  # report anything rather than die silently
        conn.send(ScipResult(status="crashed", error=f"{type(e).__name__}: {e}"))
    finally:
        conn.close()


def _context(start_method: StartMethod) -> ForkContext | SpawnContext | ForkServerContext:
    """The multiprocessing context of a start method (each literal has its own typed context)."""
    if start_method == "spawn":
        return multiprocessing.get_context("spawn")
    if start_method == "forkserver":
        return multiprocessing.get_context("forkserver")
    return multiprocessing.get_context("fork")


def solve_scip(
    p: Problem,
    warm: Solution | None,
    seed: int,
    time_limit: float,
    start_method: StartMethod = "fork",
    reduce: bool | None = None,
) -> ScipResult:
    """Solve in a child process; kill it at `time_limit` wall-clock seconds (`reduce`: see
    `solve_in_process`)."""
    missing = scip_available()
    if missing:
        return ScipResult(status="unavailable", error=missing)
    started = time.perf_counter()
    ctx = _context(start_method)
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(p, warm, seed, 0.9 * time_limit, child, reduce), daemon=True)
    proc.start()
    child.close()
    try:
        remaining = time_limit - (time.perf_counter() - started)
        if remaining > 0 and parent.poll(remaining):
            try:
                result: ScipResult = parent.recv()
            except EOFError:
                result = ScipResult(status="crashed", error=f"solver process exited with {proc.exitcode}")
        else:
            result = ScipResult(
                status="killed", error=f"no result within the {time_limit:g}s wall-clock limit"
            )
        result.time_limit = time_limit
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join(timeout=5)
        parent.close()
    result.seconds = time.perf_counter() - started
    return result
