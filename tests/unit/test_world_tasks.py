"""WildAWM cross-interface tasks: generation, verifier, scripted agents, gates, metrics, pipeline."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from envpipeline.errors import ConfigError
from envpipeline.models.task import Condition
from envpipeline.models.world_task import (
    ChecklistItem,
    Expectation,
    Mention,
    Rollout,
    WorldCriterion,
    WorldTask,
)
from envpipeline.worlds.agents import ScriptedAgent, Slip
from envpipeline.worlds.careless import careless_audit, remembered_values, slipped_runs, slips_of
from envpipeline.worlds.gates import GUARD_KINDS, GateConfig, difficulty_label, gate_task, mutate, rerouted
from envpipeline.worlds.judge_panel import panel, votes
from envpipeline.worlds.judge_view import JudgeView, judge_view
from envpipeline.worlds.judges import LLMJudge, RuleReviewer, default_judges
from envpipeline.worlds.metrics import (
    cohen_kappa,
    group_rewards,
    majority,
    nn_cosine,
    reward,
    tfidf,
    trajectory_well_formed,
    vendi_score,
)
from envpipeline.worlds.pipeline import build_and_gate
from envpipeline.worlds.state import WorldReader
from envpipeline.worlds.tasks import (
    criterion_scripts,
    generate_task,
    generate_tasks,
    load_persona,
    prepare_initial,
    task_from_template,
    task_text,
)
from envpipeline.worlds.templates import Template, all_templates, get_template, register_template
from envpipeline.worlds.verifier import diff_judge, evaluate
from tests.world_fixture import TEMPLATE_DAYS, find_task, make_day

DAYS = TEMPLATE_DAYS


@pytest.fixture(scope="module")
def world(template_worlds):
    # persona (0, 2): chat among its core tools, most templates apply within DAYS days
    assert "chat" in load_persona(_day(template_worlds[0], 1)).core_tools
    return template_worlds[0]


def _day(world: Path, day: int) -> Path:
    return world / f"day-{day:02d}"


def _solve(task: WorldTask, world: Path, tmp: Path, **agent) -> tuple[Path, Path, Any]:
    w0 = prepare_initial(task, _day(world, task.day), tmp / "w0" / f"day-{task.day:02d}")
    final = tmp / "final" / w0.name
    shutil.copytree(w0, final)
    result = ScriptedAgent(seed="test", **agent).run(task, final)
    return w0, final, result


# -- generation ------------------------------------------------------------------------------------
def test_generation_is_deterministic_and_flows_vary(world):
    assert len(all_templates()) >= 6
    first = [t.model_dump() for d in range(1, DAYS + 1) for t in generate_tasks(_day(world, d), 3)]
    again = [t.model_dump() for d in range(1, DAYS + 1) for t in generate_tasks(_day(world, d), 3)]
    assert first == again and len(first) >= 10
    flows = {tuple(t["interface_flow"]) for t in first}
    assert len(flows) >= 4
    assert {i for flow in flows for i in flow} == {"mcp", "cli", "web"}
    for t in first:
        assert len(set(t["interface_flow"])) >= 2
        assert len(t["hints"]) == len(t["subtasks"]) == len(t["interface_flow"])
        ids = {c["id"] for c in t["criteria"]}
        assert len(ids) >= 2 and all(set(k["criteria"]) <= ids for k in t["checklist"])
        assert ">".join(t["interface_flow"]) in t["document"] and t["expectations"]
    assert generate_task(_day(world, 3), 0).task_id == generate_task(_day(world, 3), 0).task_id


def test_every_applicable_template_is_solvable_by_a_perfect_agent(world, tmp_path):
    seen = set()
    for day in range(1, DAYS + 1):
        for task in generate_tasks(_day(world, day), len(all_templates())):
            if task.template in seen:
                continue
            seen.add(task.template)
            w0, final, _ = _solve(task, world, tmp_path / task.task_id, skill="expert", error_rate=0.0)
            assert evaluate(task, w0, w0).verdict == 0, task.template
            ev = evaluate(task, w0, final, _.trajectory)
            assert ev.verdict == 1 and ev.checklist == 1.0, (task.template, ev.failed)
            assert diff_judge(task, w0, final)[0], task.template
    assert len(seen) >= 6


@pytest.mark.parametrize("name", sorted(all_templates()))
def test_every_registered_template_builds_a_task_that_its_reference_solution_solves(
    name, template_worlds, tmp_path
):
    """The template contract: W0 satisfies none of the criteria, the reference solution all of them."""
    task, day_dir = find_task(name, template_worlds)
    world = day_dir.parent
    assert task.template == name and len(set(task.interface_flow)) >= 2
    assert len(task.criteria) >= 2 and task.solution and task.expectations
    w0, final, result = _solve(task, world, tmp_path, skill="expert", error_rate=0.0)
    initial = evaluate(task, w0, w0)
    request = [c.id for c in task.criteria if c.kind not in GUARD_KINDS]
    assert not any(initial.criteria[c] for c in request), (name, initial.criteria)
    assert any(c.kind == "state_preserved" for c in task.criteria), name
    assert evaluate(task, w0, w0, []).checklist == 0.0, name  # doing nothing earns no credit
    solved = evaluate(task, w0, final, result.trajectory)
    assert all(solved.criteria.values()), (name, solved.failed)
    assert solved.verdict == 1 and solved.checklist == 1.0, name
    assert diff_judge(task, w0, final)[0], name


@pytest.mark.parametrize("name", sorted(all_templates()))
def test_every_template_fails_an_agent_that_slips_once(name, template_worlds, tmp_path):
    """The template contract, adversarially: the reference with one value miscopied (everywhere it
    is written), confused with the record beside it or mistyped (in one write), or one step left
    out, fails the verifier whenever the slip changes the world (`worlds.careless`)."""
    task, day_dir = find_task(name, template_worlds)
    w0 = prepare_initial(task, day_dir, tmp_path / "w0" / day_dir.name)
    runs = slipped_runs(task, w0)
    assert remembered_values(task) and [r.slip for r in runs] == [label for label, _ in slips_of(task)]
    assert [r.slip for r in runs if r.hole] == [], name
    assert sum(not r.same_state for r in runs) >= 2, name  # slips that mattered, and all of them failed


def test_a_verifier_that_takes_any_product_is_caught_by_the_confused_slip(template_worlds, tmp_path):
    """Criteria that accept an order of any product: an agent that miscopies the product's name
    buys nothing (no product has that name) and fails, so only an agent that takes the other line
    of the list (the confusable record the world holds) shows the hole."""
    task, day_dir = find_task("restock_from_note", template_worlds)
    any_order = WorldCriterion(
        id="c1",
        kind="row_added",
        description="an order was placed",
        interface="web",
        app="shop",
        table="orders",
    )
    loose = task.model_copy(
        update={
            "criteria": [any_order],
            "checklist": [ChecklistItem(id="k1", description="ordered", weight=1.0, criteria=["c1"])],
        }
    )
    audit = careless_audit([(loose, day_dir)])  # what the gated_world_tasks check runs
    holes = [slip for _, _, slip in audit.holes]
    assert audit.templates == ("restock_from_note",) and audit.changed > 0
    assert "confused product" in holes and "miscopied product" not in holes
    w0 = prepare_initial(task, day_dir, tmp_path / "w0" / day_dir.name)
    assert [r.slip for r in slipped_runs(task, w0) if r.hole] == []


def test_a_file_sent_with_its_last_line_changed_is_no_copy(template_worlds, tmp_path):
    """'Send me the contents of X': the reply must carry the whole file. Checking its first line
    only (as before) rewarded a copy whose last line was mistyped."""
    task, day_dir = find_task("reply_with_file", template_worlds)
    world = tmp_path / "world"
    shutil.copytree(day_dir.parent, world, symlinks=True)
    target = world / day_dir.name / "home" / task.facts["path"]
    target.write_text(target.read_text().rstrip("\n") + "\nLast checked on 2026-03-09.\n")
    task = task_from_template(
        get_template("reply_with_file"), WorldReader(world / day_dir.name), load_persona(world / "day-01"), 0
    )
    assert (
        task is not None
        and task.facts["path"] == target.relative_to(world / day_dir.name / "home").as_posix()
    )
    w0 = prepare_initial(task, world / day_dir.name, tmp_path / "w0" / day_dir.name)
    send = next(i for i, step in enumerate(task.solution) if step.action == "web.send_mail")
    final = tmp_path / "final" / w0.name
    shutil.copytree(w0, final)
    run = ScriptedAgent(error_rate=0.0, slip=Slip(mistype=(send, "content"))).run(task, final)
    assert any("content mistyped" in m for m in run.mistakes)
    ev = evaluate(task, w0, final, run.trajectory)
    assert ev.verdict == 0 and len(ev.failed) == 1, ev.criteria  # the body check, nothing else
    assert [r.slip for r in slipped_runs(task, w0) if r.hole] == []


def test_the_template_registry_refuses_a_second_template_under_a_taken_name():
    taken = get_template("standup_digest")
    with pytest.raises(ConfigError, match="registered twice"):
        register_template(Template(taken.name, taken.applicable, taken.build))
    with pytest.raises(ConfigError, match="known: .*standup_digest"):
        get_template("no_such_template")


# -- verifier on hand-made states ------------------------------------------------------------------
def _hand_task() -> WorldTask:
    mention = Mention(
        app="shop",
        table="orders",
        column="order_number",
        where={"items_json": Condition(op="contains", value="SKU-KETTLE")},
    )
    criteria = [
        WorldCriterion(
            id="c1",
            kind="row_added",
            description="order",
            interface="web",
            app="shop",
            table="orders",
            where={"items_json": Condition(op="contains", value="SKU-KETTLE")},
        ),
        WorldCriterion(
            id="c2",
            kind="row_added",
            description="dm",
            interface="mcp",
            app="dm",
            table="messages",
            where={"peer": Condition(op="eq", value="olaf.b")},
            field="body",
            mention=mention,
        ),
        WorldCriterion(
            id="c3",
            kind="file_contains",
            description="note",
            interface="cli",
            path="notes/orders.md",
            mention=mention,
        ),
    ]
    return WorldTask(
        task_id="hand",
        persona_id="p01-test-persona",
        day=3,
        index=0,
        template="hand",
        instruction="x",
        interface_flow=["web", "mcp", "cli"],
        criteria=criteria,
        checklist=[
            ChecklistItem(id=f"k{i}", description="", weight=w, criteria=[c.id])
            for i, (c, w) in enumerate(zip(criteria, [2.0, 1.0, 1.0]))
        ],
        hints=["a", "b", "c"],
        subtasks=[],
        document="",
        solution=[],
        expectations=[
            Expectation(app="shop", table="orders", tokens=["SKU-KETTLE"]),
            Expectation(
                app="dm", table="messages", tokens=["{peer=olaf.b}", "{new:shop/orders.order_number}"]
            ),
            Expectation(app="files", path="notes/orders.md", tokens=["{new:shop/orders.order_number}"]),
        ],
    )


def test_verifier_scores_hand_made_states_and_scripts_agree(tmp_path):
    initial = make_day(tmp_path / "a", day=3)
    final = tmp_path / "b" / initial.name
    shutil.copytree(initial, final)
    task = _hand_task()
    assert evaluate(task, initial, initial).verdict == 0
    with sqlite3.connect(final / "apps" / "shop.sqlite") as db:
        db.execute(
            "INSERT INTO orders (order_number, status, total_cents, placed_at, items_json) "
            "VALUES ('ORD-00002', 'placed', 3299, 'x', '[{\"sku\": \"SKU-KETTLE\"}]')"
        )
    with sqlite3.connect(final / "apps" / "dm.sqlite") as db:
        db.execute(
            "INSERT INTO messages (peer, direction, body, sent_at) VALUES ('olaf.b', 'out', 'ORD-00002', 'x')"
        )
    partial = evaluate(task, initial, final)
    assert partial.criteria == {"c1": True, "c2": True, "c3": False}
    assert partial.verdict == 0 and partial.checklist == 0.75
    assert not diff_judge(task, initial, final)[0]
    (final / "home" / "notes" / "orders.md").write_text("- ORD-00002 kettle\n")
    solved = evaluate(task, initial, final)
    assert solved.verdict == 1 and solved.checklist == 1.0 and diff_judge(task, initial, final)[0]
    for name, script in criterion_scripts(task).items():
        path = tmp_path / name
        path.write_text(script)
        for a, b, want in ((initial, final, 0), (initial, initial, 1)):
            done = subprocess.run([sys.executable, str(path), str(a), str(b)], capture_output=True, text=True)
            assert done.returncode == want, (name, done.stdout, done.stderr)


# -- agents really act ------------------------------------------------------------------------------
def test_skilled_hinted_agent_acts_through_all_three_interfaces(world, tmp_path):
    task = next(
        t
        for d in range(1, DAYS + 1)
        for t in generate_tasks(_day(world, d), len(all_templates()))
        if t.template == "chat_goahead_order"
    )
    w0, final, result = _solve(task, world, tmp_path, skill="expert", error_rate=0.0)
    with sqlite3.connect(final / "apps" / "shop.sqlite") as db:
        orders = db.execute(
            "SELECT order_number, items_json FROM orders WHERE order_number LIKE 'ORD-0%'"
        ).fetchall()
    assert any(task.facts["sku"] in items for _, items in orders)
    number = orders[-1][0]
    with sqlite3.connect(final / "apps" / "dm.sqlite") as db:
        dms = db.execute(
            "SELECT body FROM messages WHERE peer = ? AND direction = 'out'", (task.facts["peer"],)
        )
        assert any(number in body for (body,) in dms)
    assert task.facts["product"] in (final / "home" / "documents" / "shortlist.txt").read_text()
    assert number in (final / "home" / "notes" / "orders.md").read_text()
    names = [c["function"]["name"] for m in result.trajectory for c in m.get("tool_calls") or []]
    assert {n.split(".")[0] for n in names} == {"mcp", "web", "cli"}
    assert "web.POST /checkout" in names and "mcp.dm_send" in names and "cli.exec" in names
    assert trajectory_well_formed(result.trajectory) and result.cli_backend


# -- gates ------------------------------------------------------------------------------------------
def test_gates_on_a_real_world(world, tmp_path):
    task = generate_task(_day(world, 4), 0)
    record = gate_task(task, _day(world, 4), tmp_path, [], config=GateConfig(keep_dirs=True))
    gates = {g.name: g for g in record.gates}
    # the red team runs only on a task every other gate passed
    assert set(gates) - {"red_team"} == {
        "diversity",
        "initial_unsatisfaction",
        "judge_consistency",
        "solvability",
        "difficulty",
        "counterfactual_probe",
        "judge_probe",
    }
    assert gates["initial_unsatisfaction"].passed and gates["initial_unsatisfaction"].evidence["verdict"] == 0
    assert len(record.rollouts) == 6 and sum(r.hinted for r in record.rollouts) == 3
    assert gates["solvability"].passed == (sum(r.verdict for r in record.rollouts) >= 1)
    k = sum(r.verdict for r in record.rollouts if not r.hinted)
    assert gates["difficulty"].evidence == {"unhinted_successes": k, "label": difficulty_label(k)}
    assert record.difficulty == difficulty_label(k)
    probe = gates["counterfactual_probe"]
    assert probe.passed and len(probe.evidence["probes"]) == len(task.criteria)
    assert all(p["verifier"] == 0 and p["panel"] is False for p in probe.evidence["probes"])
    assert gates["judge_probe"].passed, gates["judge_probe"].evidence
    others = [g for name, g in gates.items() if name != "red_team"]
    assert ("red_team" in gates) == all(g.passed for g in others)
    assert [difficulty_label(k) for k in (0, 1, 2, 3)] == ["hard", "medium", "easy", "easy"]
    dup = gate_task(task, _day(world, 4), tmp_path / "dup", [task_text(task)])
    assert dup.status == "rejected" and dup.gates[0].name == "diversity" and not dup.rollouts
    assert (tmp_path / task.task_id / "rollout-0").is_dir()  # kept where the caller asked


def test_gating_works_in_a_scratch_folder_and_leaves_nothing_behind(world, tmp_path, monkeypatch):
    """Unkept work (W0, rollouts, probes, red-team copies) goes to the scratch root, not to the
    caller's work folder, and is gone once the task is gated."""
    import envpipeline.scratch
    import envpipeline.worlds.gates as gates_module

    root = tmp_path / "scratch"
    root.mkdir()
    monkeypatch.setattr(envpipeline.scratch, "scratch_root", lambda: root)
    folders: list[Path] = []
    real_rollout = gates_module.rollout

    def spying_rollout(task, w0, work, *rest):
        folders.append(work)
        assert w0.is_dir()
        return real_rollout(task, w0, work, *rest)

    monkeypatch.setattr(gates_module, "rollout", spying_rollout)
    task = generate_task(_day(world, 4), 0)
    record = gate_task(task, _day(world, 4), tmp_path / "work", [])
    assert len(folders) == 6 and all(f.is_relative_to(root) for f in folders)
    assert "red_team" in {g.name for g in record.gates}  # the red team's copies went there too
    assert not list(root.iterdir())
    assert not (tmp_path / "work").exists()


