"""The quality gates of a cross-interface task, each recorded as a `GateResult` with evidence.

Order (the paper's cascade): ``diversity`` (TF-IDF cosine to the accepted tasks below a threshold;
a near-duplicate is rejected before any rollout), ``initial_unsatisfaction`` (V(W0, W0, ∅) = 0),
then six rollouts (3 hinted + 3 unhinted) of a `Policy` (default: the scripted agents of skill
levels expert/skilled/novice) acting through web, MCP and CLI, then ``judge_consistency`` (the verifier agrees with the
judge majority — the state-diff judge, plus the LLM judge when configured — on at least
`consistency_threshold` of the rollouts), ``solvability`` (Σ V >= 1), ``difficulty`` (k = unhinted
successes: 0 hard, 1 medium, >= 2 easy; passes unless unsolvable) and ``counterfactual_probe``
(for each criterion, mutate a successful rollout's final state — delete the key rows, revert the
changed field, corrupt or remove the file — and both the verifier and the judge must answer 0).
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from envpipeline.errors import ConfigError
from envpipeline.llm import LLM
from envpipeline.models.task import GateResult
from envpipeline.models.world_task import GatedTask, Rollout, WorldCriterion, WorldTask
from envpipeline.policies.base import Policy, WorldTarget
from envpipeline.policies.registry import build_policy
from envpipeline.redteam.world import world_red_team_gate
from envpipeline.sandbox.base import Sandbox
from envpipeline.scratch import scratch_folder
from envpipeline.worlds.allowance import WRITE_CALLS
from envpipeline.worlds.criteria import (
    app_tables,
    check_all,
    mention_values,
    read_home,
    row_matches,
    table_rows,
)
from envpipeline.worlds.judge_panel import judge_probe, panel, votes
from envpipeline.worlds.judge_view import judge_view
from envpipeline.worlds.judges import default_judges
from envpipeline.worlds.metrics import cosine_to_last, group_rewards, tfidf, trajectory_well_formed
from envpipeline.worlds.tasks import prepare_initial, task_text
from envpipeline.worlds.verifier import checklist_credit, evaluate

#: (hinted, skill) of the six rollouts.
ROLLOUT_PLAN: tuple[tuple[bool, str], ...] = (
    (True, "expert"),
    (True, "skilled"),
    (True, "novice"),
    (False, "expert"),
    (False, "skilled"),
    (False, "novice"),
)


@dataclass(frozen=True)
class GateConfig:
    """Thresholds and parallelism of the gates."""

    diversity_threshold: float = 0.85
    consistency_threshold: float = 0.8
    #: rollouts of one task run at once
    workers: int = 3
    keep_dirs: bool = False
    red_team: bool = True
    #: tasks gated at once by `pipeline.gate_all` (results and their order do not depend on it)
    task_workers: int = 4
    #: worker processes that gate those tasks (`gate_processes`; None: one per core, at most
    #: `task_workers`; 1: threads in this process). Results and their order do not depend on it.
    task_processes: int | None = None
    #: scripted rollouts reuse pooled web/MCP servers and sandbox sessions (`rollout_services`)
    reuse_services: bool = True


def difficulty_label(unhinted_successes: int) -> str:
    """k = 0 -> hard, 1 -> medium, >= 2 -> easy."""
    return "hard" if unhinted_successes == 0 else "medium" if unhinted_successes == 1 else "easy"


def diversity_gate(task: WorldTask, accepted: list[str], threshold: float) -> GateResult:
    """Max TF-IDF cosine between the task text and the accepted tasks' texts must stay below `threshold`."""
    if not accepted:
        return GateResult(name="diversity", passed=True, evidence={"max_similarity": 0.0, "compared": 0})
    sims = cosine_to_last(tfidf([*accepted, task_text(task)]))
    best = float(sims.max())
    return GateResult(
        name="diversity",
        passed=best < threshold,
        evidence={
            "max_similarity": round(best, 4),
            "nearest": int(sims.argmax()),
            "threshold": threshold,
            "compared": len(accepted),
        },
    )


