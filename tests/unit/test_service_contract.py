"""Generated service tests: every registered tool (normal invocation, error handling) and link."""

from __future__ import annotations

import pytest

from envpipeline.services import contract
from envpipeline.services.registry import all_services

SERVICES = all_services()
TOOL_CASES = [(s, t) for s, cls in SERVICES.items() for t in cls.tools]
LINK_CASES = [(s, i) for s, cls in SERVICES.items() for i in range(len(cls.links()))]
REQUIRED = {
    "calendar",
    "mail",
    "chat",
    "forum",
    "lists",
    "weather",
    "maps",
    "crm",
    "hr",
    "tickets",
    "banking",
    "shop",
    "flights",
    "notes",
    "files",
    "todo",
}


def test_library_covers_the_required_domains_and_size():
    assert set(SERVICES) >= REQUIRED, f"missing services: {REQUIRED - set(SERVICES)}"
    assert len(SERVICES) >= 16
    assert sum(len(c.tools) for c in SERVICES.values()) >= 150


@pytest.mark.parametrize("service_name", sorted(SERVICES))
def test_initial_state_is_deterministic_and_examples_cover_every_tool(service_name):
    assert contract.check_state_generator(SERVICES[service_name]) == []


@pytest.mark.parametrize(("service_name", "tool_name"), TOOL_CASES)
def test_tool_normal_invocation(service_name, tool_name):
    assert contract.check_normal_invocation(SERVICES[service_name], tool_name) == []


@pytest.mark.parametrize(("service_name", "tool_name"), TOOL_CASES)
def test_tool_error_handling(service_name, tool_name):
    assert contract.check_error_handling(SERVICES[service_name], tool_name) == []


@pytest.mark.parametrize(("service_name", "index"), LINK_CASES)
def test_links_reveal_their_value_and_satisfy_their_criteria(service_name, index):
    assert contract.check_link(SERVICES[service_name], index) == []