def test_counterfactual_mutation_fools_neither_verifier_nor_rule_reviewer(world, tmp_path):
    task = generate_task(_day(world, 2), 1)
    w0, final, result = _solve(task, world, tmp_path, skill="expert", error_rate=0.0)
    assert evaluate(task, w0, final, result.trajectory).verdict == 1
    for criterion in task.criteria:
        probe = tmp_path / f"probe-{criterion.id}" / final.name
        shutil.copytree(final, probe)
        mutate(criterion, w0, probe)
        trajectory = (
            rerouted(task, result.trajectory) if criterion.kind == "calls_through" else result.trajectory
        )
        ev = evaluate(task, w0, probe, trajectory)
        assert not ev.criteria[criterion.id] and ev.verdict == 0, criterion.kind
        if criterion.kind == "state_preserved":
            assert RuleReviewer()(judge_view(task.instruction, result.trajectory, w0, probe)) is False


@pytest.mark.parametrize("name", sorted(all_templates()))
def test_the_judges_fail_every_counterfactual_probe_of_every_template(name, template_worlds, tmp_path):
    """The paper's stress test of the judges: a success's state with one criterion broken (a row it
    added deleted, a field reverted, a file's value corrupted, the mail sent through the other
    interface) while its trajectory still shows the work. The panel passed 317 of 460 such probes
    on seed 0 (it believed the calls over the state); now each judge that reads calls checks that
    they took effect (`judge_effects`), and the panel fails every probe."""
    task, day_dir = find_task(name, template_worlds)
    w0, final, result = _solve(task, day_dir.parent, tmp_path, skill="expert", error_rate=0.0)
    judges = default_judges()
    for criterion in task.criteria:
        probe = tmp_path / f"probe-{criterion.id}" / final.name
        shutil.copytree(final, probe)
        what = mutate(criterion, w0, probe)
        trajectory = (
            rerouted(task, result.trajectory) if criterion.kind == "calls_through" else result.trajectory
        )
        cast = votes(judges, judge_view(task.instruction, trajectory, w0, probe))
        assert panel(cast) is False, (name, criterion.kind, what, cast)


