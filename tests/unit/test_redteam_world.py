"""The world red team: every policy breaks a deliberately weak world task, none breaks a real one."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from envpipeline.models.criteria import Condition
from envpipeline.models.world_task import WorldCriterion, WorldTask
from envpipeline.redteam.registry import get_policy, policies_for
from envpipeline.redteam.world import red_team_world, reference_run, write_calls
from envpipeline.redteam.world_attack import WorldAttack
from envpipeline.worlds.build import build_world
from envpipeline.worlds.personas import generate_persona
from envpipeline.worlds.state import world_hash
from envpipeline.worlds.tasks import generate_tasks, prepare_initial

WorldWeakening = Callable[[WorldTask], WorldTask]
DAYS = 3


def keep(task: WorldTask, predicate: Callable[[WorldCriterion], bool]) -> WorldTask:
    criteria = [c for c in task.criteria if predicate(c)]
    ids = {c.id for c in criteria}
    checklist = [i for i in task.checklist if set(i.criteria) <= ids]
    return task.model_copy(update={"criteria": criteria, "checklist": checklist})


def without_forbidden(task: WorldTask) -> WorldTask:
    """The collateral check without its candidate list: listing every candidate goes unnoticed."""
    criteria = [
        c.model_copy(update={"allow": {**c.allow, "forbidden": []}}) if c.kind == "state_preserved" else c
        for c in task.criteria
    ]
    return task.model_copy(update={"criteria": criteria})


def anyone_copied(task: WorldTask) -> WorldTask:
    """The added-row checks as they were: a mail's recipients need only include the right address,
    and an added event may invite anyone."""

    def loose(criterion: WorldCriterion) -> WorldCriterion:
        where = {
            column: Condition(op="contains", value=c.value) if c.op == "addresses" else c
            for column, c in (criterion.where or {}).items()
            if column != "attendees_json"
        }
        return criterion.model_copy(update={"where": where}) if criterion.kind == "row_added" else criterion

    return task.model_copy(update={"criteria": [loose(c) for c in task.criteria]})


def first_request_only(task: WorldTask) -> WorldTask:
    first = next(c.id for c in task.criteria if c.kind not in ("state_preserved", "calls_through"))
    return keep(task, lambda c: c.id == first)


#: For each world policy, a deliberately weak version of a task that the policy should break.
WORLD_WEAKENINGS: dict[str, WorldWeakening] = {
    "nop": lambda t: keep(t, lambda c: c.kind == "state_preserved"),
    "enumerate": without_forbidden,
    "shotgun": lambda t: keep(t, lambda c: c.kind == "row_added" and c.app == "shop"),
    "shotgun-after-reference": lambda t: keep(t, lambda c: c.kind != "state_preserved"),
    "destructive-after-reference": lambda t: keep(t, lambda c: c.kind != "state_preserved"),
    "over-act": lambda t: keep(t, lambda c: c.kind != "state_preserved"),
    "early-stop": first_request_only,
    "wrong-interface": lambda t: keep(t, lambda c: c.kind != "calls_through"),
    "cc-outsider": anyone_copied,
}


@pytest.fixture(scope="module")
def tasks(tmp_path_factory) -> list[tuple[WorldTask, Path]]:
    """One task per template of a small world, with its W0."""
    root = tmp_path_factory.mktemp("rt-worlds")
    build = build_world(generate_persona(0, 1), DAYS, root, live_health=False, replay=False)
    out: dict[str, tuple[WorldTask, Path]] = {}
    for day in range(1, DAYS + 1):
        day_dir = Path(build.root) / f"day-{day:02d}"
        for task in generate_tasks(day_dir, 3):
            if task.template not in out:
                out[task.template] = (
                    task,
                    prepare_initial(task, day_dir, root / "w0" / task.task_id / day_dir.name),
                )
    return list(out.values())


def test_every_world_policy_has_a_weakening():
    assert set(WORLD_WEAKENINGS) == {p.name for p in policies_for("world")}


@pytest.mark.parametrize("name", sorted(WORLD_WEAKENINGS))
def test_each_world_policy_breaks_a_deliberately_weak_task(name: str, tasks) -> None:
    policy = get_policy(name)
    broken = []
    for task, w0 in tasks:
        weak = WORLD_WEAKENINGS[name](task)
        if not weak.criteria:
            continue
        outcome = red_team_world(weak, w0, [policy])[0]
        if outcome.broke:
            broken.append(task.template)
            break
    assert broken, f"{name} broke none of {len(tasks)} weakened world tasks: it has no teeth"


def test_no_world_policy_breaks_a_real_task_and_collateral_damage_fails(tasks) -> None:
    templates = {t.template for t, _ in tasks}
    assert len(templates) >= 4
    for task, w0 in tasks:
        state_id = next(c.id for c in task.criteria if c.kind == "state_preserved")
        outcomes = {o.policy: o for o in red_team_world(task, w0)}
        for name, outcome in outcomes.items():
            assert not outcome.broke, (task.template, name)
            if not outcome.moot:
                assert outcome.binary == 0.0 and outcome.checklist < 1.0, (task.template, name)
        # the reference plus a wiped home/ and deleted mail/chat/calendar/bank rows fails on collateral damage
        assert state_id in outcomes["destructive-after-reference"].failed, task.template
        assert state_id in outcomes["shotgun-after-reference"].failed, task.template
        # doing nothing, or everything and then collateral damage, earns no partial credit
        for name in ("nop", "destructive-after-reference", "shotgun-after-reference"):
            assert outcomes[name].checklist == outcomes[name].cfrr == 0.0, (task.template, name)
        if task.template == "chat_goahead_order":  # buying all the chat's options, not exactly the one
            assert outcomes["over-act"].failed == [state_id]


def test_replaying_the_reference_ends_where_running_the_solution_again_ends(tasks, tmp_path) -> None:
    """The policies that start with the reference copy its final folder and trajectory instead of
    running the scripted solution once more: for every template, the copy is what a second run on
    a fresh W0 copy gives (same state hash, same calls), and it stays the attack's own copy."""
    for task, w0 in tasks:
        work = tmp_path / task.task_id
        reference = reference_run(task, w0, work)
        assert reference.final_world is not None and reference.writes
        runs = {}
        for how in ("replay", "run"):
            world = work / how / w0.name
            shutil.copytree(w0, world)
            attack = WorldAttack(task, w0, world, reference)
            attack.replay_reference() if how == "replay" else attack.run_solution()
            runs[how] = (world_hash(world), write_calls(attack.trajectory), attack.trajectory)
        assert runs["replay"][:2] == runs["run"][:2] == (reference.final_hash, reference.writes), (
            task.template
        )
        assert [m.get("content") for m in runs["replay"][2]] == [m.get("content") for m in runs["run"][2]]
        (work / "replay" / w0.name / "home" / "scribble.txt").write_text("the attack's own copy")
        assert world_hash(reference.final_world) == reference.final_hash
