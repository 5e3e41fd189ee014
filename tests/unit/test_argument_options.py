"""Which tool arguments take one of a few options (`envpipeline.services.options`)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from envpipeline.services.options import argument_options, option_arguments, write_options
from envpipeline.services.registry import all_services


class _Args(BaseModel):
    priority: Annotated[str, Field(description="low, normal, high or urgent")] = "normal"
    status: Literal["open", "closed"] | None = None
    kind: Annotated[str, Field(description="call, email, or meeting.")] = "call"
    notes: Annotated[str, Field(description="notes or description")] = ""
    title: Annotated[str, Field(description="free text")] = ""
    size: int = 1


def test_an_option_is_a_literal_or_a_description_that_only_lists_three_values_or_more():
    fields = _Args.model_fields
    assert argument_options(fields["priority"]) == ("low", "normal", "high", "urgent")
    assert argument_options(fields["status"]) == ("open", "closed")
    assert argument_options(fields["kind"]) == ("call", "email", "meeting")
    assert argument_options(fields["notes"]) is None, "two words joined by 'or' are no list of options"
    assert argument_options(fields["title"]) is None
    assert argument_options(fields["size"]) is None
    assert option_arguments(_Args) == {"priority", "status", "kind"}


def test_a_services_options_are_its_write_tools():
    from envpipeline.services.library.tickets import TicketsService

    options = write_options(TicketsService.tools.values())
    assert "priority" in options
    reads = [t for t in TicketsService.tools.values() if not t.writes]
    assert reads and write_options(reads) == frozenset(), "a read's filter holds nothing it creates"


def test_every_registered_option_has_its_default_among_its_values():
    """The contract the red team relies on (`create-options` sets another value than the default)
    and the services' descriptions honour: a default outside the listed values would be an
    unlisted option."""
    checked = 0
    for service_class in all_services().values():
        for tool in service_class.tools.values():
            for name in option_arguments(tool.args_model):
                info = tool.args_model.model_fields.get(name)
                values = argument_options(info) if info is not None else None
                if info is None or values is None or info.is_required() or info.default is None:
                    continue
                assert str(info.default) in values, (service_class.__name__, tool.name, name)
                checked += 1
    assert checked >= 5, "no curated option with a default was found: the test proves nothing"