def test_a_panel_a_probe_fools_fails_the_counterfactual_gate(world, tmp_path, monkeypatch):
    """The gate asks the judges too: a panel that passes a broken outcome rejects the task."""
    import envpipeline.worlds.gates as gates_module

    task = generate_task(_day(world, 2), 1)
    w0, final, result = _solve(task, world, tmp_path, skill="expert", error_rate=0.0)
    (tmp_path / "rollout-0").mkdir()
    shutil.copytree(final, tmp_path / "rollout-0" / final.name)
    winner = Rollout(
        index=0,
        hinted=True,
        skill="expert",
        verdict=1,
        criteria={},
        checklist=1.0,
        judge=True,
        format_ok=True,
        trajectory=result.trajectory,
    )
    assert gates_module.counterfactual_gate(task, w0, [winner], tmp_path).passed
    monkeypatch.setattr(gates_module, "default_judges", lambda llm=None: [_Believer()])
    fooled = gates_module.counterfactual_gate(task, w0, [winner], tmp_path)
    assert not fooled.passed and all(p["verifier"] == 0 and p["panel"] for p in fooled.evidence["probes"])
    assert "still passes the verifier or the judges" in fooled.reason


class _Believer:
    """Passes whatever the trajectory claims."""

    name = "believer"

    def __call__(self, view: JudgeView) -> bool | None:
        return True


