"""WildAWM world judges against the verifier: agreement, each judge's errors, and CPU per view.

Builds persona worlds (not timed), gates their candidate tasks with the default gates (scripted
rollouts, red team off: it judges no rollout) keeping every rollout's final state, then rebuilds
each rollout's judge view (its instruction, its trajectory as recorded, the diff of W0 against its
final state) and replays the default panel on every view. It prints:

  agreement        rollouts where the panel's decision equals the verifier's (a tie counts as a miss)
  pass on fail     the panel (or one judge) passes an attempt the verifier fails: a wrong attempt
                   the judges would reward
  fail on pass     the panel (or one judge) fails an attempt the verifier passes
  CPU per view     process CPU time of the whole panel per view, the best of --repeats passes
  replay           whether the replayed votes equal the votes recorded while gating (they must,
                   when the judges did not change since: the bench measures the judges the gates ran)

With --show N it prints up to N rollouts the panel passes and the verifier fails, with the
scripted agent's mistakes: the cases to read when a judge changes. --dump FILE keeps the judged
rollouts (views, verdicts, votes as gated); --replay FILE judges those again in seconds, without
building or gating, which is the loop for changing a judge (then check on seeds it was not
changed on).

Measured 2026-12-07 (2 cores), --personas 8 --days 5. Seed 0 is the sample the judges were tuned
on in the session before (`worlds build`'s default seed); at 1cf998d (the judges of that session):

  seed  rollouts  agreement  panel pass on fail  fail on pass  CPU per view
     0       630      98.6%                   9             0       0.93 ms
     3       666      96.4%                  22             2       1.05 ms
     7       648      96.1%                  18             7
    11       642      97.7%                  13             2

After the checks of test_world_judge_heldout.py (drawn from the cases of seeds 0 and 3, then
checked on 7 and 11) and the one-unit order criterion (the seed-7 task whose six correct-looking
rollouts ordered four units): seeds 19 and 23 were never looked at while changing the judges.

  seed  rollouts  agreement  panel pass on fail  fail on pass  CPU per view
     0       630      99.4%                   4             0       0.93 ms
     3       660      99.1%                   5             1       0.94 ms
     7       648      98.6%                   9             0
    11       636      99.4%                   3             1
    19       612      98.0%                   5             7
    23       642      99.2%                   5             0

Measured 2026-12-07 later (2 cores), after the templates stopped writing what their requests do
not ask for (world_careless.py) and the judges learned to hold calls against the state
(`judge_effects`), to check a booked route, an archived mail and a formatted line's figures (drawn
from seeds 3 and 23). The last column is new: the counterfactual probes of the gated tasks (a
success's state with one criterion broken, its trajectory unchanged) that the panel passes; with
the judges before `judge_effects` (same templates) seed 0 gave 317 of 460.

  seed  rollouts  agreement  panel pass on fail  fail on pass  probes passed  CPU per view
     0       630      99.5%                   3             0        0 / 460       1.10 ms
     3       660      99.5%                   3             0        0 / 481       1.11 ms
     7       648      99.8%                   1             0        0 / 475       1.07 ms
    11       636      99.4%                   4             0        0 / 470       1.10 ms
    19       612      98.9%                   4             3        0 / 451       1.06 ms
    23       642      99.5%                   3             0        0 / 465       1.17 ms

Then 'the amount is in their latest DM' asks for a DM read (seed 23's last case): seed 23 3 -> 2
wrongly passed, the other seeds as above; no correct attempt newly failed.

Usage: python bench/world_judges.py [--personas 8] [--days 5] [--seed 0] [--per-day 3]
                                    [--repeats 3] [--show 0] [--root /dev/shm]
                                    [--dump FILE | --replay FILE]
"""

from __future__ import annotations

