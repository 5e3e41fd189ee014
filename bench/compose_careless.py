"""One stated detail wrong at a time: which composed tasks reward a write with one detail changed?

The red team's `careless-constants` changes every argument a request states (beyond the chain's
values and record ids) at once, so it only proves that some stated detail is checked. This bench
changes them one at a time: for each accepted task of seeds 0..N-1 and each stated argument of each
reference write (`careless_arguments`), the reference runs with only that argument changed
(`changed`: the next number, the text's last letter or digit moved on; a change the tool refuses
is taken back). A run that passes every criterion while leaving another state than the reference
is a hole: the criteria do not check that detail.

Measured 2026-12-07 (2 cores), --seeds 300: curated services, before `compose.stated` pinned every
write of an action (b978bdf): 4 rewarded of 985 changes on 281 accepted tasks, all the topic of a
chat channel created and then given a member (the criterion checked the member's write only);
after: 0 of 985. Whole library (--library-scope all), after: 0 of 956 changes on 300 tasks.

Usage: python bench/compose_careless.py [--seeds 300] [--library-scope curated|all] [--show 10]
"""

from __future__ import annotations

import argparse
import time

from envpipeline.agents.environment import ComposedEnvironment
from envpipeline.canonical import canonical_hash
from envpipeline.compose.author import ComposeConfig
from envpipeline.compose.pipeline import compose_task
from envpipeline.models.task import TaskRecord
from envpipeline.redteam.base import ComposeAttack
from envpipeline.redteam.compose import reference_run, stored_states
from envpipeline.redteam.policies.careless_constants import careless_arguments, changed
from envpipeline.rubric import pass_vector


def holes_of(task: TaskRecord) -> tuple[int, list[str]]:
    """(stated arguments changed, those whose change the criteria still reward) for one task."""
    stored = stored_states(task)
    reference = reference_run(task, stored)
    tried, holes = 0, []
    for index, gold in enumerate(task.reference_solution):
        for name in careless_arguments(task, gold):
            tried += 1
            attack = ComposeAttack(task, ComposedEnvironment.from_initial_state(stored), reference)
            for k, step in enumerate(reference.steps):
                arguments = (
                    {**step.arguments, name: changed(step.arguments[name])} if k == index else step.arguments
                )
                if not attack.call(step.tool, dict(arguments)).get("success") and k == index:
                    attack.call(step.tool, dict(step.arguments))  # refused: the reference's call
            moot = canonical_hash(attack.env.snapshot()) == reference.final_hash
            if all(pass_vector(task.criteria, attack.env.states, reference.output)) and not moot:
                holes.append(f"{gold.tool} {name}")
    return tried, holes


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seeds", type=int, default=300)
    parser.add_argument("--library-scope", choices=["curated", "all"], default="curated")
    parser.add_argument("--show", type=int, default=10, help="print up to N holes with the task's request")
    args = parser.parse_args()
    config = ComposeConfig(library_scope=args.library_scope)
    started = time.perf_counter()
    accepted = tried = 0
    found: list[tuple[int, str, str]] = []
    for seed in range(args.seeds):
        task = compose_task(seed, config, "bench")
        if task.status != "accepted":
            continue
        accepted += 1
        changes, holes = holes_of(task)
        tried += changes
        found += [(seed, hole, task.instruction) for hole in holes]
    print(
        f"{args.library_scope}: {accepted} accepted tasks of {args.seeds} seeds, {tried} stated arguments "
        f"changed one at a time, {len(found)} rewarded (holes), {time.perf_counter() - started:.0f} s"
    )
    for seed, hole, instruction in found[: args.show]:
        print(f"--- seed {seed}: {hole}\n    {instruction[:400]}")


if __name__ == "__main__":
    main()
