"""A composed task pins what it does not ask to change in a record it edits: fields and items.

"Set the assignee of issue 'issue_01' to Tara Ortiz" was passed by an agent that also closed the
issue, renamed it and lowered its priority, and "invite X to the event" by one that invited an
outsider too: `state_preserved` let a record the reference edits change whole. Before, 23 of 110
accepted curated tasks of seeds 0-119 (and 11 of 120 whole-library ones) gave full reward to
`other-fields` or `other-items`.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from envpipeline.agents.environment import ComposedEnvironment
from envpipeline.agents.reference import run_reference
from envpipeline.models.task import Criterion, TaskRecord
from envpipeline.redteam.compose import red_team, stored_states
from envpipeline.redteam.registry import get_policy
from envpipeline.rubric import pass_vector, preservation_of, state_fields, untouched_digest
from tests.unit.edited_records import record_level


def _issues(**first: Any) -> dict[str, Any]:
    record = {"id": "i1", "title": "Launch plan", "assignee": "Ana Li", "status": "open", "priority": "high"}
    other = {"id": "i2", "title": "Budget", "assignee": "Bo Kim", "status": "open", "priority": "low"}
    return {"issues": {"issues": {"i1": {**record, **first}, "i2": other}}}


def _preserved(before: dict[str, Any], after: dict[str, Any]) -> Criterion:
    return Criterion(
        id="c9",
        description="nothing else changed",
        kind="state_preserved",
        **preservation_of(before, after)._asdict(),
    )


def test_an_edited_record_may_change_only_in_the_fields_the_reference_changed():
    criterion = _preserved(_issues(), _issues(assignee="Tara Ortiz"))
    assert criterion.allowed == {"issues.issues": ["i1"]}
    assert criterion.allowed_fields == {"issues.issues": {"i1": {"assignee": None}}}

    def passes(state: dict[str, Any]) -> bool:
        return pass_vector([criterion], state) == [True]

    assert passes(_issues(assignee="Tara Ortiz"))
    assert passes(_issues(assignee="Someone Else")), "the value is the write criterion's to check"
    assert not passes(_issues(assignee="Tara Ortiz", status="closed")), "closed as well"
    assert not passes(_issues(assignee="Tara Ortiz", title="Launch plan (old)")), "renamed as well"
    assert not passes(_issues(assignee="Tara Ortiz", labels=["x"])), "a field added"
    deleted = _issues()
    del deleted["issues"]["issues"]["i1"]
    assert not passes(deleted), "the edited record deleted"
    other = _issues(assignee="Tara Ortiz")
    other["issues"]["issues"]["i2"]["status"] = "closed"
    assert not passes(other), "another record edited"


def test_an_edited_list_or_object_may_change_only_in_the_items_the_reference_changed():
    """Inviting one person to an event, tagging a note, setting one column: the record's list may
    gain that value (or lose it), its object that key, and nothing else."""
    criterion = _preserved(
        _issues(watchers=["a@x.test"], extra={"size": "S", "color": "blue"}),
        _issues(watchers=["a@x.test", "b@x.test"], extra={"size": "M", "color": "blue", "team": "red"}),
    )
    assert criterion.allowed_fields == {
        "issues.issues": {"i1": {"extra": ["size", "team"], "watchers": ["b@x.test"]}}
    }

    def passes(**first: Any) -> bool:
        return pass_vector([criterion], _issues(**first)) == [True]

    asked = {"watchers": ["a@x.test", "b@x.test"], "extra": {"size": "M", "color": "blue", "team": "red"}}
    assert passes(**asked)
    assert passes(**{**asked, "watchers": ["b@x.test", "a@x.test", "b@x.test"]}), "invited twice"
    assert not passes(**{**asked, "watchers": ["a@x.test", "b@x.test", "outsider@y.test"]}), "an outsider too"
    assert not passes(**{**asked, "watchers": ["b@x.test"]}), "the other watcher dropped"
    assert not passes(**{**asked, "extra": {**asked["extra"], "owner": "me"}}), "another key set"
    assert not passes(**{**asked, "extra": {"size": "M", "team": "red"}}), (
        "a key it did not ask about removed"
    )
    assert not passes(**{**asked, "extra": {**asked["extra"], "color": "red"}}), (
        "a key it did not ask about set"
    )
    assert passes(**{**asked, "extra": {**asked["extra"], "size": "L"}}), "the value is the write criterion's"
    assert not passes(**{**asked, "watchers": "b@x.test"}), "the list replaced by a text"


def test_a_list_of_objects_may_gain_only_the_object_the_reference_added():
    """'Add a person column Approver to the list': the columns list held objects and was allowed
    to change whole, so a second column nobody asked for passed; its members are now pinned one
    by one, an object named by its canonical JSON text."""
    approver = {"name": "Approver", "type": "person", "choices": []}
    status = {"name": "Status", "type": "choice", "choices": ["open", "done"]}
    criterion = _preserved(_issues(columns=[status]), _issues(columns=[status, approver]))
    allowed = criterion.allowed_fields["issues.issues"]["i1"]["columns"]
    assert allowed is not None and [json.loads(str(item)) for item in allowed] == [approver]

    def passes(*columns: dict[str, Any]) -> bool:
        return pass_vector([criterion], _issues(columns=list(columns))) == [True]

    assert passes(status, approver)
    assert passes(status, {"type": "person", "choices": [], "name": "Approver"}), "keys in another order"
    assert not passes(status, approver, {"name": "Notes", "type": "text", "choices": []}), "another column"
    assert not passes(approver), "a column it did not ask about removed"
    assert not passes(approver | {"type": "text"}, status), "the asked column's type changed"
    assert not passes({**status, "choices": ["open"]}, approver), "another column edited"


def test_no_accepted_task_lets_an_agent_add_a_column_nobody_asked_for(accepted: list[TaskRecord]):
    """Tasks that add a column: a second one after the reference fails only the state check; with
    the columns allowed whole, as before, it passed every criterion."""
    tasks = [t for t in accepted if any(s.tool == "lists.add_column" for s in t.reference_solution)]
    assert tasks, "no accepted task of seeds 0..59 adds a column"
    for task in tasks:
        env = ComposedEnvironment.from_initial_state(stored_states(task))
        run_reference(env, task.reference_solution, [], task.reference_output)
        added = next(s for s in task.reference_solution if s.tool == "lists.add_column")
        extra = {"listId": added.arguments["listId"], "name": "Private Notes", "type": "text"}
        assert env.call("lists.add_column", extra)["success"]
        preserved = next(c for c in task.criteria if c.kind == "state_preserved")
        passes = pass_vector(task.criteria, env.states, task.reference_output)
        assert [c.id for c, ok in zip(task.criteria, passes) if not ok] == [preserved.id], task.task_id
        assert pass_vector([_columns_whole(task, preserved)], env.states) == [True], task.task_id


def _columns_whole(task: TaskRecord, preserved: Criterion) -> Criterion:
    """`preserved` with a list's columns allowed to change whole (as every list of objects was)."""
    env = ComposedEnvironment.from_initial_state(stored_states(task))
    run_reference(env, task.reference_solution, [], task.reference_output)
    fields = {
        key: {r: {f: None if f == "columns" else items for f, items in a.items()} for r, a in records.items()}
        for key, records in preserved.allowed_fields.items()
    }
    digests = {}
    for key in preserved.preserved:
        service, _, field = key.partition(".")
        value = state_fields(env.states[service]).get(field)
        digests[key] = untouched_digest(value, preserved.allowed.get(key, ()), field, fields.get(key))
    return preserved.model_copy(update={"allowed_fields": fields, "preserved": digests})


