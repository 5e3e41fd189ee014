"""World verification: initial unsatisfaction can fail, and the judge panel catches bad judges."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from envpipeline.worlds.agents import ScriptedAgent
from envpipeline.worlds.build import build_world
from envpipeline.worlds.gates import initial_unsatisfaction_gate
from envpipeline.worlds.judge_panel import judge_kappas, judge_probe, panel, uninformative_judges, votes
from envpipeline.worlds.judge_view import JudgeView, judge_view
from envpipeline.worlds.judges import default_judges
from envpipeline.worlds.personas import generate_persona
from envpipeline.worlds.state import WorldReader
from envpipeline.worlds.tasks import generate_task, load_persona, prepare_initial, task_from_template
from envpipeline.worlds.templates import get_template
from envpipeline.worlds.verifier import evaluate


class Stub:
    def __init__(self, name: str, answer: bool) -> None:
        self.name, self.answer = name, answer

    def __call__(self, view: JudgeView) -> bool | None:
        return self.answer


class Gullible:
    """Believes the agent's last word."""

    name = "gullible"

    def __call__(self, view: JudgeView) -> bool | None:
        last = view.trajectory[-1] if view.trajectory else {}
        return last.get("role") == "assistant" and "Done" in str(last.get("content"))


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    root = tmp_path_factory.mktemp("judge-worlds")
    build = build_world(generate_persona(0, 1), 2, root, live_health=False, replay=False)
    day = Path(build.root) / "day-02"
    task = generate_task(day, 0)
    assert task is not None
    w0 = prepare_initial(task, day, root / "w0" / day.name)
    final = root / "final" / day.name
    shutil.copytree(w0, final)
    result = ScriptedAgent(seed="judges", error_rate=0.0).run(task, final)
    return task, day, w0, final, result.trajectory, root


def test_w0_fails_and_a_w0_that_already_fulfils_the_request_is_rejected(solved) -> None:
    task, day, w0, final, trajectory, root = solved
    assert evaluate(task, w0, final, trajectory).verdict == 1
    assert initial_unsatisfaction_gate(task, w0, day).passed
    variant_world = root / "fulfilled" / day.parent.name
    shutil.copytree(day.parent / "day-01", variant_world / "day-01")
    shutil.copytree(final, variant_world / day.name)  # the request is already done in this W0
    variant_w0 = prepare_initial(task, variant_world / day.name, root / "fulfilled-w0" / day.name)
    gate = initial_unsatisfaction_gate(task, variant_w0, variant_world / day.name)
    assert not gate.passed and gate.evidence["already_fulfilled"]
    assert "already fulfilled" in gate.reason


def test_judges_see_no_expectations_and_agree_on_a_clean_solution(solved) -> None:
    task, _, w0, final, trajectory, _ = solved
    view = judge_view(task.instruction, trajectory, w0, final)
    assert set(vars(view)) == {"instruction", "trajectory", "state_diff", "files"}
    cast = votes(default_judges(), view)
    assert set(cast) == {"diff", "rules", "trajectory"} and panel(cast) is True
    assert panel(votes(default_judges(), judge_view(task.instruction, trajectory, w0, w0))) is False


def test_the_probe_catches_an_always_true_and_a_gullible_judge(solved) -> None:
    task, _, w0, final, trajectory, _ = solved
    report = judge_probe(
        [*default_judges(), Stub("yes", True), Gullible()], task.instruction, w0, (trajectory, final)
    )
    assert {name for name, entry in report.items() if entry["failed"]} == {"yes", "gullible"}


def test_kappa_flags_an_always_false_and_an_always_true_judge() -> None:
    verifier = [True, False, True, True, False, False, True, False]
    kappas = judge_kappas(verifier, {"good": list(verifier), "no": [False] * 8, "yes": [True] * 8})
    assert kappas["verifier~good"] == 1.0 and kappas["verifier~no"] == 0.0
    assert uninformative_judges(kappas) == ["no", "yes"]
    assert set(kappas) >= {"good~no", "good~yes", "no~yes"}


