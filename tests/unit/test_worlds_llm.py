"""The WildAWM LLM paths through real litellm and real HTTP to a scripted local server.

Every stage end to end, and the adversarial cases: a duplicate persona is rejected by the diversity
judge, a skill that breaks the world is refused, a task whose reference fails or that leaks its
answer is refused, malformed JSON is repaired then refused, and the world judge parses strictly.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from envpipeline.cli import main
from envpipeline.llm import LLMClient, LLMConfig
from envpipeline.worlds.build import build_world
from envpipeline.worlds.llm.judge import judge_world, judge_world_day
from envpipeline.worlds.llm.personas import PersonaDraft, propose_personas_llm
from envpipeline.worlds.llm.skills import DeclarativeSkill, SkillDraft, propose_skills, skill_gate
from envpipeline.worlds.llm.structured import ask_structured
from envpipeline.worlds.llm.task_checks import leaked_answers
from envpipeline.worlds.llm.tasks import synthesize_task
from envpipeline.worlds.personas import generate_persona
from envpipeline.worlds.skills.registry import all_skills
from envpipeline.worlds.state import day_path
from envpipeline.worlds.tasks import generate_tasks, prepare_initial
from envpipeline.worlds.templates import all_templates
from tests.llm_server import ScriptedLLMServer
from tests.world_fixture import find_task
from tests.worlds_llm_script import GYM_SKILL, PERSONAS, StageRouter, task_draft

pytestmark = pytest.mark.llm


def client(server: ScriptedLLMServer, cache: Path | None = None) -> LLMClient:
    return LLMClient(
        LLMConfig(
            model="openai/scripted", api_base=server.api_base, num_retries=0, timeout_sec=20, cache_dir=cache
        )
    )


@pytest.fixture(name="router")
def router_fixture():
    router = StageRouter()
    with ScriptedLLMServer(default=router) as server:
        router.server = server  # type: ignore[attr-defined]
        yield router


@pytest.fixture(scope="module", name="world")
def world_fixture(tmp_path_factory) -> tuple[Path, object]:
    """A procedural persona's world, days 0-1 (no live check, no replay: fast)."""
    persona = generate_persona(0, 0)
    build = build_world(persona, 1, tmp_path_factory.mktemp("worlds"), live_health=False, replay=False)
    assert build.passed
    return Path(build.root), persona


def library() -> dict:
    """The built-in skills plus the scripted persona's LLM skill (its arc uses it)."""
    return {**all_skills(), "pay_gym_fee": DeclarativeSkill(SkillDraft.model_validate(GYM_SKILL))}


def llm_of(router: StageRouter, cache: Path | None = None) -> LLMClient:
    return client(router.server, cache)  # type: ignore[attr-defined]


# -- structured answers --------------------------------------------------------------------------


def test_malformed_json_is_repaired_with_the_error_fed_back(router: StageRouter) -> None:
    router.queue("persona", "Sure! Here is the persona: {not json", json.dumps(PERSONAS[0]))
    llm = llm_of(router)
    messages = [
        {"role": "system", "content": "You create diverse personas"},
        {"role": "user", "content": "x"},
    ]
    result = ask_structured(llm, messages, PersonaDraft, stage="persona", max_repairs=2)
    assert result.ok and result.value is not None and result.value.name == "Ingrid Solberg"
    assert [a.ok for a in result.attempts] == [False, True]
    assert "not a JSON object" in result.attempts[0].errors[0]
    repair = router.bodies[-1][1]["messages"]
    assert repair[-2] == {"role": "assistant", "content": "Sure! Here is the persona: {not json"}
    assert "not a JSON object" in repair[-1]["content"]
    assert llm.usage().calls == 2 and result.tokens["prompt"] > 0


def test_malformed_json_that_stays_malformed_is_refused_after_the_repairs(router: StageRouter) -> None:
    router.queue("persona", "{", '{"name": "x"} trailing prose', '["a list"]')
    messages = [
        {"role": "system", "content": "You create diverse personas"},
        {"role": "user", "content": "x"},
    ]
    result = ask_structured(llm_of(router), messages, PersonaDraft, stage="persona", max_repairs=2)
    assert not result.ok and result.value is None and len(result.attempts) == 3
    assert "JSON list, expected an object" in result.errors[0]
    assert "Extra data" in result.attempts[1].errors[0]  # prose after the object is not salvaged


