"""Envs-FORGE selector bench: local and portfolio MILP solve times, greedy quality, baselines.

One run, the same instances:

1. local mode, 100 seeds x 6 actions (SCIP, one stacked model, child process);
2. portfolio mode, 10,000 seeds x 6 actions, ~30 skill nodes with proportional coverage targets,
   N = 4,000 (SCIP on the compact formulation, child process, greedy warm start, exact core
   reduction: milp.py / core.py);
3. the greedy fallback's objective / the SCIP optimum on instance 2;
4. the new fallback (greedy + coverage repair + swap search) / the SCIP optimum on instance 2;
5. the textbook formulation (below) of instance 2 built and solved by SCIP, with the
   compact / textbook time ratio;
6. peer baseline: HiGHS (highspy, the `bench` extra) on the plain textbook formulation of instance 2:
   one binary x_c per candidate (no dominance reduction) and one binary u_{c,v} per (candidate,
   skill) pair it carries, u = x for required nodes, u <= x (penalized) for optional ones, and the
   coverage rows over u;
7. the 50,000-seed portfolio (N = 20,000): time to optimal with the selector's defaults (scaled
   time limit, core reduction), against the old behaviour in the same run: the unreduced compact
   model under the old fixed 10 s limit, then the greedy + swap fallback (its objective / optimum).
   ``--unreduced-limit S`` also times the unreduced model to optimality (it took 77 s unloaded).

Every solver runs under its own time limit and is stopped there: SCIP compact in its child process
(killed at the limit), SCIP textbook and HiGHS each in a forked child that gets the limit as the
solver's own option and is killed 2 s after it. Each line prints wall and CPU seconds (this process
and its children), status and objective. The machine may be shared: compare CPU beside wall.

Goals: local < 0.5 s; portfolio faster than the HiGHS baseline, aiming at <= 10 s; greedy >= 0.98;
the 50,000-seed portfolio optimal in <= 60 s.

Usage: python bench/milp_bench.py [--seeds 10000] [--target 4000] [--local-seeds 100] [--no-highs]
       [--no-textbook] [--big-seeds 50000] [--big-target 20000] [--no-big] [--unreduced-limit 0]
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import resource
import time
from collections.abc import Callable
from typing import Any

from envpipeline.models.selection import SeedPassRate
from envpipeline.select import milp
from envpipeline.select.actions import SelectorConfig
from envpipeline.select.fallback import fallback
from envpipeline.select.milp import ScipResult, solve_scip
from envpipeline.select.problem import evaluate, greedy
from envpipeline.select.selector import FALLBACK_SECONDS, build_problem, scaled_time_limit
from envpipeline.select.skills import VOCABULARY, build_candidates

CORE = [n for n, node in VOCABULARY.items() if node.tier == "core"]
SYSTEM = [n for n, node in VOCABULARY.items() if node.tier == "system"]


def make_seeds(n: int, seed: int = 7, rollouts: int = 8) -> list[SeedPassRate]:
    """Synthetic seeds: 1-2 core + 0-2 system required nodes, 0-2 optional; more system nodes
    make a seed harder (infrastructure masks the reasoning skill), pass rates are k/8."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        n_sys = rng.choice([0, 0, 1, 1, 2])
        required = rng.sample(CORE, rng.choice([1, 2])) + rng.sample(SYSTEM, n_sys)
        rest = [v for v in VOCABULARY if v not in required]
        optional = rng.sample(rest, rng.choice([0, 1, 2]))
        skill = min(0.97, max(0.03, rng.betavariate(2.0, 1.6) - 0.22 * n_sys))
        passes = sum(rng.random() < skill for _ in range(rollouts))
        out.append(
            SeedPassRate(
                seed_id=f"s{i:05d}",
                pass_rate=passes / rollouts,
                required_skills=required,
                optional_skills=optional,
                rollouts=rollouts,
            )
        )
    return out


