"""A composed task pins the record it creates, but for its text.

"Create an event 'Vendor Review' on 2026-06-15" passed for an agent that also invited an outsider
to it, and an imported service's simulated "create a shared link" for one that also let anyone
edit through it: `state_preserved` let a record the task creates be anything. Before, 18 of 110
accepted curated tasks of seeds 0-119 (and 81 of 120 whole-library ones, most through a simulated
tool's flags) gave full reward to `create-extras`. Then "open an issue titled X" passed for one
that opened it closed and urgent (an option is text to a record): `create-options` broke 14 of 110
curated and 15 of 60 whole-library tasks (seeds 0-59) until a created record's options were held
as values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from envpipeline.models.task import Criterion, TaskRecord
from envpipeline.redteam.compose import red_team
from envpipeline.redteam.registry import get_policy
from envpipeline.rubric import SIMULATED_FIELD, pass_vector, preservation_of
from tests.unit.edited_records import options_as_text, record_level

EVENT = {
    "id": "evt_3",
    "summary": "Vendor Review",
    "description": "",
    "start": "2026-06-15T10:00",
    "attendees": ["noor.kim@acme.test"],
    "private": False,
    "reminder": 15,
    "room": None,
    "ownerId": None,
}


def _calendar(*created: dict[str, Any], cities: tuple[str, ...] = ("Lima",)) -> dict[str, Any]:
    events = {"evt_1": {**EVENT, "id": "evt_1", "summary": "Standup", "attendees": []}}
    events.update({e["id"]: e for e in created})
    return {"calendar": {"events": events, "cities": list(cities)}}


def _preserved(
    before: dict[str, Any], after: dict[str, Any], options: dict[str, set[str]] | None = None
) -> Criterion:
    return Criterion(
        id="c9",
        description="nothing else changed",
        kind="state_preserved",
        **preservation_of(before, after, options)._asdict(),
    )


def _passes(criterion: Criterion, state: dict[str, Any]) -> bool:
    return pass_vector([criterion], state) == [True]


def test_a_created_record_may_differ_from_the_references_only_in_its_text():
    criterion = _preserved(_calendar(), _calendar(EVENT))
    assert {k: list(v) for k, v in criterion.created.items()} == {"calendar.events": ["evt_3"]}
    assert criterion.allowed == {"calendar.events": ["evt_3"]}

    def passes(**fields: Any) -> bool:
        return _passes(criterion, _calendar({**EVENT, **fields}))

    assert passes()
    assert passes(summary="vendor review"), "a title is the write criterion's to check"
    assert passes(description="Quarterly review with the vendor"), "a description is the agent's to word"
    assert passes(attendees=["Noor.Kim@acme.test "]), "an address in another case"
    assert not passes(attendees=["noor.kim@acme.test", "outsider@elsewhere.example"]), "an outsider invited"
    assert not passes(attendees=[]), "the asked attendee left out"
    assert not passes(private=True), "a flag nobody asked for"
    assert not passes(reminder=60), "a number nobody asked for"
    assert not passes(room=4), "an empty field filled with a number"
    assert passes(room="Room 4"), "an empty field filled with text: an optional description"
    assert not passes(ownerId="usr_3"), "a link nobody asked for"
    assert not passes(color=3), "a field added"
    assert _passes(criterion, _calendar()), "not created: the write criterion's to miss, nothing else changed"
    second = {**EVENT, "id": "evt_4"}
    assert not _passes(criterion, _calendar(EVENT, second)), "created twice"


def test_records_created_in_the_other_order_may_swap_their_ids():
    """Two asked events created the other way round get each other's ids: each must still be one
    of the pinned records, each pin taken once."""
    second = {**EVENT, "id": "evt_4", "summary": "Retro", "private": True, "attendees": []}
    criterion = _preserved(_calendar(), _calendar(EVENT, second))
    swapped = ({**second, "id": "evt_3"}, {**EVENT, "id": "evt_4"})
    assert _passes(criterion, _calendar(*swapped))
    assert not _passes(criterion, _calendar({**second, "id": "evt_3"}, {**second, "id": "evt_4"})), (
        "one pin taken twice: the first event created private with nobody invited"
    )


def test_a_created_lists_members_are_pinned_in_any_order_and_nested_objects_by_their_keys():
    event = {**EVENT, "attendees": ["a@x.test", "b@x.test"], "extra": {"size": "S", "tags": ["x"]}}
    criterion = _preserved(_calendar(), _calendar(event))

    def passes(**fields: Any) -> bool:
        return _passes(criterion, _calendar({**event, **fields}))

    assert passes(attendees=["b@x.test", "a@x.test"]), "the same people in another order"
    assert passes(extra={"size": "medium", "tags": ["X"]}), "an object's text, a member's case"
    assert not passes(extra={"size": "S", "tags": ["x"], "owner": "me"}), "a key added to an object"
    assert not passes(extra={"size": "S", "tags": ["x", "y"]}), "a member added to a nested list"


def test_a_created_plain_value_is_pinned_as_a_list_member():
    """A field that is a list of values (subscribed cities) keys them by position: the city added
    is the record, and another city in its place is another value, not other wording."""
    criterion = _preserved(_calendar(), _calendar(cities=("Lima", "Oslo")))
    assert list(criterion.created["calendar.cities"]) == ["1"]
    assert _passes(criterion, _calendar(cities=("Lima", "oslo")))
    assert not _passes(criterion, _calendar(cities=("Lima", "Bergen")))


def _store(*calls: dict[str, Any]) -> dict[str, Any]:
    return {
        "box": {SIMULATED_FIELD: {"known": {"folder_id": ["f1"]}, "records": {"shared_link": list(calls)}}}
    }


def test_a_simulated_call_is_pinned_by_its_tool_and_its_arguments_that_are_not_text():
    """An imported tool with no implementation records each write; its response is the world
    model's, its text arguments the agent's wording, its other arguments what was asked."""
    call = {
        "tool": "create_shared_link",
        "arguments": {"folder_id": "f1", "can_download": True, "note": "for the audit"},
        "response": {"url": "https://box.example/s/1"},
    }
    criterion = _preserved(_store(), _store(call))
    assert list(criterion.created["box.simulated"]) == ["records/shared_link/0"]

    def passes(**arguments: Any) -> bool:
        return _passes(criterion, _store({**call, "arguments": {**call["arguments"], **arguments}}))

    assert passes(note="audit"), "a text argument in other words"
    assert passes(folder_id="F1"), "an id is text: the write criterion checks it"
    assert passes(comment=None), "an argument given as null"
    assert _passes(criterion, _store({**call, "response": {"url": "https://box.example/s/2"}}))
    assert not passes(can_edit=True), "an option nobody asked for"
    assert not passes(can_download=False), "the asked option flipped"
    assert not passes(expires_days=30), "a number nobody asked for"
    assert not _passes(criterion, _store({**call, "tool": "delete_shared_link"})), "another tool"


def test_a_created_records_options_are_held_as_values_in_any_case():
    """A priority or a status is no wording: 'urgent' for 'normal' is another ticket."""
    ticket = {**EVENT, "status": "open", "priority": "normal"}
    criterion = _preserved(_calendar(), _calendar(ticket), {"calendar": {"status", "priority", "kind"}})
    assert criterion.created_options == {"calendar.events": ["priority", "status"]}

    def passes(**fields: Any) -> bool:
        return _passes(criterion, _calendar({**ticket, **fields}))

    assert passes(priority="Normal "), "the same option in another case"
    assert passes(description="Opened for the vendor"), "text is still the agent's"
    assert not passes(priority="urgent"), "another option"
    assert not passes(status="closed"), "created closed"
    as_text = _preserved(_calendar(), _calendar(ticket))
    assert as_text.created_options == {} and "created_options" not in as_text.model_dump()
    assert _passes(as_text, _calendar({**ticket, "status": "closed"})), "without options, text as before"


def test_a_simulated_calls_option_arguments_are_held_as_values():
    call = {
        "tool": "create_cluster",
        "arguments": {"name": "analytics", "tier": "M10", "note": "for the audit"},
        "response": {"id": "c1"},
    }
    criterion = _preserved(_store(), _store(call), {"box": {"tier"}})
    assert criterion.created_options == {"box.simulated": ["tier"]}

    def passes(**arguments: Any) -> bool:
        return _passes(criterion, _store({**call, "arguments": {**call["arguments"], **arguments}}))

    assert passes(note="audit", name="Analytics"), "text arguments in other words"
    assert passes(tier="m10")
    assert not passes(tier="M80"), "a bigger cluster than asked"


def test_a_criterion_made_before_created_records_were_pinned_keeps_its_form_and_verdicts():
    """A stored task's criterion has no `created`: it dumps without it and lets the created record
    be anything, as it did (its task id and its verdicts do not change)."""
    pinned = _preserved(_calendar(), _calendar(EVENT))
    old = pinned.model_copy(update={"created": {}})
    assert "created" not in old.model_dump() and "created" not in old.model_dump_json()
    assert "created" in pinned.model_dump()
    outsider = _calendar({**EVENT, "attendees": [*EVENT["attendees"], "outsider@elsewhere.example"]})
    assert _passes(old, outsider) and not _passes(pinned, outsider)
    assert Criterion.model_validate_json(old.model_dump_json()) == old


@pytest.mark.parametrize(
    ("name", "weaken"), [("create-extras", record_level), ("create-options", options_as_text)]
)
def test_no_accepted_whole_library_task_rewards_unasked_arguments_on_what_it_creates(
    name: str, weaken: Callable[[TaskRecord], TaskRecord], whole_library: list[TaskRecord]
):
    """On imported services (a simulated tool's flags and options among them) neither policy earns
    anything; with the looser check each broke some, and there the state check now fails it."""
    policy = get_policy(name)
    caught = []
    for task in whole_library:
        (outcome,) = red_team(task, policies=[policy])
        assert outcome.binary == 0.0 or outcome.moot, task.task_id
        (loose,) = red_team(weaken(task), policies=[policy])
        if loose.broke:
            preserved = next(c.id for c in task.criteria if c.kind == "state_preserved")
            assert outcome.failed == [preserved], task.task_id
            caught.append(task.task_id)
    assert caught, "the record-level check was broken on no task: the test proves nothing"