def test_a_created_records_text_is_the_tasks_own_and_an_old_criterion_keeps_its_form():
    """A created record is no edit: its text (here the assignee's name) is the agent's to word
    (what else of it is pinned: `test_created_records`)."""
    before = _issues()
    after = _issues()
    after["issues"]["issues"]["i3"] = {"id": "i3", "title": "New", "assignee": "", "status": "open"}
    criterion = _preserved(before, after)
    assert criterion.allowed == {"issues.issues": ["i3"]} and criterion.allowed_fields == {}
    assert "allowed_fields" not in criterion.model_dump(), "criteria without edits dump as before"
    assert "allowed_fields" not in criterion.model_dump_json()
    created = _issues()
    created["issues"]["issues"]["i3"] = {"id": "i3", "title": "New", "assignee": "Bo Kim", "status": "open"}
    assert pass_vector([criterion], created) == [True]
    stored = Criterion.model_validate_json(criterion.model_dump_json())
    assert stored == criterion and pass_vector([stored], after) == [True]


def _record_level_passes(task: TaskRecord, name: str) -> bool:
    (outcome,) = red_team(record_level(task), policies=[get_policy(name)])
    return outcome.broke


@pytest.mark.parametrize("name", ["other-fields", "other-items", "create-extras", "create-options"])
def test_no_accepted_task_rewards_an_agent_that_does_more_to_its_records(
    name: str, accepted: list[TaskRecord]
):
    """No such policy earns anything on an accepted task; on the same tasks with the record-level
    check each broke some, and there the state check is what now fails it."""
    policy = get_policy(name)
    caught = []
    for task in accepted:
        (outcome,) = red_team(task, policies=[policy])
        assert not outcome.broke, task.task_id
        if outcome.moot:  # nothing else to set on its records: it did exactly the task
            continue
        assert outcome.binary == 0.0, task.task_id
        if _record_level_passes(task, name):
            preserved = next(c.id for c in task.criteria if c.kind == "state_preserved")
            assert outcome.failed == [preserved], task.task_id
            caught.append(task.task_id)
    assert caught, "the record-level check was broken on no task: the test proves nothing"
