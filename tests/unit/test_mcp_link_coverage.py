"""Derived links reach get, update and delete tools and simulated reads keyed by an id."""

from __future__ import annotations

import random

from envpipeline.rubric import pass_vector
from envpipeline.services import vocab
from envpipeline.services.contract import check_link, check_service
from envpipeline.services.library.imported import load_spec
from envpipeline.services.links import Action, Hop
from envpipeline.services.mcp_import import synthesize_service


def planted_tools(cls):
    tools = {}
    for index, link in enumerate(cls.links()):
        rng = random.Random(index)
        plan = link.plant(cls.generate_state(random.Random(3)), rng, vocab.sample_value(link.consumes, rng))
        for call in plan.calls:
            tools.setdefault(call.tool, set()).add(type(link).__name__)
    return tools


def test_get_update_and_delete_tools_take_part_in_links_that_pass_the_contract():
    cls = synthesize_service("issues_cov", load_spec("issue_tracker.json"))
    tools = planted_tools(cls)
    assert tools["get_issue"] == {"Hop"}
    assert tools["update_issue"] == {"Action"}
    assert tools["delete_issue"] == {"Action"}
    for index, link in enumerate(cls.links()):
        assert check_link(cls, index) == [], link.name


def test_delete_action_criterion_fails_before_and_passes_after():
    cls = synthesize_service("issues_del", load_spec("issue_tracker.json"))
    index, link = next((i, link) for i, link in enumerate(cls.links()) if link.name == "delete_issue_by_id")
    assert isinstance(link, Action) and link.consumes == "code"
    assert check_link(cls, index) == []


def test_simulated_read_keyed_by_an_id_is_a_hop_and_registers_the_id():
    spec = {
        "tools": [
            {
                "name": "peek_shipment",
                "description": "tracking status of a shipment",
                "inputSchema": {
                    "type": "object",
                    "properties": {"shipmentId": {"type": "string"}, "verbose": {"type": "boolean"}},
                    "required": ["shipmentId"],
                },
            }
        ]
    }
    cls = synthesize_service("parcels", spec)
    (link,) = cls.links()
    assert isinstance(link, Hop) and link.consumes == "code"
    state = cls.generate_state(random.Random(1))
    plan = link.plant(state, random.Random(2), "SHP-1234")
    assert "SHP-1234" in state.simulated.known["shipment_id"]
    service = cls(state)
    assert service.call("peek_shipment", {"shipmentId": "SHP-1234"})["data"]["result"] == plan.output
    assert check_service(cls) == []


def _desk():
    """A help desk of integer-id tickets (a carried value is text, never such an id) and customers
    searched by the fields they filter on (no query argument)."""
    text, number = {"type": "string"}, {"type": "integer"}

    def tool(name, properties=None, required=()):
        schema = {"type": "object", "properties": properties or {}, "required": list(required)}
        return {"name": name, "description": name.replace("_", " "), "inputSchema": schema}

    cls = synthesize_service(
        "desk_cov",
        [
            tool(
                "create_ticket",
                {"subject": text, "requesterEmail": {"type": "string", "format": "email"}},
                ["subject"],
            ),
            tool("list_tickets", {"limit": number}),
            tool("get_ticket", {"ticket_id": number}, ["ticket_id"]),
            tool("delete_ticket", {"ticket_id": number}, ["ticket_id"]),
            tool("update_ticket", {"ticket_id": number, "subject": text}, ["ticket_id"]),
            tool("create_customer", {"display_name": text, "email": {"type": "string", "format": "email"}}),
            tool("get_customer", {"id": text}, ["id"]),
            tool("search_customers", {"display_name": text, "email": text}),
            tool("search_help_articles", {"question": text}, ["question"]),
        ],
    )
    cls.curated = False
    return cls


def test_a_delete_by_an_integer_id_finds_the_record_by_a_value_and_deletes_that_one():
    cls = _desk()
    links = {link.name: (index, link) for index, link in enumerate(cls.links())}
    assert {"delete_ticket_by_subject", "delete_ticket_by_requesterEmail"} <= set(links)
    index, link = links["delete_ticket_by_subject"]
    assert isinstance(link, Action) and link.consumes == "title"
    assert check_link(cls, index) == []
    state = cls.generate_state(random.Random(1))
    plan = link.plant(state, random.Random(2), "Quarterly Ledger Maple")
    listing, removal = plan.calls
    assert (listing.tool, removal.tool) == ("list_tickets", "delete_ticket")
    assert removal.bind == {"ticket_id": (0, listing.reveals)}, "the id comes from the listing"
    assert plan.phrase.endswith("delete the ticket whose subject is that title")
    criteria = [c.model_copy(update={"service": cls.name}) for c in plan.criteria]
    planted = next(r for r, t in state.tickets.items() if t.subject == "Quarterly Ledger Maple")
    other = next(r for r in state.tickets if r != planted)
    wrong = cls(state.model_copy(deep=True))
    assert wrong.call("delete_ticket", {"ticket_id": other})["success"]
    assert pass_vector(criteria, {cls.name: wrong.state}) == [False], "deleting another ticket fails"
    right = cls(state.model_copy(deep=True))
    assert right.call("delete_ticket", {"ticket_id": planted})["success"]
    assert pass_vector(criteria, {cls.name: right.state}) == [True]


def test_a_search_without_a_query_argument_finds_records_by_the_fields_it_filters_on():
    cls = _desk()
    hops = [(i, link) for i, link in enumerate(cls.links()) if link.name.startswith("search_customers_")]
    assert {link.name for _, link in hops} == {
        "search_customers_display_name_to_id",
        "search_customers_email_to_id",
    }
    for index, link in hops:
        assert check_link(cls, index) == [], link.name
    assert not [link for link in cls.links() if link.name.startswith("search_help_articles")], (
        "a search that filters on no field of its records (a question) finds nothing by a value"
    )
    plan = hops[1][1].plant(cls.generate_state(random.Random(1)), random.Random(2), "ada@example.org")
    (call,) = plan.calls
    assert call.inputs == {"email": "{value}"}, "the value is the search's filter"


def test_two_updates_of_one_tool_in_a_task_change_two_records():
    """Outside the curated services an update plants a record of its own; on the first record whose
    field differed, a second update of the same tool renamed the record the first had renamed,
    and the reference failed its own first criterion (Jira's sprint_1, ClickUp's comment_1)."""
    cls = _desk()
    link = next(link for link in cls.links() if link.name == "update_ticket_subject")
    state = cls.generate_state(random.Random(1))
    rng = random.Random(2)
    plans = [link.plant(state, rng, value) for value in ("Quarterly Ledger Maple", "Office Move Lumen")]
    (first,), (second,) = (plan.calls for plan in plans)
    assert first.arguments["ticket_id"] != second.arguments["ticket_id"]
    service = cls(state)
    for plan in plans:
        (call,) = plan.calls
        assert service.call(call.tool, call.arguments)["success"]
    criteria = [c.model_copy(update={"service": cls.name}) for plan in plans for c in plan.criteria]
    assert pass_vector(criteria, {cls.name: service.state}) == [True, True]
