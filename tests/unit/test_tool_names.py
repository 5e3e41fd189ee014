"""Tool names obey the providers' function-name rule and map back to ours."""

from __future__ import annotations

import pytest

from envpipeline.export.tool_names import VALID_TOOL_NAME, ToolNameMap, original_tool_name, safe_tool_name

NAMES = [
    "list_services",
    "calendar.update_event",
    "cli.exec",
    "web.GET /mail",
    "web.POST /shop/cart/{id}",
    "mcp.mail.send",
    "a__b",
    "x" * 80,
    "svc." + "y" * 70,
]


@pytest.mark.parametrize("name", NAMES)
def test_every_safe_name_is_valid_and_maps_back(name: str) -> None:
    safe = safe_tool_name(name)
    assert VALID_TOOL_NAME.match(safe), safe
    assert ToolNameMap(NAMES).original(safe) == name


def test_readable_forms_need_no_table() -> None:
    assert safe_tool_name("calendar.update_event") == "calendar__update_event"
    assert original_tool_name("calendar__update_event") == "calendar.update_event"
    assert safe_tool_name("list_services") == "list_services"


def test_different_names_never_collide() -> None:
    lookalikes = ["web.GET /mail", "web.GET_mail", "web.GET mail", "web.GET//mail", "a.b", "a__b", "a_b"]
    assert len({safe_tool_name(n) for n in lookalikes}) == len(lookalikes)


def test_empty_name_is_rejected() -> None:
    with pytest.raises(ValueError):
        safe_tool_name("")