# -- metrics ----------------------------------------------------------------------------------------
def test_vendi_kappa_nn_and_reward():
    same = np.ones((4, 3))
    assert vendi_score(same) == pytest.approx(1.0)
    assert vendi_score(np.eye(5)) == pytest.approx(5.0)
    assert vendi_score(np.eye(3)[[0, 0, 1, 1]]) == pytest.approx(2.0)
    assert cohen_kappa([1, 1, 0, 0], [1, 0, 0, 0]) == pytest.approx(0.5)
    assert cohen_kappa([1, 0, 1, 0], [0, 1, 0, 1]) == pytest.approx(-1.0)
    assert cohen_kappa([1, 1, 1], [1, 1, 1]) == 1.0
    nn = nn_cosine(np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]))
    assert nn["min"] == 0.0 and nn["near_duplicate_share"] == pytest.approx(2 / 3, abs=1e-4)
    assert nn["mean"] == pytest.approx(1 / 3, abs=1e-4)
    x = tfidf(["buy the kettle now", "buy the kettle now", "email the budget numbers"])
    assert np.allclose(np.linalg.norm(x, axis=1), 1.0) and x[0] @ x[1] == pytest.approx(1.0)
    assert x[0] @ x[2] < 0.3
    assert majority([True, None]) is True and majority([True, False], tie=False) is False
    assert reward(1, 1.0, True) == pytest.approx(1.6) and reward(0, 0.5, False) == pytest.approx(0.25)
    rewards, adv = group_rewards([(1, 1.0, True), (0, 0.5, True), (0, 0.0, False)])
    assert rewards == [1.6, 0.35, 0.0] and adv[0] > 0 > adv[2]
    assert not trajectory_well_formed([{"role": "system", "content": "s"}, {"role": "user", "content": "u"}])