# -- personas ------------------------------------------------------------------------------------


def test_llm_personas_are_accepted_through_both_diversity_judges(router: StageRouter) -> None:
    personas, rejected, calls = propose_personas_llm(llm_of(router), 2, seed=3, skills=library())
    assert [p.persona_id for p in personas] == ["p01-ingrid-solberg", "p02-tariq-haddad"]
    assert personas[0].contacts[0].handle == "maja.k" and personas[0].core_tools == [
        "calendar",
        "files",
        "mail",
    ]
    assert personas[1].occupation == "bicycle mechanic" and not rejected
    assert router.seen["persona"] == 2 and router.seen["diversity_judge"] == 2
    assert {c["stage"] for c in calls} == {"persona", "diversity_judge"}
    second_prompt = [b for s, b in router.bodies if s == "persona"][1]["messages"][1]["content"]
    assert "marine biologist" in second_prompt  # the accepted persona is shown to the generator


def test_a_persona_duplicating_an_accepted_one_is_rejected_and_revised(router: StageRouter) -> None:
    duplicate = json.dumps(PERSONAS[0])
    router.queue("persona", duplicate, duplicate, lambda body: json.dumps(PERSONAS[1]))
    personas, rejected, _ = propose_personas_llm(llm_of(router), 2, seed=0, skills=library())
    assert [p.occupation for p in personas] == ["marine biologist", "bicycle mechanic"]
    [record] = rejected
    assert record["by"] == "rules" and record["persona_id"] == "p02-ingrid-solberg"
    assert "occupation 'marine biologist' repeats p01-ingrid-solberg" in record["feedback"]
    revision = [b for s, b in router.bodies if s == "persona"][2]["messages"][1]["content"]
    assert "rejected your previous candidate" in revision and "repeats p01-ingrid-solberg" in revision
    assert router.seen["diversity_judge"] == 2  # the rule judge refused first: no LLM vote was needed


def test_the_llm_diversity_judge_can_reject_and_its_verdict_must_parse(router: StageRouter) -> None:
    verdict = {"accepted": False, "repeats": {"arcs": ["gym-routine"]}, "feedback": "another gym arc"}
    router.queue("diversity_judge", json.dumps(verdict), "looks fine to me", "yes", "still prose")
    router.queue("persona", json.dumps(PERSONAS[0]), json.dumps(PERSONAS[0]), json.dumps(PERSONAS[0]))
    personas, rejected, _ = propose_personas_llm(
        llm_of(router), 1, seed=0, max_revisions=1, max_candidates=1, skills=library()
    )
    assert personas == []
    assert rejected[0]["by"] == "llm" and rejected[0]["feedback"] == "another gym arc"
    assert rejected[1]["by"] == "llm" and "gave no valid verdict" in rejected[1]["feedback"]
    assert rejected[1]["gave_up"]


def test_a_persona_with_unknown_apps_and_skills_is_repaired(router: StageRouter) -> None:
    bad = {**PERSONAS[0], "core_tools": ["mail", "spreadsheet", "files"]}
    bad["arcs"] = [
        {**PERSONAS[0]["arcs"][0], "skills": ["write_journal", "launch_rocket"]},
        PERSONAS[0]["arcs"][1],
    ]
    router.queue("persona", json.dumps(bad), json.dumps(PERSONAS[0]))
    personas, _, calls = propose_personas_llm(llm_of(router), 1, llm_judge=False, skills=library())
    assert len(personas) == 1 and calls[0]["repairs"] == 1
    repair = [b for s, b in router.bodies if s == "persona"][1]["messages"][-1]["content"]
    assert "['spreadsheet'] are not apps" in repair and "unknown skills ['launch_rocket']" in repair


def test_persona_answers_come_from_the_disk_cache_the_second_time(
    router: StageRouter, tmp_path: Path
) -> None:
    first = llm_of(router, tmp_path / "cache")
    propose_personas_llm(first, 1, llm_judge=False, skills=library())
    second = llm_of(router, tmp_path / "cache")
    personas, _, _ = propose_personas_llm(second, 1, llm_judge=False, skills=library())
    assert personas[0].persona_id == "p01-ingrid-solberg"
    assert second.usage().cached_calls == 1 and second.usage().prompt_tokens == 0
    assert router.seen["persona"] == 1