import argparse
import pickle
import re
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import envpipeline.blas_threads  # noqa: F401  (as the command line: before numpy loads)
from envpipeline.models.world_task import GatedTask
from envpipeline.worlds.build import build_world
from envpipeline.worlds.gates import GateConfig
from envpipeline.worlds.judge_panel import panel, votes
from envpipeline.worlds.judge_view import JudgeView, judge_view
from envpipeline.worlds.judges import default_judges
from envpipeline.worlds.personas import propose_personas
from envpipeline.worlds.pipeline import gate_all, world_candidates


def rollout_views(gated: list[GatedTask], work: Path) -> list[tuple[GatedTask, int, JudgeView]]:
    """Each judged rollout's view, rebuilt from the folders `keep_dirs` left (W0 and finals)."""
    views = []
    for record in gated:
        if not record.rollouts:
            continue
        folder = work / record.task.task_id
        w0 = next((folder / "w0").iterdir())
        for index, run in enumerate(record.rollouts):
            final = folder / f"rollout-{run.index}" / w0.name
            views.append((record, index, judge_view(record.task.instruction, run.trajectory, w0, final)))
    return views


def confusion(pairs: list[tuple[bool, bool | None]]) -> dict[str, int]:
    """Counts of (verifier, vote): agreement, pass on fail, fail on pass, no decision."""
    return {
        "agree": sum(v is not None and v == truth for truth, v in pairs),
        "pass_on_fail": sum(v is True and not truth for truth, v in pairs),
        "fail_on_pass": sum(v is False and truth for truth, v in pairs),
        "undecided": sum(v is None for _, v in pairs),
    }


@dataclass
class Judged:
    """One judged rollout: what the bench replays and reports (and `--dump` keeps)."""

    task_id: str
    template: str
    rollout: int
    verdict: bool
    votes: dict[str, bool | None]
    mistakes: list[str]
    view: JudgeView


def gated_kept(args: argparse.Namespace, root: Path) -> tuple[list[GatedTask], Path]:
    """Build `args.personas` worlds of `args.days` days under `root` and gate their candidates (red
    team off) keeping every task's folders: W0 and each rollout's final state, under the returned
    work folder (``<work>/<task_id>/w0/<day>``, ``<work>/<task_id>/rollout-<i>/<day>``)."""
    personas, _ = propose_personas(args.personas, args.seed)
    candidates = []
    for persona in personas:
        build = build_world(persona, args.days, root / "worlds", live_health=False, replay=False)
        if build.passed:
            candidates += world_candidates(Path(build.root), list(range(1, args.days + 1)), args.per_day)
    print(f"{len(candidates)} candidate tasks from {len(personas)} world(s)", flush=True)
    work = root / "gates"
    return gate_all(candidates, work, config=GateConfig(keep_dirs=True, red_team=False)), work


def _mutation_kind(mutation: str) -> str:
    """A counterfactual mutation's kind: 'deleted added row(s) of mail/messages', 'corrupted file'..."""
    if mutation.startswith("corrupted "):
        return "corrupted file"
    if mutation.startswith("deleted ") and " added row" in mutation:
        return "deleted added " + mutation.rsplit(" ", 1)[-1]
    if mutation.startswith("deleted home/") or (
        mutation.startswith("deleted ") and "/" in mutation.split()[1]
    ):
        return "deleted file"
    return re.sub(r"\d+", "N", mutation.split(" (")[0])