def test_a_tie_is_no_decision_whichever_judge_is_on_which_side() -> None:
    assert panel({"diff": True, "llm": False}) is None
    assert panel({"diff": False, "llm": True}) is None
    assert panel({"diff": True, "rules": False, "trajectory": True, "llm": False}) is None
    assert panel({"diff": False, "rules": True, "trajectory": True}) is True
    assert panel({"diff": True, "rules": None, "trajectory": False, "llm": False}) is False
    assert panel({"diff": None}) is None


# -- values taken from the wrong message ----------------------------------------------------------------
def _standup_day(root: Path, source: Path, updates: list[tuple[str, str]]) -> Path:
    """A copy of `source`'s world whose 'team' channel ends with `updates` ((author, text) in order)."""
    world = root / source.parent.name
    shutil.copytree(source.parent, world)
    day = world / source.name
    with sqlite3.connect(day / "apps" / "chat.sqlite") as db:
        db.execute("INSERT OR IGNORE INTO channels (name, topic) VALUES ('team', 'team')")
        (team,) = db.execute("SELECT id FROM channels WHERE name = 'team'").fetchone()
        db.executemany(
            "INSERT INTO messages (channel_id, author, body, posted_at) VALUES (?, ?, ?, ?)",
            [(team, a, f"Stand-up: {u}", f"2026-01-02T09:{10 + i}:00") for i, (a, u) in enumerate(updates)],
        )
    return day


def _standup_task(day: Path):
    persona = load_persona(day)
    task = task_from_template(get_template("standup_digest"), WorldReader(day), persona, 0)
    assert task is not None
    return task


def test_a_standup_distractor_is_never_the_true_update(solved, tmp_path) -> None:
    _, day, *_ = solved
    persona = load_persona(day)
    author = persona.contacts[0].handle
    world = _standup_day(tmp_path, day, [(author, "blocked on a review.")])  # the old fixed distractor
    task = _standup_task(world)
    (read,) = [s for s in task.solution if s.action == "mcp.read_chat"]
    options = read.args["distractors"]["update"]
    assert task.instruction.count(author) >= 1 and options
    assert "blocked on a review." not in options and all(o.strip() for o in options)
    state = next(c for c in task.criteria if c.kind == "state_preserved")
    assert "blocked on a review." not in str(state.model_dump())


def test_an_update_copied_from_the_wrong_message_is_failed_by_the_judges(
    solved, tmp_path, monkeypatch
) -> None:
    _, day, *_ = solved
    persona = load_persona(day)
    author = persona.contacts[0].handle
    world = _standup_day(
        tmp_path,
        day,
        [
            (author, "testing the new setup."),  # the author's older stand-up
            (persona.username, "on the budget numbers."),  # someone else's
            (author, "finishing the draft today."),  # the one the instruction points at
        ],
    )
    task = _standup_task(world)
    w0 = prepare_initial(task, world, tmp_path / "w0" / world.name)

    def attempt(name: str, mistakes: list[str | None]):
        final = tmp_path / name / world.name
        shutil.copytree(w0, final)
        agent = ScriptedAgent(seed="distractor", error_rate=0.0)
        script = iter(mistakes)
        monkeypatch.setattr(agent, "_mistake", lambda: next(script, None))
        result = agent.run(task, final)
        return (
            evaluate(task, w0, final, result.trajectory),
            votes(default_judges(), judge_view(task.instruction, result.trajectory, w0, final)),
            result,
        )

    clean, cast, _ = attempt("clean", [])
    assert clean.verdict == 1 and panel(cast) is True, cast
    for wrong in ("testing the new setup.", "on the budget numbers."):
        read = next(s for s in task.solution if s.action == "mcp.read_chat")
        monkeypatch.setitem(read.args, "distractors", {"update": [wrong]})
        ev, cast, result = attempt(f"wrong-{wrong[:4]}", ["wrong_value"])
        assert result.variables["update"] == wrong
        assert ev.verdict == 0
        assert cast["rules"] is False and cast["trajectory"] is False and panel(cast) is False, cast