# -- skills --------------------------------------------------------------------------------------


def test_a_consistent_proposed_skill_is_admitted_after_running_on_a_world(router: StageRouter) -> None:
    admitted, records, request = propose_skills(
        llm_of(router), 1, generate_persona(0, 0), existing=all_skills()
    )
    assert list(admitted) == ["pay_gym_fee"] and records[0]["admitted"] and request.ok
    assert "replays identically" in records[0]["reason"]
    ops = admitted["pay_gym_fee"].plan(generate_persona(0, 0), None, __import__("random").Random(1), 2, 1)  # type: ignore[arg-type]
    assert (
        ops[0].values["amount_cents"] < 0
        and ops[1].values["balance_cents"]["$add"] == ops[0].values["amount_cents"]
    )


def _skill(**changes: object) -> dict:
    return {**json.loads(json.dumps(GYM_SKILL)), **changes}


def test_a_skill_on_an_unknown_table_or_app_is_repaired_then_refused(router: StageRouter) -> None:
    unknown_table = _skill(
        scenarios=[{**GYM_SKILL["scenarios"][0], "table": "ledger"}, *GYM_SKILL["scenarios"][1:]]
    )
    unknown_app = _skill(name="pay_taxes", apps=["bank", "mail", "irs"])
    answers = [json.dumps({"skills": [unknown_table, unknown_app]})] * 3
    router.queue("skills", *answers)
    admitted, records, request = propose_skills(
        llm_of(router), 2, generate_persona(0, 0), existing=all_skills()
    )
    assert admitted == {} and records == [] and not request.ok and len(request.attempts) == 3
    errors = " | ".join(request.errors)
    assert "unknown table 'ledger' in app 'bank'" in errors and "unknown apps ['irs']" in errors


def test_a_skill_that_drives_a_balance_negative_is_refused(world) -> None:
    draining = _skill(name="buy_boat")
    draining["scenarios"] = [
        {
            **GYM_SKILL["scenarios"][0],
            "values": {**GYM_SKILL["scenarios"][0]["values"], "amount_cents": -99_000_000},
        },
        {**GYM_SKILL["scenarios"][1], "values": {"balance_cents": {"$add": -99_000_000}}},
        GYM_SKILL["scenarios"][2],
    ]
    gate = skill_gate(DeclarativeSkill(SkillDraft.model_validate(draining)), generate_persona(0, 0))
    assert not gate.passed and "negative balance_cents" in gate.reason
    world_dir, persona = world
    assert not DeclarativeSkill(SkillDraft.model_validate(draining)).available(
        persona,
        __import__("envpipeline.worlds.state", fromlist=["WorldReader"]).WorldReader(day_path(world_dir, 1)),
    )


def test_a_skill_that_moves_money_on_one_side_only_fails_the_reviewer() -> None:
    one_sided = _skill(name="ghost_payment", scenarios=[GYM_SKILL["scenarios"][0], GYM_SKILL["scenarios"][2]])
    gate = skill_gate(DeclarativeSkill(SkillDraft.model_validate(one_sided)), generate_persona(0, 0))
    assert not gate.passed and "reviewer" in gate.reason and "!= transactions" in gate.reason


def test_a_skill_that_declares_apps_it_does_not_touch_is_refused_by_validation(router: StageRouter) -> None:
    router.queue("skills", *[json.dumps({"skills": [_skill(apps=["bank", "mail", "calendar"])]})] * 3)
    admitted, _, request = propose_skills(
        llm_of(router), 1, generate_persona(0, 0), existing=all_skills(), max_repairs=2
    )
    assert not admitted and "declares apps ['calendar'] that no scenario touches" in request.errors[0]


# -- tasks ---------------------------------------------------------------------------------------


def test_a_synthesized_task_passes_the_pre_gate_checks(router: StageRouter, world) -> None:
    world_dir, persona = world
    task, record = synthesize_task(llm_of(router), day_path(world_dir, 1), persona, 0)
    assert task is not None and record["ok"] and record["repairs"] == 0
    assert task.template == "llm:move_rehearsal" and task.interface_flow == ["mcp", "cli", "mcp"]
    assert {c.kind for c in task.criteria} >= {
        "file_contains",
        "row_added",
        "state_preserved",
    }
    assert task.document.startswith("# Task llm:move_rehearsal")


