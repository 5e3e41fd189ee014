"""Values the importer samples for records, simulated answers and the constants a request states:
read like what they name, short enough to state, never a machine bound."""

from __future__ import annotations

import random
import re

from envpipeline.compose.author import ComposeConfig, draft_task
from envpipeline.services.mcp_spec import noun_of
from envpipeline.services.mcp_values import few_values, lean, sample, stated_sample
from envpipeline.services.registry import all_services


def test_named_strings_read_like_what_they_name():
    rng = random.Random(3)
    contact = {
        "type": "object",
        "properties": {p: {"type": "string"} for p in ("phone", "zip", "address1", "country", "since")},
    }
    row = sample(contact, rng)
    assert re.fullmatch(r"\+1 555 \d{3} \d{4}", row["phone"])
    assert re.fullmatch(r"\d{5}", row["zip"])
    assert row["address1"].endswith(" Street")
    assert re.fullmatch(r"2026-\d\d-\d\dT\d\d:\d\d:00Z", row["since"])
    assert sample({"type": "string"}, rng, "ip_address").startswith("10.")  # an IP, not a street
    # drawn from a few (a country, an interval): guessed in a few tries, so no hop reveals one
    assert few_values("country", {"type": "string"}) and few_values("interval", {"type": "string"})
    assert not few_values("phone", {"type": "string"}) and not few_values("lead", {"type": "string"})


def test_a_machine_bound_is_not_sampled_as_a_range():
    """zod writes ``maximum: 2**53 - 1`` for any integer: a limit of 3485115024022118 is no
    request anyone makes."""
    schema = {"type": "integer", "minimum": 0, "maximum": 2**53 - 1}
    values = [sample(schema, random.Random(s), "numCandidates") for s in range(50)]
    assert max(values) <= 10
    assert sample({"type": "integer", "minimum": 1, "maximum": 50}, random.Random(0), "x") <= 50


def test_a_stated_value_keeps_required_properties_and_one_item():
    line = {
        "type": "object",
        "properties": {p: {"type": "string"} for p in ("amount", "detail", "description", "memo", "class")},
        "required": ["amount", "detail"],
    }
    schema = {"type": "array", "items": line, "minItems": 1}
    assert lean(schema)["maxItems"] == 1 and set(lean(schema)["items"]["properties"]) == {"amount", "detail"}
    (item,) = stated_sample(schema, random.Random(1), "line_items")
    assert set(item) == {"amount", "detail"}
    two = stated_sample({**schema, "minItems": 2}, random.Random(1), "line_items")
    assert len(two) == 2  # a minimum is kept
    loose = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}
    assert set(stated_sample(loose, random.Random(1))) == {"a", "b"}  # none required: all stated


def test_whole_library_requests_state_short_constants():
    """Over 60 whole-library drafts, no stated constant runs past 240 characters (QuickBooks'
    invoice lines stated all eleven fields of three items; MongoDB's explain three pipelines)."""
    config = ComposeConfig(library_scope="all")
    longest = 0
    for seed in range(60):
        draft = draft_task(seed, config)
        for step in draft.steps:
            for arg, value in step.arguments.items():
                if arg not in step.bindings and isinstance(value, (dict, list)):
                    longest = max(longest, len(str(value)))
    assert 0 < longest <= 240


def test_a_record_is_named_as_a_sentence_names_it():
    assert noun_of("bgp_timeseries") == "bgp_timeseries"
    assert noun_of("project_statuses") == "project_status"
    assert noun_of("contact_aliases") == "contact_alias"
    assert noun_of("indices") == "index"
    assert noun_of("expenses") == "expense" and noun_of("categories") == "category"
    nouns = all_services()["cloudflare_radar"].nouns
    assert nouns["bgp_rpki_aspa_timeseries"] == "bgp_rpki_aspa_timeseries"