def rollout(
    task: WorldTask,
    w0: Path,
    work: Path,
    index: int,
    llm: LLM | None = None,
    sandbox: Sandbox | None = None,
    policy: Policy | None = None,
) -> Rollout:
    """One rollout of `policy` (default: the scripted agents) on a fresh copy of W0, scored by the
    task's verifier (through the policy) and by the judges."""
    hinted, skill = ROLLOUT_PLAN[index % len(ROLLOUT_PLAN)]
    final = work / f"rollout-{index}" / w0.name
    if final.parent.exists():
        shutil.rmtree(final.parent)
    final.parent.mkdir(parents=True)
    player = policy or build_policy()
    record = player.rollout(WorldTarget(task, w0, sandbox, work_dir=final, hinted=hinted), index)
    if not final.is_dir():
        raise ConfigError(
            f"policy {record.policy!r} ({record.kind}) left no final state in {final}: the world gates "
            "judge and probe the state an attempt leaves, so they need a policy that acts"
        )
    trajectory = list(record.detail.get("trajectory", []))
    criteria = record.criteria if record.criteria is not None else {}
    cast = votes(default_judges(llm), judge_view(task.instruction, trajectory, w0, final))
    return Rollout(
        index=index,
        hinted=hinted,
        skill=str(record.detail.get("skill", skill)),
        verdict=int(record.reward >= 1.0),
        criteria=criteria,
        checklist=record.detail.get("checklist", checklist_credit(task, criteria)),
        judge=bool(cast.get("diff")),
        llm_judge=cast.get("llm"),
        votes=cast,
        panel=panel(cast),
        format_ok=trajectory_well_formed(trajectory),
        mistakes=list(record.detail.get("mistakes", [])),
        tool_calls=record.steps,
        cli_backend=str(record.detail.get("cli_backend", "")),
        seconds=record.seconds,
        trajectory=trajectory,
    )


def mutate(criterion: WorldCriterion, initial: Path, final: Path) -> str:
    """Break what `criterion` checks in `final` (a copy); returns what was done."""
    from envpipeline.worlds.agent_session import corrupt_value  # the worlds extra's clients: late

    c = criterion.model_dump(mode="json")
    if criterion.kind == "state_preserved":
        return _collateral_damage(criterion, final)
    if criterion.kind == "calls_through":
        return "the write goes through another interface (trajectory rerouted)"
    if criterion.kind in ("file_contains", "file_added"):
        path, target = criterion.path or "", final / "home" / (criterion.path or "")
        if criterion.kind == "file_added" or read_home(initial, path) is None and not criterion.text:
            target.unlink(missing_ok=True)
            return f"deleted {path}"
        text = target.read_text(encoding="utf-8") if target.is_file() else ""
        needles = [criterion.text] if criterion.text else []
        if criterion.mention:
            needles += mention_values(initial, final, c["mention"])
        for needle in needles:
            # a plausible wrong value (a digit shifted, a letter dropped), not a marker a judge could
            # learn to look for
            text = text.replace(needle, corrupt_value(needle))
        target.write_text(text, encoding="utf-8")
        return f"corrupted {path} ({len(needles)} value(s))"
    before = table_rows(initial, criterion.app, criterion.table)
    after = table_rows(final, criterion.app, criterion.table)
    db = sqlite3.connect(final / "apps" / f"{criterion.app}.sqlite")
    try:
        if criterion.kind == "row_changed":
            ids = [rid for rid, row in before.items() if rid in after and row_matches(row, c["where"])]
            for rid in ids:
                db.execute(
                    f'UPDATE "{criterion.table}" SET "{criterion.field}" = ? WHERE id = ?',
                    (before[rid][criterion.field], rid),
                )
            done = f"reverted {criterion.field} of {len(ids)} row(s)"
        else:
            ids = [rid for rid, row in after.items() if rid not in before and row_matches(row, c["where"])]
            db.executemany(f'DELETE FROM "{criterion.table}" WHERE id = ?', [(rid,) for rid in ids])
            done = f"deleted {len(ids)} added row(s) of {criterion.app}/{criterion.table}"
        db.commit()
    finally:
        db.close()
    return done