def test_a_task_that_leaks_its_answer_is_repaired_then_refused(router: StageRouter, world) -> None:
    world_dir, persona = world
    router.queue("task", lambda b: json.dumps(task_draft(b, leak=True)), lambda b: json.dumps(task_draft(b)))
    task, record = synthesize_task(llm_of(router), day_path(world_dir, 1), persona, 0)
    assert task is not None and record["repairs"] == 1
    router.queue("task", *[lambda b: json.dumps(task_draft(b, leak=True))] * 3)
    task, record = synthesize_task(llm_of(router), day_path(world_dir, 1), persona, 1)
    assert task is None and not record["ok"] and record["attempts"] == 3
    assert any("the instruction states the read value date" in e for e in record["errors"])


def test_a_task_that_states_its_answer_in_other_words_is_refused(router: StageRouter, world) -> None:
    """'It is on March 7 at 2:30 pm' gives away the 2026-03-07 and 14:30 the agent must read."""
    world_dir, persona = world
    router.queue("task", *[lambda b: json.dumps(task_draft(b, spelled_leak=True))] * 2)
    task, record = synthesize_task(llm_of(router), day_path(world_dir, 1), persona, 0, max_repairs=1)
    assert task is None and not record["ok"]
    assert any("the instruction states the read value date" in e for e in record["errors"])
    assert any("the instruction states the read value time '14:30'" in e for e in record["errors"])


def test_a_task_whose_reference_solution_fails_is_refused(router: StageRouter, world) -> None:
    world_dir, persona = world
    router.queue("task", *[lambda b: json.dumps(task_draft(b, wrong_text=True))] * 2)
    task, record = synthesize_task(llm_of(router), day_path(world_dir, 1), persona, 0, max_repairs=1)
    assert task is None and record["attempts"] == 2
    assert "the reference solution does not pass: criterion c1" in record["errors"][0]


def test_a_task_whose_criteria_miss_a_value_it_writes_is_repaired_then_refused(
    router: StageRouter, world
) -> None:
    """Criteria that check the date an agent writes but not the time reward an agent that read the
    time wrong: the careless-agent probe sends that back, then refuses the task."""
    world_dir, persona = world
    loose = lambda b: json.dumps(task_draft(b, loose=True))  # noqa: E731
    router.queue("task", loose, lambda b: json.dumps(task_draft(b)))
    task, record = synthesize_task(llm_of(router), day_path(world_dir, 1), persona, 0)
    assert task is not None and record["repairs"] == 1
    router.queue("task", loose, loose)
    task, record = synthesize_task(llm_of(router), day_path(world_dir, 1), persona, 0, max_repairs=1)
    assert task is None and record["attempts"] == 2
    assert any("an agent that miscopied time still passes every criterion" in e for e in record["errors"])
    assert not any("miscopied date" in e for e in record["errors"])


def test_a_task_with_unknown_actions_or_unread_variables_is_refused(router: StageRouter, world) -> None:
    world_dir, persona = world

    def broken(body: dict) -> str:
        draft = task_draft(body)
        draft["subtasks"][0]["steps"][0]["action"] = "mcp.telepathy"
        del draft["setup"][0]["values"]["sent_at"]
        return json.dumps(draft)

    router.queue("task", broken)
    task, record = synthesize_task(llm_of(router), day_path(world_dir, 1), persona, 0, max_repairs=0)
    assert task is None
    assert any("unknown action" in e for e in record["errors"])
    assert any("uses ['date', 'time'] before any step reads them" in e for e in record["errors"])
    assert any("setup 0: insert into dm/messages misses columns ['sent_at']" in e for e in record["errors"])


def test_procedural_tasks_do_not_leak_their_answers(world, tmp_path: Path) -> None:
    """The leak check is not a blanket refusal: the hand-written templates pass it."""
    world_dir, persona = world
    tasks = generate_tasks(day_path(world_dir, 1), 3, persona)
    assert tasks
    for task in tasks:
        w0 = prepare_initial(task, day_path(world_dir, 1), tmp_path / task.task_id / "day-01")
        assert leaked_answers(task, w0) == [], task.template


