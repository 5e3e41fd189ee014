"""Sources: simulated reads that take no argument start a chain (`mcp_sources`)."""

from __future__ import annotations

import json
import random

from envpipeline.agents.environment import canonical_order
from envpipeline.compose.variants import sources_of
from envpipeline.services.links import HopPlan, Source, read_path
from envpipeline.services.mcp_import import synthesize_service
from envpipeline.services.registry import get_service
from envpipeline.services.summary import library_rows


def _source(service: str, name: str) -> Source:
    return next(s for s in sources_of(get_service(service)) if s.name == name)


def test_a_read_that_takes_no_argument_reveals_a_value_planted_for_the_episode():
    """Alpaca's get_account_info needs nothing the agent knows: planted, the episode's world
    answers the agent's own call (no arguments) with a fresh reference code there."""
    cls = get_service("alpaca")
    source = _source("alpaca", "get_account_info_source")
    state = cls.generate_state(random.Random(3))
    plan = source.plant(state, random.Random(3))
    assert isinstance(plan, HopPlan) and plan.output.startswith("REF-")
    (call,) = plan.calls
    assert call.tool == "get_account_info" and call.arguments == {} and not call.inputs
    answer = cls(canonical_order(state)).call("get_account_info", {})
    assert answer["success"] and str(read_path(answer["data"], call.reveals or ())) == plan.output
    assert "'get_account_info' tool" in plan.phrase and "{of}" not in plan.relation
    assert plan.relation == "the result that the 'get_account_info' tool gives"


def test_the_answer_is_the_episode_s_own_and_optional_arguments_are_left_out():
    """Another episode of the same service answers its own value, so the start cannot be known
    without the read; a read with optional arguments is asked with none, and says so."""
    cls = get_service("alpaca")
    source = _source("alpaca", "get_portfolio_history_source")
    planted, other = cls.generate_state(random.Random(5)), cls.generate_state(random.Random(5))
    plan = source.plant(planted, random.Random(5))
    assert plan.relation.endswith("gives with no arguments") and "with no arguments" in plan.phrase
    (call,) = plan.calls
    unplanted = cls(canonical_order(other)).call("get_portfolio_history", {})
    assert unplanted["success"] and str(read_path(unplanted["data"], call.reveals or ())) != plan.output
    asked_otherwise = cls(canonical_order(planted)).call("get_portfolio_history", {"period": "1M"})
    assert str(read_path(asked_otherwise["data"], call.reveals or ())) != plan.output


_SPEC = {
    "tools": [
        {"name": "get_profile", "description": "The signed-in profile.", "inputSchema": {"type": "object"}},
        {
            "name": "cancel_all_orders",
            "description": "Cancel every open order.",
            "inputSchema": {"type": "object"},
        },
        {
            "name": "get_quote",
            "description": "A quote for one symbol.",
            "inputSchema": {
                "type": "object",
                "properties": {"symbol": {"type": "string"}},
                "required": ["symbol"],
            },
        },
        {
            "name": "get_server_time",
            "description": "The server's clock.",
            "inputSchema": {"type": "object"},
            "outputSchema": {
                "type": "object",
                "properties": {"now": {"type": "string", "format": "date-time"}},
            },
        },
        {"name": "echo_ping", "description": "Answers pong.", "inputSchema": {"type": "object"}},
    ]
}


def test_only_reads_no_hop_serves_with_a_plain_string_answer_are_sources():
    """A write (cancel everything), a read a chain value can be carried into (a quote for a
    symbol: a hop serves it), an answer whose only string has a format (a timestamp: no code fits
    it) and an echo start no chain; curated services keep their link set, with no source."""
    cls = synthesize_service("brokerage", _SPEC, title="Brokerage")
    cls.curated = False
    assert [s.name for s in cls.links() if isinstance(s, Source)] == ["get_profile_source"]
    curated = synthesize_service("brokerage", _SPEC, title="Brokerage")
    curated.curated = True
    assert not [s for s in curated.links() if isinstance(s, Source)]


def test_the_library_table_lists_each_service_s_sources():
    rows = {row["service"]: row for row in library_rows()}
    assert "get_account_info_source:->code" in json.loads(rows["alpaca"]["sources"])
    assert json.loads(rows["calendar"]["sources"]) == []


def test_a_read_no_value_can_be_carried_into_starts_with_constants_the_request_states():
    """Cloudflare Radar's get_ip_details takes an address, which no chain value can be: it starts
    a chain asked for an address the request states; asked about another address the world
    answers otherwise, so the stated constant is part of the question."""
    cls = get_service("cloudflare_radar")
    source = _source("cloudflare_radar", "get_ip_details_source")
    state = cls.generate_state(random.Random(2))
    plan = source.plant(state, random.Random(2))
    (call,) = plan.calls
    address = call.arguments["ip"]
    assert plan.relation == f"the result that the 'get_ip_details' tool gives with ip {address!r}"
    assert f"with ip {address!r}" in plan.phrase
    service = cls(canonical_order(state))
    answer = service.call("get_ip_details", {"ip": address})
    assert answer["success"] and str(read_path(answer["data"], call.reveals or ())) == plan.output
    other = service.call("get_ip_details", {"ip": "10.0.0.1" if address != "10.0.0.1" else "10.0.0.2"})
    assert str(read_path(other["data"], call.reveals or ())) != plan.output
    assert not [s for s in sources_of(get_service("alphavantage")) if s.name == "fx_daily_source"], (
        "a read a hop carries a value into (fx_daily's from_symbol) starts no chain"
    )
    computed = {s.name for s in sources_of(get_service("everything_demo"))}
    assert not computed & {"get-sum_source", "echo_source"}, "a sum or an echo is no record of the world"