def _collateral_damage(criterion: WorldCriterion, final: Path) -> str:
    """Delete one record of a table the task does not allow to change (else one untouched file)."""
    allowed = set(criterion.allow.get("tables", {})) | set(criterion.allow.get("volatile", {}))
    for path in sorted((final / "apps").glob("*.sqlite")):
        for table in app_tables(final, path.stem):
            if f"{path.stem}/{table}" in allowed or not table_rows(final, path.stem, table):
                continue
            db = sqlite3.connect(path)
            try:
                db.execute(f'DELETE FROM "{table}" WHERE id = (SELECT MIN(id) FROM "{table}")')
                db.commit()
            finally:
                db.close()
            return f"deleted one {path.stem}/{table} row"
    for target in sorted((final / "home").rglob("*")):
        if target.is_file() and target.relative_to(final / "home").as_posix() not in criterion.allow.get(
            "files", []
        ):
            target.unlink()
            return f"deleted home/{target.relative_to(final / 'home').as_posix()}"
    return "nothing to damage"


def rerouted(task: WorldTask, trajectory: list[dict]) -> list[dict]:
    """The trajectory with every multi-interface write renamed to another interface's call."""
    swap = {}
    for calls in WRITE_CALLS.values():
        names = [c for cs in calls.values() for c in cs]
        swap.update({name: names[(i + 1) % len(names)] for i, name in enumerate(names)})
    out = []
    for message in trajectory:
        calls = message.get("tool_calls")
        if calls:
            message = {
                **message,
                "tool_calls": [
                    {
                        **c,
                        "function": {
                            **c["function"],
                            "name": swap.get(c["function"]["name"], c["function"]["name"]),
                        },
                    }
                    for c in calls
                ],
            }
        out.append(message)
    return out


def counterfactual_gate(
    task: WorldTask, w0: Path, rollouts: list[Rollout], work: Path, llm: LLM | None = None
) -> GateResult:
    """Mutate a successful rollout's outcome per criterion; the verifier must say 0 and the judge
    panel must not pass it (the paper's stress test of the judges: a panel that believes the calls a
    trajectory shows over the state they left is sycophantic, and its agreement with the verifier on
    real rollouts says nothing about it)."""
    winners = [r for r in rollouts if r.verdict]
    if not winners:
        return GateResult(
            name="counterfactual_probe", passed=False, evidence={"reason": "no successful rollout"}
        )
    source = work / f"rollout-{winners[0].index}" / w0.name
    probes = []
    for criterion in task.criteria:
        probe = work / f"probe-{criterion.id}" / w0.name
        if probe.parent.exists():
            shutil.rmtree(probe.parent)
        shutil.copytree(source, probe)
        action = mutate(criterion, w0, probe)
        trajectory = winners[0].trajectory
        if criterion.kind == "calls_through":
            trajectory = rerouted(task, trajectory)
        verdict = evaluate(task, w0, probe, trajectory).verdict
        judged = panel(votes(default_judges(llm), judge_view(task.instruction, trajectory, w0, probe)))
        probes.append({"criterion": criterion.id, "mutation": action, "verifier": verdict, "panel": judged})
    fooled = [p["criterion"] for p in probes if p["verifier"] != 0 or p["panel"] is True]
    return GateResult(
        name="counterfactual_probe",
        passed=not fooled,
        reason=f"a broken outcome of {', '.join(fooled)} still passes the verifier or the judges"
        if fooled
        else "",
        evidence={"rollout": winners[0].index, "probes": probes},
    )


#: Criterion kinds that guard how a task is done rather than say what the request is.
GUARD_KINDS = frozenset({"state_preserved", "calls_through"})