@pytest.mark.parametrize("name", sorted(all_templates()))
def test_no_template_states_the_values_its_solution_reads(name, template_worlds, tmp_path: Path) -> None:
    task, day_dir = find_task(name, template_worlds)
    w0 = prepare_initial(task, day_dir, tmp_path / "w0" / day_dir.name)
    assert leaked_answers(task, w0) == [], name


# -- the world judge -----------------------------------------------------------------------------


def test_the_world_judge_parses_its_verdict_strictly(router: StageRouter, world) -> None:
    world_dir, persona = world
    router.queue(
        "world_judge",
        'Verdict: {"verdict": "pass", "issues": []}',
        '{"verdict": "fail", "issues": []}',
        '{"verdict": "PASS"}',
    )
    check = judge_world_day(llm_of(router), persona, day_path(world_dir, 1), max_repairs=2)
    assert check.name == "llm_world_judge" and not check.passed
    assert "no valid verdict after 3 attempt(s)" in check.reason
    errors = [b["messages"][-1]["content"] for s, b in router.bodies if s == "world_judge"][1:]
    assert "not a JSON object" in errors[0] and "must list at least one issue" in errors[1]


def test_the_world_judge_fails_a_day_with_issues_and_passes_a_clean_one(router: StageRouter, world) -> None:
    world_dir, persona = world
    fail = {"verdict": "fail", "issues": [{"app": "bank", "problem": "rent paid twice"}]}
    router.queue("world_judge", json.dumps(fail))
    build = build_world(persona, 1, world_dir.parent / "judged", live_health=False, replay=False)
    judged = judge_world(llm_of(router), persona, build)
    [day0, day1] = [next(c for c in d.checks if c.name == "llm_world_judge") for d in judged.days]
    assert not day0.passed and day0.reason == "bank: rent paid twice"
    assert day1.passed and not judged.passed


# -- end to end ----------------------------------------------------------------------------------


def test_worlds_build_generator_llm_end_to_end(router: StageRouter, tmp_path: Path) -> None:
    server = router.server  # type: ignore[attr-defined]
    out = tmp_path / "worlds"
    args = [
        "worlds",
        "build",
        "--generator",
        "llm",
        "--model",
        "openai/scripted",
        "--api-base",
        server.api_base,
    ]
    args += ["--personas", "1", "--days", "1", "--tasks-per-day", "1", "--no-live", "--llm-skills", "1"]
    result = CliRunner().invoke(main, [*args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "tasks: 1 accepted of 1" in result.output and "skills admitted: pay_gym_fee" in result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["generator"] == "llm" and summary["worlds"][0]["passed"]
    assert summary["worlds"][0]["persona_id"] == "p01-ingrid-solberg"
    assert summary["worlds"][0]["llm_skills_used"] == ["pay_gym_fee"]  # the arc used the admitted skill
    assert summary["tasks"]["by_template"] == {"llm:move_rehearsal": 1}
    assert summary["llm"]["usage"]["calls"] == len(server.requests) == 6
    assert dict(router.seen) == {"skills": 1, "persona": 1, "diversity_judge": 1, "world_judge": 2, "task": 1}
    [gated] = [json.loads(line) for line in (out / "tasks.jsonl").read_text().splitlines()]
    assert gated["status"] == "accepted" and all(g["passed"] for g in gated["gates"])
    assert json.loads((out / "llm-skills.json").read_text())[0]["name"] == "pay_gym_fee"
    assert list((out / "llm-cache").rglob("*.json"))


def test_worlds_build_refuses_llm_options_that_do_not_fit(tmp_path: Path) -> None:
    out = ["--out", str(tmp_path / "w")]
    no_model = CliRunner().invoke(main, ["worlds", "build", "--generator", "llm", *out])
    assert no_model.exit_code != 0 and "--generator llm needs --model" in no_model.output
    stray = CliRunner().invoke(main, ["worlds", "build", "--model", "openai/x", *out])
    assert stray.exit_code != 0 and "only apply with --generator llm" in stray.output
    stages = ["--generator", "llm", "--model", "openai/x", "--llm-stages", "personas,poems"]
    bad = CliRunner().invoke(main, ["worlds", "build", *stages, *out])
    assert bad.exit_code != 0 and "unknown LLM stages ['poems']" in bad.output
    assert not (tmp_path / "w").exists()  # refused before any work
