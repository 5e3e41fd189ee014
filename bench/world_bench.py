"""WildAWM world bench: world build time per day (with every verification check) and gate throughput.

For each of N personas (propose_personas, diversity judge included) build day 00..D with
`build_world` (lint, replay determinism = two extra builds from scratch, declaration, live health,
rule-based reviewer) and report mean seconds per built day, plus the plain materialization time per
day (no checks) for comparison.

Usage: python bench/world_bench.py [--personas 3] [--days 5] [--seed 0] [--no-live] [--gates]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from envpipeline.models.world import WorldBuild
from envpipeline.worlds.build import build_world, materialize
from envpipeline.worlds.personas import propose_personas


def gate_throughput(builds: list[WorldBuild], root: Path, per_day: int = 3) -> dict[str, Any] | None:
    """Synthesize tasks on every day of `builds`, run all gates (6 real rollouts each through web,
    MCP and CLI) and measure: {"tasks", "accepted", "rollouts", "seconds", "tasks_per_minute", ...}."""
    from envpipeline.worlds.pipeline import gate_all, world_candidates

    started = time.perf_counter()
    candidates = []
    for build in builds:
        days = [d.day for d in build.days if d.day > 0]
        candidates += world_candidates(Path(build.root), days, per_day)
    generated = time.perf_counter() - started
    t0 = time.perf_counter()
    gated = gate_all(candidates, root / ".gate-work")
    seconds = time.perf_counter() - t0
    rollouts = [r for g in gated for r in g.rollouts]
    return {
        "tasks": len(gated),
        "accepted": sum(g.status == "accepted" for g in gated),
        "rollouts": len(rollouts),
        "generation_s": round(generated, 3),
        "seconds": round(seconds, 2),
        "tasks_per_minute": round(len(gated) / seconds * 60, 1) if seconds else 0.0,
        "rollout_s_median": round(statistics.median(r.seconds for r in rollouts), 3) if rollouts else 0.0,
        "cli_backends": sorted({r.cli_backend for r in rollouts}),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--personas", type=int, default=3)
    parser.add_argument("--days", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-live", action="store_true", help="skip the live health check")
    parser.add_argument("--gates", action="store_true", help="also measure gate throughput (hook)")
    args = parser.parse_args()

    started = time.perf_counter()
    personas, rejected = propose_personas(args.personas, args.seed)
    persona_s = time.perf_counter() - started
    print(f"personas: {len(personas)} accepted, {len(rejected)} rejected attempts, {persona_s:.3f} s")

    builds: list[WorldBuild] = []
    per_day_full: list[float] = []
    per_day_plain: list[float] = []
    with tempfile.TemporaryDirectory(prefix="world-bench-") as tmp:
        root = Path(tmp)
        for persona in personas:
            t0 = time.perf_counter()
            materialize(persona, args.days, root / "plain" / persona.persona_id)
            plain = time.perf_counter() - t0
            t0 = time.perf_counter()
            build = build_world(persona, args.days, root / "worlds", live_health=not args.no_live)
            full = time.perf_counter() - t0
            builds.append(build)
            per_day_full.append(full / args.days)
            per_day_plain.append(plain / args.days)
            failed = [f"day {d.day} {c.name}" for d in build.days for c in d.checks if not c.passed]
            live = {c.reason for d in build.days for c in d.checks if c.name == "live_health"}
            print(
                f"{persona.persona_id:28s} {args.days} days: {full:7.3f} s with checks "
                f"({full / args.days:.3f} s/day), {plain / args.days:.4f} s/day plain; "
                f"failed checks: {failed or 'none'}; live: {sorted(live)[0][:60]}"
            )
        print(
            f"world build time per day (with checks): mean {statistics.mean(per_day_full):.3f} s "
            f"over {len(personas)} personas x {args.days} days"
        )
        print(f"world materialization per day (no checks): mean {statistics.mean(per_day_plain):.4f} s")
        if args.gates:
            result = gate_throughput(builds, root / "worlds")
            if result is None:
                print("gate throughput: see bench/world_bench.py --gates (not implemented yet)")
            else:
                print(f"gate throughput: {result}")
        else:
            print("gate throughput: see bench/world_bench.py --gates")


if __name__ == "__main__":
    main()