def already_fulfilled(task: WorldTask, w0: Path, day_dir: Path) -> dict[str, bool] | None:
    """The request's criteria judged from the day before to W0 (None on day 0): all True = done already.

    A change criterion also counts as done when W0 already holds its target value, even for a row the
    day itself created (a booking made and moved on the same day was never "changed" since yesterday)."""
    previous = day_dir.parent / f"day-{task.day - 1:02d}"
    if task.day < 1 or not previous.is_dir():
        return None
    request = [c.model_dump(mode="json") for c in task.criteria if c.kind not in GUARD_KINDS]
    done = check_all(request, previous, w0)
    for criterion in request:
        if criterion["kind"] == "row_changed" and not done[criterion["id"]]:
            done[criterion["id"]] = _holds_target(criterion, w0)
    return done


def _holds_target(criterion: dict[str, object], day_dir: Path) -> bool:
    """A row_changed criterion's row already carries the value the change asks for."""
    where = criterion.get("where") or {}
    rows = table_rows(day_dir, str(criterion["app"]), str(criterion["table"])).values()
    field, to = str(criterion["field"]), criterion.get("to")
    return any(row_matches(row, where) and row.get(field) == to for row in rows)


def initial_unsatisfaction_gate(task: WorldTask, w0: Path, day_dir: Path) -> GateResult:
    """V(W0, W0) = 0, and W0 does not already fulfil the request (judged against the day before)."""
    initial = evaluate(task, w0, w0)
    before = already_fulfilled(task, w0, day_dir)
    done = bool(before) and all(before.values())
    return GateResult(
        name="initial_unsatisfaction",
        passed=initial.verdict == 0 and not done,
        reason="the request is already fulfilled in W0" if done else "",
        evidence={
            "verdict": initial.verdict,
            "criteria": initial.criteria,
            "already_fulfilled": done,
            "since_previous_day": before,
        },
    )


def gate_task(
    task: WorldTask,
    day_dir: Path | str,
    work: Path | str,
    accepted: list[str] | None = None,
    llm: LLM | None = None,
    config: GateConfig | None = None,
    sandbox: Sandbox | None = None,
    policy: Policy | None = None,
) -> GatedTask:
    """Run every gate of one task; `accepted` holds the texts (`task_text`) of accepted tasks.

    The solvability and difficulty gates count the successes of `policy`'s six rollouts
    (`ROLLOUT_PLAN`; default: the scripted agents, expert/skilled/novice, hinted and not)."""
    config = config or GateConfig()
    diversity = diversity_gate(task, accepted or [], config.diversity_threshold)
    if not diversity.passed:
        return gated_record(task, [diversity], [])
    gates, rollouts = gates_after_diversity(task, day_dir, work, llm, config, sandbox, policy)
    return gated_record(task, [diversity, *gates], rollouts)


def gates_after_diversity(
    task: WorldTask,
    day_dir: Path | str,
    work: Path | str,
    llm: LLM | None = None,
    config: GateConfig | None = None,
    sandbox: Sandbox | None = None,
    policy: Policy | None = None,
) -> tuple[list[GateResult], list[Rollout]]:
    """Every gate after ``diversity`` (which needs no other task), and the rollouts they judged."""
    config = config or GateConfig()
    with _task_folder(Path(work), task.task_id, config.keep_dirs) as folder:
        return _gates_in(task, Path(day_dir), folder, llm, config, sandbox, policy)


@contextmanager
def _task_folder(work: Path, task_id: str, keep: bool) -> Iterator[Path]:
    """Where one task's W0, rollouts and probes live: ``work/<task id>`` when they are kept, else a
    scratch folder (in memory where the machine has one: `envpipeline.scratch`), removed after."""
    if keep:
        yield work / task_id
        return
    with scratch_folder("wildawm-gate-") as tmp:
        yield Path(tmp) / task_id


