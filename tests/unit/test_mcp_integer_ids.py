"""Imported collections whose ids are JSON integers (Freshdesk's ``ticket_id``, Affinity's ``person_id``)."""

from __future__ import annotations

import random

from envpipeline.services.base import next_int_id
from envpipeline.services.contract import check_service
from envpipeline.services.mcp_import import synthesize_service
from envpipeline.services.mcp_spec import classify, parse_tools_list

S = {"type": "string"}
I = {"type": "integer"}  # noqa: E741


def t(name, properties=None, required=()):
    schema = {"type": "object", "properties": properties or {}, "required": list(required)}
    return {"name": name, "description": f"{name} tool", "inputSchema": schema}


#: A help desk whose tickets have integer ids everywhere; notes point at tickets.
HELPDESK = [
    t("create_ticket", {"subject": S, "requesterEmail": S}, ["subject"]),
    t("get_ticket", {"ticket_id": I}, ["ticket_id"]),
    t("update_ticket", {"ticket_id": I, "subject": S}, ["ticket_id"]),
    t("delete_ticket", {"ticket_id": I}, ["ticket_id"]),
    t("list_tickets"),
    t("add_note", {"ticket_id": I, "body": S}, ["ticket_id", "body"]),
]


def records(state, collection: str) -> dict:
    """One collection of a synthesized state (its fields are made at run time)."""
    return getattr(state, collection)


def helpdesk():
    cls = synthesize_service("helpdesk_int", {"tools": HELPDESK})
    return cls(cls.generate_state(random.Random(3)))


def test_integer_ids_make_get_update_delete_typed_tools():
    shapes = {s.spec.name: s for s in classify(parse_tools_list(HELPDESK))}
    assert [(shapes[n].op, shapes[n].id_arg) for n in ("get_ticket", "update_ticket", "delete_ticket")] == [
        ("get", "ticket_id"),
        ("update", "ticket_id"),
        ("delete", "ticket_id"),
    ]
    assert shapes["add_note"].refs == {"ticket_id": "tickets"}


def test_create_mints_an_integer_id_that_get_update_and_delete_accept():
    service = helpdesk()
    ids = sorted(records(service.state, "tickets"))
    assert all(type(i) is int for i in ids)
    created = service.call("create_ticket", {"subject": "Printer on fire"})
    rid = created["data"]["ticket"]["id"]
    assert rid == ids[-1] + 1
    assert service.call("get_ticket", {"ticket_id": rid})["data"]["ticket"]["subject"] == "Printer on fire"
    updated = service.call("update_ticket", {"ticket_id": rid, "subject": "Printer fixed"})
    assert updated["data"]["ticket"] == {"id": rid, "subject": "Printer fixed", "requesterEmail": None}
    listed = service.call("list_tickets", {})["data"]["tickets"]
    assert [r["id"] for r in listed] == [*ids, rid]
    assert service.call("delete_ticket", {"ticket_id": rid})["data"] == {"deleted": rid}
    assert service.call("get_ticket", {"ticket_id": rid})["error"]["code"] == 404


def test_unknown_integer_ids_are_404_and_strings_are_400():
    service = helpdesk()
    assert service.call("get_ticket", {"ticket_id": 999})["error"] == {
        "code": 404,
        "message": "ticket '999' not found",
    }
    assert service.call("add_note", {"ticket_id": 999, "body": "hi"})["error"]["code"] == 404
    assert service.call("delete_ticket", {"ticket_id": "ticket_1"})["error"]["code"] == 400
    assert service.call("add_note", {"ticket_id": 1, "body": "hi"})["success"]


def test_integer_id_service_passes_its_contract_and_round_trips_as_json():
    service = helpdesk()
    cls = type(service)
    assert check_service(cls) == []
    dumped = service.state.model_dump(mode="json")
    assert cls.state_model.model_validate(dumped) == service.state
    names = [link.name for link in cls.links()]
    assert "update_ticket_subject" in names  # an update picks a ticket by its integer id
    assert not [n for n in names if n.startswith(("get_ticket", "delete_ticket"))]  # a code is no integer


def test_a_collection_whose_tools_disagree_on_the_id_type_keeps_string_ids():
    mixed = [
        t("create_ticket", {"subject": S}, ["subject"]),
        t("get_ticket", {"ticket_id": I}, ["ticket_id"]),
        t("add_comment", {"ticket_id": S, "body": S}, ["ticket_id", "body"]),
        t("create_note", {"body": S}, ["body"]),
        t("get_note", {"note_id": I}, ["note_id"]),
    ]
    shapes = {s.spec.name: s for s in classify(parse_tools_list(mixed))}
    assert shapes["get_ticket"].simulated  # a string ticket_id elsewhere: tickets keep string ids
    assert shapes["add_comment"].refs == {"ticket_id": "tickets"}
    assert (shapes["get_note"].op, shapes["get_note"].id_arg) == ("get", "note_id")  # notes agree
    cls = synthesize_service("mixed_ids", {"tools": mixed})
    state = cls.generate_state(random.Random(1))
    assert all(type(i) is str for i in records(state, "tickets"))
    assert all(type(i) is int for i in records(state, "notes"))


def test_next_int_id_is_one_past_the_largest():
    assert next_int_id({}) == 1
    assert next_int_id({1: "a", 4: "b"}) == 5


def test_a_collection_named_only_by_its_creates_integer_id_takes_integer_ids():
    """The id type is decided once (by `classify`): a create with an integer ``id`` and a list, no
    other tool naming the collection, gives integer ids the create accepts."""
    cls = synthesize_service(
        "inttickets",
        {
            "tools": [
                t("create_ticket", {"id": I, "subject": S}, ["subject"]),
                t("list_tickets"),
            ]
        },
    )
    service = cls(cls.generate_state(random.Random(0)))
    assert service.call("create_ticket", {"id": 77, "subject": "x"})["data"]["ticket"]["id"] == 77
    assert all(type(t["id"]) is int for t in service.call("list_tickets", {})["data"]["tickets"])
