"""The careless-agent probe over many accepted world tasks: which slips does each verifier reward?

Builds persona worlds (not timed), gates their candidate tasks with the default gates (red team
off; W0 folders kept), then runs `worlds.careless.slipped_runs` on every accepted task: the
mistake-free reference once per remembered value miscopied, per (step, value) mistyped and per step
skipped. A slip the verifier rewards while the world ends elsewhere than after the clean reference
is a hole (the criteria do not pin that value or step). The template contract test checks one task
per template; this checks many, so it finds holes that depend on the instance (a file whose first
line is checked but whose last line is not). It prints slips tried, slips that changed the world,
holes by template and slip, the probe's seconds per task, and with --show N the first N holes.

Measured 2026-12-07 (2 cores), --personas 8 --days 5, this bench on the templates before and
after the fixes it led to (the commit after the one that added it):

  seed  code    tasks  slips tried  changed the world  rewarded (holes)  probe per task
     0  before    105        1,190              1,029                47  0.49 s (0.24 s CPU)
     0  after     105        1,153                992                 0  0.41 s (0.21 s CPU)
     3  after     109        1,185              1,033                 0  0.46 s (0.23 s CPU)
    19  after     101        1,096                949                 0  0.48 s (0.25 s CPU)

The 47 before: chat_goahead_order 18, dm_friend_request 8 and restock_from_note 3 (the product's
name mistyped in a note or message the request asks to carry the order number only: the solution
wrote more than was asked and nothing checked it), invite_to_agenda 8 (the place, in a
confirmation asked to give the date and time), flight_rebook 8 (a booking from the wrong airport:
the request names the origin, the criterion did not check it), reply_with_file 2 (the file sent
with its last line changed: only its first line was checked). Seed 19 was never looked at while
fixing. With the confused slip added afterwards (the read's distractor remembered: the other line
of the list, the other date): seed 3 1,373 slips (188 confused), 1,179 changed the world, 0 holes;
seed 23 (never looked at) 1,351 (196 confused), 1,132, 0 holes; 0.43-0.56 s per task.

Usage: python bench/world_careless.py [--personas 8] [--days 5] [--seed 3] [--per-day 3] [--show 5]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import Counter
from pathlib import Path

from world_judges import gated_kept  # bench/ is the script's folder

import envpipeline.blas_threads  # noqa: F401  (as the command line: before numpy loads)
from envpipeline.worlds.careless import SlippedRun, slipped_runs
from envpipeline.worlds.rollout_services import ServicePool, sharing


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--personas", type=int, default=8)
    parser.add_argument("--days", type=int, default=5)
    parser.add_argument("--seed", type=int, default=3, help="persona and world seed")
    parser.add_argument("--per-day", type=int, default=3, help="candidate tasks per world day")
    parser.add_argument("--show", type=int, default=5, help="print up to N holes with the task's request")
    parser.add_argument("--root", default=None, help="folder for worlds and gate work (default: temp)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="world-careless-", dir=args.root) as tmp:
        gated, work = gated_kept(args, Path(tmp))
        accepted = [g.task for g in gated if g.status == "accepted"]
        print(f"{len(gated)} tasks gated, {len(accepted)} accepted", flush=True)
        started, cpu = time.perf_counter(), time.process_time()
        probed: list[tuple[str, str, SlippedRun]] = []
        with ServicePool() as pool, sharing(pool):
            for number, task in enumerate(accepted, 1):
                w0 = next((work / task.task_id / "w0").iterdir())
                probed += [(task.template, task.instruction, run) for run in slipped_runs(task, w0)]
                if number % 20 == 0:
                    print(f"  probed {number}/{len(accepted)} tasks", flush=True)
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    report(probed, len(accepted), wall, cpu, args.show)


def report(probed: list[tuple[str, str, SlippedRun]], tasks: int, wall: float, cpu: float, show: int) -> None:
    mattered = [p for p in probed if not p[2].same_state]
    holes = [p for p in probed if p[2].hole]
    print(f"slips tried: {len(probed)} on {tasks} tasks; changed the world: {len(mattered)}")
    print(f"rewarded though the world changed (holes): {len(holes)}")
    for kind in ("miscopied", "confused", "mistyped", "skipped"):
        some = [run for _, _, run in probed if run.slip.startswith(kind)]
        changed = sum(not run.same_state for run in some)
        print(
            f"  {kind:10s} tried {len(some):5d}, changed the world {changed:5d}, holes {sum(r.hole for r in some)}"
        )
    kinds = Counter((template, run.slip.split(" in step")[0].split(" step")[0]) for template, _, run in holes)
    for (template, slip), count in sorted(kinds.items()):
        print(f"  {template:28s} {slip:28s} {count}")
    print(
        f"probe: {wall / max(tasks, 1):.2f} s per task wall, {cpu / max(tasks, 1):.2f} s CPU (this process)"
    )
    for template, instruction, run in holes[:show]:
        print(f"--- {template}: {run.slip}; mistakes {list(run.mistakes)}")
        print(f"    {instruction[:300]}")


if __name__ == "__main__":
    main()