def _cpu() -> float:
    """CPU seconds of this process and its reaped children."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def measured(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, float, float]:
    """(result, wall s, CPU s) of one call."""
    wall, cpu = time.perf_counter(), _cpu()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - wall, _cpu() - cpu


def _run_child(fn: Callable[..., dict], args: tuple, conn: Any) -> None:
    try:
        conn.send(fn(*args))
    except BaseException as e:  # report, never hang the parent
        conn.send({"status": "crashed", "error": f"{type(e).__name__}: {e}"})
    finally:
        conn.close()


def in_child(fn: Callable[..., dict], args: tuple, limit: float, grace: float = 2.0) -> dict:
    """Run fn(*args) in a forked child; kill it `grace` s after `limit` (the solver gets `limit` as
    its own option). Adds wall and CPU seconds (the child's CPU counts once it is reaped)."""
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    wall, cpu = time.perf_counter(), _cpu()
    proc = ctx.Process(target=_run_child, args=(fn, args, child), daemon=True)
    proc.start()
    child.close()
    out: dict = {"status": f"killed at the {limit:g} s limit (+{grace:g} s grace)", "objective": None}
    try:
        if parent.poll(limit + grace):
            try:
                out = parent.recv()
            except EOFError:
                out = {"status": f"crashed (exit {proc.exitcode})", "objective": None}
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join(timeout=10)
        parent.close()
    out["wall"], out["cpu"] = time.perf_counter() - wall, _cpu() - cpu
    return out


def line(name: str, status: str, objective: float | None, wall: float, cpu: float, extra: str = "") -> str:
    obj = "-" if objective is None else f"{objective:.6f}"
    return f"  {name}: status {status}, objective {obj}, wall {wall:.2f} s, CPU {cpu:.2f} s{extra}"


def bench_local(n: int, config: SelectorConfig) -> dict:
    seeds = make_seeds(n, seed=11)
    candidates = build_candidates(seeds, config)
    problem, _, _ = build_problem(candidates, "local", n, config)
    warm = greedy(problem)
    runs = []
    for _ in range(3):
        r = solve_scip(
            problem, warm, config.scip_seed, scaled_time_limit(problem.n, config), config.start_method
        )
        runs.append(r)
    best = min(r.seconds for r in runs)
    return {
        "status": runs[-1].status,
        "objective": runs[-1].objective,
        "seconds": best,
        "greedy": warm.objective,
        "vars": problem.n,
    }


def highs_textbook(
    candidates, weights, coverage: dict[str, float], n_target: int, config: SelectorConfig, time_limit: float
) -> dict:
    try:
        import highspy
        import numpy as np
    except ImportError as e:
        return {"error": f"highspy is not installed ({e}); pip install -e '.[bench]'"}
    started = time.perf_counter()
    n = len(candidates)
    cols_cost = list(weights)
    lower, upper, integrality = [0.0] * n, [1.0] * n, [1] * n
    rows: list[tuple[list[int], list[float], float, float]] = []
    cover_terms: dict[str, list[int]] = {v: [] for v in coverage}
    seeds: dict[str, list[int]] = {}
    for c, cand in enumerate(candidates):
        seeds.setdefault(cand.seed_id, []).append(c)
        pairs = [(v, True) for v in cand.required_skills]
        pairs += [(v, False) for v in cand.optional_skills if v not in cand.required_skills]
        for v, required in pairs:
            u = len(cols_cost)
            cols_cost.append(0.0 if required else -config.optional_penalty)
            lower.append(0.0)
            upper.append(1.0)
            integrality.append(1)
            # required: u - x = 0; optional: u - x <= 0
            rows.append(([u, c], [1.0, -1.0], 0.0 if required else -np.inf, 0.0))
            if v in cover_terms:
                cover_terms[v].append(u)
    for group in seeds.values():
        rows.append((group, [1.0] * len(group), -np.inf, 1.0))
    rows.append((list(range(n)), [1.0] * n, float(n_target), float(n_target)))
    for v, share in coverage.items():
        xi = len(cols_cost)
        cols_cost.append(-config.coverage_penalty)
        lower.append(0.0)
        upper.append(config.max_slack)
        integrality.append(0)
        idx = cover_terms[v] + [xi]
        rows.append((idx, [1.0] * (len(idx) - 1) + [float(n_target)], n_target * share, np.inf))
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = len(cols_cost), len(rows)
    lp.col_cost_ = np.array(cols_cost)
    lp.col_lower_, lp.col_upper_ = np.array(lower), np.array(upper)
    lp.row_lower_ = np.array([r[2] for r in rows])
    lp.row_upper_ = np.array([r[3] for r in rows])
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    starts = np.cumsum([0] + [len(r[0]) for r in rows])
    lp.a_matrix_.start_ = starts
    lp.a_matrix_.index_ = np.concatenate([np.array(r[0], dtype=np.int32) for r in rows])
    lp.a_matrix_.value_ = np.concatenate([np.array(r[1], dtype=float) for r in rows])
    lp.sense_ = highspy.ObjSense.kMaximize
    lp.integrality_ = [
        highspy.HighsVarType.kInteger if k else highspy.HighsVarType.kContinuous for k in integrality
    ]
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    h.setOptionValue("random_seed", 0)
    h.setOptionValue("time_limit", time_limit)
    h.passModel(lp)
    built = time.perf_counter() - started
    h.run()
    status = h.modelStatusToString(h.getModelStatus())
    info = h.getInfo()
    return {
        "status": status,
        "objective": info.objective_function_value,
        "build": built,
        "seconds": time.perf_counter() - started,
        "cols": len(cols_cost),
        "rows": len(rows),
        "gap": info.mip_gap,
    }


def scip_textbook(
    candidates, weights, coverage: dict[str, float], n_target: int, config: SelectorConfig, time_limit: float
) -> dict:
    """The textbook formulation of `highs_textbook`, built and solved with SCIP in this process
    (default presolve; `vars` counts x, the u of coverage nodes and xi)."""
    from pyscipopt import Model, quicksum

    started = time.perf_counter()
    model = Model("textbook")
    model.hideOutput()
    model.setParam("limits/time", time_limit)
    model.setParam("randomization/randomseedshift", config.scip_seed)
    x = [model.addVar(vtype="B", obj=w) for w in weights]
    cover: dict[str, list] = {v: [] for v in coverage}
    seeds: dict[str, list] = {}
    for c, cand in enumerate(candidates):
        seeds.setdefault(cand.seed_id, []).append(x[c])
        for v in cand.required_skills:
            if v in cover:
                u = model.addVar(vtype="B")
                model.addCons(u == x[c])
                cover[v].append(u)
        for v in cand.optional_skills:
            if v not in cand.required_skills:
                u = model.addVar(vtype="B", obj=-config.optional_penalty)
                model.addCons(u <= x[c])
                if v in cover:
                    cover[v].append(u)
    for group in seeds.values():
        model.addCons(quicksum(group) <= 1)
    model.addCons(quicksum(x) == n_target)
    for v, share in coverage.items():
        xi = model.addVar(vtype="C", lb=0.0, ub=config.max_slack, obj=-config.coverage_penalty)
        model.addCons(quicksum(cover[v]) + n_target * xi >= n_target * share)
    model.setMaximize()
    built = time.perf_counter() - started
    model.optimize()
    return {
        "status": model.getStatus(),
        "objective": model.getObjVal() if model.getNSols() else None,
        "build": built,
        "seconds": time.perf_counter() - started,
        "vars": len(weights) + sum(len(us) for us in cover.values()) + len(coverage),
    }


def _scip_line(name: str, r: ScipResult, wall: float, cpu: float) -> str:
    extra = f", limit {r.time_limit:g} s"
    if r.gap is not None:
        extra += f", gap {100 * r.gap:.3g}%"
    if r.reduction is not None:
        extra += (
            f", core {r.reduction.kept} of {r.reduction.total} candidates (LP bound {r.reduction.bound:.6f})"
        )
    if r.proof:
        extra += f", proof: {r.proof}"
    return line(name, r.status, r.objective, wall, cpu, extra)


def bench_big(seeds_n: int, target: int, config: SelectorConfig, unreduced_limit: float) -> None:
    """The large portfolio: default selector solve vs the old fixed 10 s limit, same run."""
    t = time.perf_counter()
    candidates = build_candidates(make_seeds(seeds_n), config)
    problem, _, dominated = build_problem(candidates, "portfolio", target, config)
    print(
        f"portfolio {seeds_n} seeds, N = {target}: {problem.n} candidates after {dominated} dominated dropped, "
        f"{len(problem.coverage)} coverage targets (instance built in {time.perf_counter() - t:.1f} s wall)"
    )
    warm, g_wall, g_cpu = measured(greedy, problem)
    print(
        line(
            "greedy warm start", "feasible" if warm.feasible else "infeasible", warm.objective, g_wall, g_cpu
        )
    )
    limit = scaled_time_limit(problem.n, config)
    new, n_wall, n_cpu = measured(solve_scip, problem, warm, config.scip_seed, limit, config.start_method)
    print(_scip_line("NEW  SCIP, scaled limit, core reduction", new, n_wall, n_cpu))
    optimum = new.objective if new.status == "optimal" else None
    total_wall, total_cpu = g_wall + n_wall, g_cpu + n_cpu
    if optimum is not None:
        print(
            f"  NEW  time to optimal (greedy + solve): wall {total_wall:.2f} s, CPU {total_cpu:.2f} s "
            f"(goal <= 60 s wall: {'met' if total_wall <= 60 else 'MISSED'})"
        )
    else:
        print(f"  NEW  not optimal within its {limit:g} s limit (goal <= 60 s: MISSED)")
    if new.proof == "lagrangian bound":  # the same core, solved by SCIP instead of proven by the bound
        proof_tol, milp.PROOF_TOL = milp.PROOF_TOL, float("-inf")
        try:
            core_run, c_wall, c_cpu = measured(
                solve_scip, problem, warm, config.scip_seed, limit, config.start_method
            )
        finally:
            milp.PROOF_TOL = proof_tol
        print(_scip_line("NEW' the same, SCIP run on the core (no bound proof)", core_run, c_wall, c_cpu))
    old, o_wall, o_cpu = measured(
        solve_scip, problem, warm, config.scip_seed, 10.0, config.start_method, reduce=False
    )
    print(_scip_line("OLD  SCIP, fixed 10 s limit, unreduced", old, o_wall, o_cpu))
    if old.status != "optimal":
        (fb, fb_status), f_wall, f_cpu = measured(fallback, problem, FALLBACK_SECONDS)
        print(line(f"OLD  fallback greedy + swap ({fb_status})", fb_status, fb.objective, f_wall, f_cpu))
        ratio = f"{fb.objective / optimum:.7f}" if optimum else "-"
        print(
            f"  OLD  selection: wall {g_wall + o_wall + f_wall:.2f} s, CPU {g_cpu + o_cpu + f_cpu:.2f} s, "
            f"not proven optimal; objective / optimum = {ratio}"
        )
    if unreduced_limit > 0:
        full, u_wall, u_cpu = measured(
            solve_scip, problem, warm, config.scip_seed, unreduced_limit, config.start_method, reduce=False
        )
        print(_scip_line(f"OLD  SCIP unreduced, {unreduced_limit:g} s limit", full, u_wall, u_cpu))
        if full.status == "optimal" and optimum is not None:
            print(
                f"  unreduced / reduced solve wall = {u_wall / n_wall:.2f}x, CPU = {u_cpu / max(n_cpu, 1e-9):.2f}x"
            )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=10_000)
    ap.add_argument("--target", type=int, default=4_000)
    ap.add_argument("--local-seeds", type=int, default=100)
    ap.add_argument("--time-limit", type=float, default=120.0, help="limit of every 10k-instance solver")
    ap.add_argument("--no-highs", action="store_true")
    ap.add_argument("--no-textbook", action="store_true", help="skip the SCIP textbook model")
    ap.add_argument("--no-small", action="store_true", help="skip the local and 10k sections")
    ap.add_argument("--big-seeds", type=int, default=50_000)
    ap.add_argument("--big-target", type=int, default=20_000)
    ap.add_argument("--no-big", action="store_true", help="skip the 50k section")
    ap.add_argument("--unreduced-limit", type=float, default=0.0, help="also time the unreduced 50k model")
    args = ap.parse_args()
    config = SelectorConfig(time_limit=args.time_limit)

    # warm-up (imports, the first fork, SCIP's first model) outside every timed figure
    solve_scip(
        build_problem(build_candidates(make_seeds(20, seed=3), config), "portfolio", 8, config)[0],
        None,
        0,
        30,
    )
    if not args.no_small:
        bench_small(args, config)
    if not args.no_big:
        bench_big(args.big_seeds, args.big_target, SelectorConfig(), args.unreduced_limit)