def test_pipeline_summary_and_records(tmp_path):
    summary = build_and_gate(
        1, 2, seed=3, root=tmp_path, tasks_per_world_day=2, live_health=False, replay=False
    )
    assert summary["tasks"]["candidates"] >= 2 and summary["worlds"][0]["passed"]
    assert {"diversity", "initial_unsatisfaction"} <= set(summary["gates"])
    assert {"kappa", "worlds", "tasks"} <= set(summary["metrics"])
    lines = (tmp_path / "tasks.jsonl").read_text().splitlines()
    assert len(lines) == summary["tasks"]["candidates"]
    assert json.loads(lines[0])["status"] in ("accepted", "rejected")
    assert json.loads((tmp_path / "summary.json").read_text())["tasks"] == summary["tasks"]


def test_llm_judge_joins_the_majority_when_configured(world, tmp_path):
    class FakeLLM:
        def __init__(self, text):
            self.text, self.prompts = text, []

        def complete(self, messages):
            self.prompts.append(messages[0]["content"])
            return type("R", (), {"content": self.text})()

    task = generate_task(_day(world, 1), 0)
    w0, final, result = _solve(task, world, tmp_path, skill="expert", error_rate=0.0)
    view = judge_view(task.instruction, result.trajectory, w0, final)
    yes = FakeLLM('Sure: {"success": true, "reason": "done"}')
    assert LLMJudge(yes)(view) is True and task.instruction in yes.prompts[0]
    assert "criteria" not in yes.prompts[0].lower() and task.criteria[0].description not in yes.prompts[0]
    assert LLMJudge(FakeLLM("no idea"))(view) is None
    record = gate_task(task, _day(world, 1), tmp_path / "g", [], llm=FakeLLM('{"success": false}'))
    consistency = next(g for g in record.gates if g.name == "judge_consistency")
    assert [v["llm"] for v in consistency.evidence["votes"]] == [False] * 6
    # four judges: the panel is a strict majority, a 2-2 tie is no decision (and rejects the task)
    for cast, decided in zip(consistency.evidence["votes"], consistency.evidence["panel"]):
        assert decided == panel(cast)
    if consistency.evidence["ties"]:
        assert not consistency.passed and "tied" in consistency.reason


