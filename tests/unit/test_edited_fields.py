"""A composed task pins the fields of a record it edits that the request leaves alone.

"Set the assignee of issue 'issue_01' to Tara Ortiz" was passed by an agent that also closed the
issue, renamed it and lowered its priority: `state_preserved` let a record the reference edits
change whole. 18 of 110 accepted curated tasks of seeds 0-119 (and 11 of 120 whole-library ones)
gave that agent (`other-fields`) full reward.
"""

from __future__ import annotations

from typing import Any

from envpipeline.models.task import Criterion, TaskRecord
from envpipeline.redteam.compose import red_team
from envpipeline.redteam.registry import get_policy
from envpipeline.rubric import pass_vector, preservation_of
from tests.unit.edited_records import record_level


def _issues(**first: Any) -> dict[str, Any]:
    record = {"id": "i1", "title": "Launch plan", "assignee": "Ana Li", "status": "open", "priority": "high"}
    other = {"id": "i2", "title": "Budget", "assignee": "Bo Kim", "status": "open", "priority": "low"}
    return {"issues": {"issues": {"i1": {**record, **first}, "i2": other}}}


def _preserved(before: dict[str, Any], after: dict[str, Any]) -> Criterion:
    preserved, allowed, allowed_fields = preservation_of(before, after)
    return Criterion(
        id="c9",
        description="nothing else changed",
        kind="state_preserved",
        preserved=preserved,
        allowed=allowed,
        allowed_fields=allowed_fields,
    )


def test_an_edited_record_may_change_only_in_the_fields_the_reference_changed():
    criterion = _preserved(_issues(), _issues(assignee="Tara Ortiz"))
    assert criterion.allowed == {"issues.issues": ["i1"]}
    assert criterion.allowed_fields == {"issues.issues": {"i1": ["assignee"]}}

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


def test_a_created_record_is_the_tasks_own_and_an_old_criterion_keeps_its_form():
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


def _record_level_passes(task: TaskRecord) -> bool:
    (outcome,) = red_team(record_level(task), policies=[get_policy("other-fields")])
    return outcome.broke


def test_no_accepted_task_rewards_an_agent_that_edits_other_fields_of_its_record(accepted: list[TaskRecord]):
    """The `other-fields` policy earns nothing on an accepted task; on the same tasks with the
    record-level check it broke several, and there the state check is what now fails it."""
    policy = get_policy("other-fields")
    caught = []
    for task in accepted:
        (outcome,) = red_team(task, policies=[policy])
        assert not outcome.broke, task.task_id
        if outcome.moot:  # nothing else to set on its records: it did exactly the task
            continue
        assert outcome.binary == 0.0, task.task_id
        if _record_level_passes(task):
            preserved = next(c.id for c in task.criteria if c.kind == "state_preserved")
            assert outcome.failed == [preserved], task.task_id
            caught.append(task.task_id)
    assert len(caught) >= 3, f"the record-level check was broken on {len(caught)} tasks only"
