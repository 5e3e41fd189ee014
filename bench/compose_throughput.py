"""Throughput of CompoWorld on one core: verified composed tasks/s and tool calls/s via call_tool.

Both figures come from the same tasks in one run. The tool-call path is the agent-facing one:
`MetaToolbox.dispatch("call_tool", json_arguments)` parses the JSON arguments, the service
validates them with pydantic, runs the tool and the observation is serialized to a JSON string.
A bare pydantic-validated function call is measured in the same run as a ceiling.

Usage: python bench/compose_throughput.py [--tasks 300] [--seconds 3]
"""

import argparse
import json
import os
import time

from pydantic import BaseModel

from envpipeline.agents.environment import ComposedEnvironment
from envpipeline.agents.metatools import MetaToolbox
from envpipeline.compose.author import ComposeConfig
from envpipeline.compose.pipeline import compose_task


def pin_to_one_core() -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})


def bench_compose(n: int) -> tuple[list, float, int]:
    config = ComposeConfig()
    started = time.perf_counter()
    records = [compose_task(seed, config, "bench") for seed in range(n)]
    elapsed = time.perf_counter() - started
    accepted = [r for r in records if r.status == "accepted"]
    return accepted, elapsed, len(records)


def replayable_calls(tasks: list) -> list[tuple[ComposedEnvironment, list[str]]]:
    """Per task: a fresh environment and its reference calls as JSON argument strings."""
    plans = []
    for task in tasks:
        env = ComposedEnvironment.from_task_environment(task.environment)
        reads = [
            json.dumps({"tool": s.tool, "arguments": s.arguments})
            for s in task.reference_solution
            if not env.services[s.tool.split(".")[0]].tools[s.tool.split(".")[1]].writes
        ]
        plans.append((env, reads))
    return plans


def bench_tool_calls(tasks: list, seconds: float) -> tuple[float, int]:
    plans = [(MetaToolbox(env), calls) for env, calls in replayable_calls(tasks) if calls]
    calls = 0
    started = time.perf_counter()
    deadline = started + seconds
    while time.perf_counter() < deadline:
        for toolbox, encoded in plans:
            for payload in encoded:
                toolbox.dispatch("call_tool", payload)
            calls += len(encoded)
    return calls / (time.perf_counter() - started), calls


class _Args(BaseModel):
    query: str
    limit: int = 10


def bench_bare_pydantic(seconds: float) -> float:
    def fn(args: _Args) -> dict:
        return {"query": args.query, "limit": args.limit}

    payload = {"query": "x", "limit": 3}
    n = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        for _ in range(1000):
            fn(_Args.model_validate(payload))
        n += 1000
    return n / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=300, help="candidates to compose")
    parser.add_argument("--seconds", type=float, default=3.0, help="duration of the tool-call loop")
    args = parser.parse_args()
    pin_to_one_core()
    accepted, elapsed, candidates = bench_compose(args.tasks)
    calls_per_s, calls = bench_tool_calls(accepted, args.seconds)
    bare = bench_bare_pydantic(1.0)
    print(f"candidates composed+verified: {candidates} in {elapsed:.2f}s on 1 core")
    print(f"verified tasks/s (accepted): {len(accepted) / elapsed:,.0f}   (goal >= 500)")
    print(f"candidates/s (all verdicts): {candidates / elapsed:,.0f}")
    print(
        f"call_tool calls/s (read tools of the same {len(accepted)} tasks' reference solutions): "
        f"{calls_per_s:,.0f}   (goal >= 100,000; {calls:,} calls)"
    )
    print(f"bare pydantic-validated function calls/s (same run): {bare:,.0f}")
    print(f"call_tool path / bare pydantic call: {calls_per_s / bare:.2f}x")


if __name__ == "__main__":
    main()
