"""One change at a time: which composed tasks reward a write with one detail changed or added?

The red team's `careless-constants` changes every argument a request states (beyond the chain's
values and record ids) at once, so it only proves that some stated detail is checked; the other
widening policies (`other-fields`, `other-items`, `create-extras`, `create-options`,
`cc-outsider`) likewise set all they set in one attempt. This bench makes their changes one at a
time (`redteam.policies.one_change.single_changes`: one argument of one reference write) for each
accepted task of seeds 0..N-1: a run that passes every criterion while leaving another state than
the reference is a hole (the criteria do not check that detail). The `one-change` policy does the
same inside the red-team gate, so on accepted tasks this prints 0 unless the gate was bypassed;
run it on an older tree, or with `--policy`, to see where the holes were.

Measured 2026-12-07 (2 cores), --seeds 300: curated services, before `compose.stated` pinned every
write of an action (b978bdf): 4 rewarded of 985 changes on 281 accepted tasks, all the topic of a
chat channel created and then given a member (the criterion checked the member's write only);
after: 0 of 985 (0 of 990 at 9586a33). Whole library (--library-scope all), after: 0 of 956
changes on 300 tasks.
Every widening policy's changes (--policy all), whole library: before imported update tools
stopped writing their defaults for arguments they were not sent (4f84dc9; measured with the
`one-change` policy out of the gate), 13 rewarded of 2,287 changes, on 6 of 297 accepted tasks,
all a flag or a format such an update had reset (`requires_all_assignees_to_complete`,
`include_content`, `unset_status`); after, 0 of 2,305 on 300.

Usage: python bench/compose_careless.py [--seeds 300] [--library-scope curated|all]
       [--policy careless-constants|all|<policy>] [--show 10]
"""

from __future__ import annotations

import argparse
import time

from envpipeline.agents.environment import ComposedEnvironment
from envpipeline.compose.author import ComposeConfig
from envpipeline.compose.pipeline import compose_task
from envpipeline.models.task import TaskRecord
from envpipeline.redteam.base import ComposeAttack
from envpipeline.redteam.compose import reference_run, stored_states
from envpipeline.redteam.policies.one_change import replayed, score, single_changes


def holes_of(task: TaskRecord, policy: str) -> tuple[int, list[str]]:
    """(changes tried, those the criteria still reward) for one task: each change of `policy`
    ('all': of every widening policy) made alone."""
    stored = stored_states(task)
    reference = reference_run(task, stored)
    attack = ComposeAttack(task, ComposedEnvironment.from_initial_state(stored), reference)
    changes = [c for c in single_changes(attack, replayed(attack)) if policy in ("all", c.policy)]
    holes = [
        f"{reference.steps[c.step].tool} {c.argument} ({c.policy})"
        for c in changes
        if score(task, stored, reference, c)[1]
    ]
    return len(changes), holes


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seeds", type=int, default=300)
    parser.add_argument("--library-scope", choices=["curated", "all"], default="curated")
    parser.add_argument("--policy", default="careless-constants", help="whose changes: a policy or 'all'")
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
        changes, holes = holes_of(task, args.policy)
        tried += changes
        found += [(seed, hole, task.instruction) for hole in holes]
        if seed % 50 == 49:
            print(
                f"  {seed + 1} seeds: {accepted} accepted, {tried} changes, {len(found)} rewarded", flush=True
            )
    print(
        f"{args.library_scope}, {args.policy}: {accepted} accepted tasks of {args.seeds} seeds, {tried} changes "
        f"made one at a time, {len(found)} rewarded (holes) on {len({s for s, _, _ in found})} tasks, "
        f"{time.perf_counter() - started:.0f} s"
    )
    for seed, hole, instruction in found[: args.show]:
        print(f"--- seed {seed}: {hole}\n    {instruction[:400]}")


if __name__ == "__main__":
    main()