def test_a_product_asked_for_is_one_unit_of_it_in_an_order_of_its_own(template_worlds, tmp_path):
    """'Order it' with the product already in the cart three times (left there on an earlier day):
    the expert used to add one and check out four, and the verifier, asking only for a new order
    'containing' the SKU, passed it, as it passed the product ordered among others. Now the order
    must be one unit and nothing else, and the expert empties the cart before it adds the product."""
    task, day_dir = find_task("dm_friend_request", template_worlds)
    sku = task.facts["sku"]
    w0 = prepare_initial(task, day_dir, tmp_path / "w0" / day_dir.name)
    (product_id, price), (other_id, _) = (
        sqlite3.connect(w0 / "apps" / "shop.sqlite")
        .execute("SELECT id, price_cents FROM products ORDER BY sku = ? DESC, id LIMIT 2", [sku])
        .fetchall()
    )
    with sqlite3.connect(w0 / "apps" / "shop.sqlite") as db:
        db.execute("DELETE FROM cart_items")
        db.execute(
            "INSERT INTO cart_items (product_id, quantity, added_at) VALUES (?, 3, 'day 1')", [product_id]
        )
    final = tmp_path / "final" / w0.name
    shutil.copytree(w0, final)
    result = ScriptedAgent(seed="test", skill="expert", error_rate=0.0).run(task, final)
    solved = evaluate(task, w0, final, result.trajectory)
    assert solved.verdict == 1, solved.failed
    (order,) = (
        sqlite3.connect(final / "apps" / "shop.sqlite")
        .execute("SELECT total_cents, items_json FROM orders ORDER BY id DESC LIMIT 1")
        .fetchall()
    )
    assert order[0] == price and json.loads(order[1])[0]["quantity"] == 1
    for quantity, extra in ((4, 0), (1, 1)):  # four of it; it and another product
        items = [{"sku": sku, "quantity": quantity, "price_cents": price}] + [
            {"product_id": other_id}
        ] * extra
        with sqlite3.connect(final / "apps" / "shop.sqlite") as db:
            db.execute(
                "UPDATE orders SET total_cents = ?, items_json = ? WHERE id = (SELECT MAX(id) FROM orders)",
                [price * quantity + 999 * extra, json.dumps(items)],
            )
        assert evaluate(task, w0, final).verdict == 0