def bench_small(args: argparse.Namespace, config: SelectorConfig) -> None:
    """Sections 1-6 (local, and the 10,000-seed portfolio against its baselines)."""
    local = bench_local(args.local_seeds, config)
    print(
        f"local   {args.local_seeds} seeds x 6 = {local['vars']} binaries: status {local['status']}, "
        f"objective {local['objective']:.4f}, {local['seconds']:.3f} s (goal < 0.5 s: "
        f"{'met' if local['seconds'] < 0.5 else 'MISSED'}, {local['seconds'] / 0.5:.2f}x of it)"
    )

    t = time.perf_counter()
    seeds = make_seeds(args.seeds)
    candidates = build_candidates(seeds, config)
    t_cand = time.perf_counter() - t
    t = time.perf_counter()
    problem, _, dominated = build_problem(candidates, "portfolio", args.target, config)
    t_prob = time.perf_counter() - t
    warm, t_greedy, _ = measured(greedy, problem)
    r, r_wall, r_cpu = measured(
        solve_scip, problem, warm, config.scip_seed, args.time_limit, config.start_method
    )
    skills = {v for c in candidates for v in (*c.required_skills, *c.optional_skills)}
    print(
        f"portfolio {args.seeds} seeds x 6 = {len(candidates)} candidates, {len(skills)} skill nodes, "
        f"{len(problem.coverage)} coverage targets, N = {args.target}; {dominated} dominated dropped "
        f"-> {problem.n} x"
    )
    print(f"  candidates {t_cand:.2f} s, problem {t_prob:.2f} s, greedy {t_greedy:.2f} s")
    print(_scip_line("SCIP compact (child process)", r, r_wall, r_cpu))
    if r.chosen is not None:
        check = evaluate(problem, r.chosen)
        print(
            f"  decoded check: objective {check.objective:.6f}, feasible {check.feasible}, "
            f"max slack {max(check.xi.values(), default=0):.4f}"
        )
    if r.objective:
        print(
            f"  greedy {warm.objective:.4f} / optimum {r.objective:.4f} = {warm.objective / r.objective:.5f} "
            f"(goal >= 0.98: {'met' if warm.objective / r.objective >= 0.98 else 'MISSED'})"
        )
    (improved, fb_status), t_fb, _ = measured(fallback, problem)
    if r.objective:
        print(
            f"  fallback (greedy + repair + swap search, {t_fb:.2f} s, {fb_status}): {improved.objective:.4f} / "
            f"optimum = {improved.objective / r.objective:.5f}"
        )
    weights = [
        c.frontier_score
        + config.affinity_epsilon
        * (c.direction == ("in_breadth" if c.projection == "diversify_frontier" else "in_depth"))
        for c in candidates
    ]
    base = (candidates, weights, problem.coverage, args.target, config, args.time_limit)
    if not args.no_textbook:
        tb = in_child(scip_textbook, base, args.time_limit)
        extra = f", {tb['vars']} vars (build {tb['build']:.2f} s)" if "vars" in tb else ""
        print(
            line("SCIP textbook (forked child)", tb["status"], tb["objective"], tb["wall"], tb["cpu"], extra)
        )
        if r.status == "optimal" and tb["status"] == "optimal":
            print(
                f"  compact / textbook wall = {r_wall / tb['wall']:.3f}, CPU = {r_cpu / max(tb['cpu'], 1e-9):.3f}"
            )
        print(
            f"  SCIP compact goal <= 10 s wall: {'met' if r.status == 'optimal' and r_wall <= 10 else 'MISSED'}"
        )
    if not args.no_highs:
        hs = in_child(highs_textbook, base, args.time_limit)
        if "error" in hs:
            print(f"  HiGHS baseline skipped: {hs['error']}")
        else:
            extra = f", {hs['cols']} cols, {hs['rows']} rows, gap {hs['gap']:.2e}" if "cols" in hs else ""
            print(
                line(
                    "HiGHS textbook (forked child)",
                    hs["status"],
                    hs["objective"],
                    hs["wall"],
                    hs["cpu"],
                    extra,
                )
            )
            if r.status != "optimal":
                print("  SCIP compact vs HiGHS textbook: no ratio: SCIP compact did not finish")
            else:
                finished = hs["status"] == "Optimal"
                print(
                    f"  SCIP compact vs HiGHS textbook: {'' if finished else '>= '}{hs['wall'] / r_wall:.1f}x "
                    f"faster (wall){'' if finished else ' (HiGHS stopped at its time limit)'}"
                )


if __name__ == "__main__":
    main()