def _gates_in(
    task: WorldTask,
    day_dir: Path,
    work: Path,
    llm: LLM | None,
    config: GateConfig,
    sandbox: Sandbox | None,
    policy: Policy | None,
) -> tuple[list[GateResult], list[Rollout]]:
    """The gates of `gates_after_diversity`, with W0 and the rollouts' copies under `work`."""
    w0 = prepare_initial(task, day_dir, work / "w0" / day_dir.name)
    gates = [initial_unsatisfaction_gate(task, w0, day_dir)]
    with ThreadPoolExecutor(max_workers=max(1, config.workers)) as pool:
        rollouts = list(
            pool.map(lambda i: rollout(task, w0, work, i, llm, sandbox, policy), range(len(ROLLOUT_PLAN)))
        )
    rewards, advantages = group_rewards([(r.verdict, r.checklist, r.format_ok) for r in rollouts])
    rollouts = [
        r.model_copy(update={"reward": rw, "advantage": ad})
        for r, rw, ad in zip(rollouts, rewards, advantages)
    ]
    gates += _outcome_gates(task, w0, rollouts, work, config, llm)
    if config.red_team and all(g.passed for g in gates):
        gates.append(world_red_team_gate(task, w0))
    return gates, rollouts


def gated_record(task: WorldTask, gates: list[GateResult], rollouts: list[Rollout]) -> GatedTask:
    """The `GatedTask` of `gates` (accepted when every gate passed) and `rollouts`."""
    failed = [g for g in gates if not g.passed]
    difficulty = next((g.evidence.get("label") for g in gates if g.name == "difficulty"), None)
    return GatedTask(
        task=task,
        status="rejected" if failed else "accepted",
        reasons=[f"{g.name}: {_why(g)}" for g in failed],
        difficulty=difficulty,
        gates=gates,
        rollouts=rollouts,
    )


def _outcome_gates(
    task: WorldTask, w0: Path, rollouts: list[Rollout], work: Path, config: GateConfig, llm: LLM | None
) -> list[GateResult]:
    decided = [r.panel for r in rollouts]
    ties = [r.index for r in rollouts if r.panel is None]
    agree = [int(v is not None and bool(r.verdict) == v) for r, v in zip(rollouts, decided)]
    share = sum(agree) / len(agree)
    solved = sum(r.verdict for r in rollouts)
    k = sum(r.verdict for r in rollouts if not r.hinted)
    label = difficulty_label(k)
    return [
        GateResult(
            name="judge_consistency",
            passed=share >= config.consistency_threshold and not ties,
            reason=f"no decision (the judges tied) on rollout(s) {ties}" if ties else "",
            evidence={
                "agreement": round(share, 4),
                "threshold": config.consistency_threshold,
                "verifier": [r.verdict for r in rollouts],
                "votes": [r.votes for r in rollouts],
                "panel": decided,
                "ties": ties,
            },
        ),
        GateResult(
            name="solvability",
            passed=solved >= 1,
            evidence={
                "successes": solved,
                "hinted": sum(r.verdict for r in rollouts if r.hinted),
                "unhinted": k,
            },
        ),
        GateResult(name="difficulty", passed=solved >= 1, evidence={"unhinted_successes": k, "label": label}),
        counterfactual_gate(task, w0, rollouts, work, llm),
        judge_probe_gate(task, w0, rollouts, work, llm),
    ]


def judge_probe_gate(
    task: WorldTask, w0: Path, rollouts: list[Rollout], work: Path, llm: LLM | None = None
) -> GateResult:
    """No judge calls W0 done or moves when only the final message changes (see `judge_probe`)."""
    winner = next((r for r in rollouts if r.verdict), None)
    success = (winner.trajectory, work / f"rollout-{winner.index}" / w0.name) if winner else None
    report = judge_probe(default_judges(llm), task.instruction, w0, success)
    moved = sorted(name for name, entry in report.items() if entry["failed"])
    return GateResult(
        name="judge_probe",
        passed=not moved,
        reason=f"judge(s) {', '.join(moved)} moved with the final message or called W0 done" if moved else "",
        evidence={"judges": report, "failed": moved},
    )


def _why(gate: GateResult) -> str:
    keys = ("max_similarity", "verdict", "agreement", "successes", "reason")
    found = {k: gate.evidence[k] for k in keys if k in gate.evidence}
    said = ", ".join(f"{k}={v}" for k, v in found.items())
    return "; ".join(part for part in (gate.reason, said) if part) or "failed"