def gather(args: argparse.Namespace) -> list[Judged]:
    """Build the worlds, gate their candidates keeping every rollout, and rebuild each view."""
    with tempfile.TemporaryDirectory(prefix="world-judges-", dir=args.root) as tmp:
        started = time.perf_counter()
        gated, work = gated_kept(args, Path(tmp))
        judged = [
            Judged(
                r.task.task_id, r.task.template, run.index, bool(run.verdict), run.votes, run.mistakes, view
            )
            for r, index, view in rollout_views(gated, work)
            for run in [r.rollouts[index]]
        ]
        print(
            f"gated {len(gated)} tasks ({sum(g.status == 'accepted' for g in gated)} accepted), "
            f"{len(judged)} rollouts, in {time.perf_counter() - started:.0f} s",
            flush=True,
        )
        probes = [
            probe
            for record in gated
            for gate in record.gates
            if gate.name == "counterfactual_probe"
            for probe in gate.evidence.get("probes", [])
        ]
        print(
            f"counterfactual probes (a success's state with one criterion broken): {len(probes)}, "
            f"the panel passes {sum(p['panel'] is True for p in probes)} "
            f"(undecided {sum(p['panel'] is None for p in probes)})",
            flush=True,
        )
        kinds = Counter(_mutation_kind(p["mutation"]) for p in probes)
        passed = Counter(_mutation_kind(p["mutation"]) for p in probes if p["panel"] is True)
        print("  by mutation: " + ", ".join(f"{k} {passed[k]}/{n}" for k, n in kinds.most_common()))
    return judged


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--personas", type=int, default=8)
    parser.add_argument("--days", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0, help="persona and world seed (0: worlds build's)")
    parser.add_argument("--per-day", type=int, default=3, help="candidate tasks per world day")
    parser.add_argument("--repeats", type=int, default=3, help="timed passes of the panel over every view")
    parser.add_argument("--show", type=int, default=0, help="print up to N attempts the panel wrongly passes")
    parser.add_argument("--root", default=None, help="folder for worlds and gate work (default: temp)")
    parser.add_argument("--dump", type=Path, help="keep the judged rollouts in this file (pickle)")
    parser.add_argument(
        "--replay", type=Path, help="judge the rollouts a --dump kept instead of building and gating"
    )
    args = parser.parse_args()
    if args.replay:
        judged = pickle.loads(args.replay.read_bytes())
        print(f"{len(judged)} rollouts from {args.replay}")
    else:
        judged = gather(args)
    if args.dump:
        args.dump.write_bytes(pickle.dumps(judged))
    judges = default_judges()
    best, cast = float("inf"), []
    for _ in range(max(1, args.repeats)):
        fresh = [
            JudgeView(j.view.instruction, j.view.trajectory, j.view.state_diff, j.view.files) for j in judged
        ]
        cpu0 = time.process_time()
        cast = [votes(judges, view) for view in fresh]
        best = min(best, time.process_time() - cpu0)
    report(judged, cast, best, args.show)


def report(judged: list[Judged], cast: list[dict[str, bool | None]], cpu: float, show: int) -> None:
    n = len(judged)
    truth = [j.verdict for j in judged]
    decided = [panel(c) for c in cast]
    whole = confusion(list(zip(truth, decided)))
    print(f"verifier: {sum(truth)} of {n} rollouts pass")
    print(
        f"panel: agreement {whole['agree']}/{n} ({whole['agree'] / max(n, 1):.1%}), "
        f"pass on fail {whole['pass_on_fail']}, fail on pass {whole['fail_on_pass']}, "
        f"undecided {whole['undecided']}"
    )
    for name in cast[0] if cast else []:
        one = confusion([(t, c[name]) for t, c in zip(truth, cast)])
        print(
            f"  {name:10s} agreement {one['agree'] / max(n, 1):6.1%}, pass on fail {one['pass_on_fail']:3d}, "
            f"fail on pass {one['fail_on_pass']:3d}"
        )
    print(f"CPU per view (whole panel, best pass): {cpu / max(n, 1) * 1000:.2f} ms")
    print(f"replay equals the votes recorded while gating: {cast == [j.votes for j in judged]}")
    wrong = [(j, c) for j, c, d in zip(judged, cast, decided) if d is True and not j.verdict]
    print(f"templates of the attempts wrongly passed: {dict(Counter(j.template for j, _ in wrong))}")
    for j, vote in wrong[:show]:
        print(f"--- {j.task_id} rollout {j.rollout} ({j.template}) votes {vote}")
        print(f"    instruction: {j.view.instruction[:300]}")
        print(f"    mistakes: {j.mistakes}")


if __name__ == "__main__":
    main()
