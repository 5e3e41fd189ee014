"""Derived links reach get, update and delete tools and simulated reads keyed by an id."""

from __future__ import annotations

import random

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
