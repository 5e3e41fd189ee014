"""Derived link variants and coverage-aware choice: more of the library's tools in reference solutions."""

from __future__ import annotations

import random
import re
from collections import Counter

from envpipeline.compose.variants import detail_variant, link_weights, links_of, weighted_order
from envpipeline.services import vocab
from envpipeline.services.links import Hop, HopPlan, PlannedCall, execute_planned, read_path
from envpipeline.services.mcp_crud_links import say
from envpipeline.services.registry import all_services, get_service


def test_detail_variants_open_the_record_and_reveal_the_same_value():
    derived = 0
    for name, cls in all_services().items():
        hops, _ = links_of(cls)
        for hop in (h for h in hops if "_via_get_" in h.name):
            derived += 1
            rng = vocab.seeded(f"t:{name}:{hop.name}")
            state = cls.generate_state(rng)
            value = vocab.sample_value(hop.consumes, rng)
            plan = hop.plant(state, rng, value)
            assert plan.calls[-1].tool.startswith("get_"), hop.name
            observations = execute_planned(cls(state), plan.calls, value)
            assert all(o.get("success") for o in observations), (name, hop.name, observations)
            assert str(read_path(observations[-1]["data"], plan.calls[-1].reveals or ())) == plan.output
    assert derived >= 40


def test_a_variant_that_would_not_run_is_left_out():
    """A hop whose revealed record has no matching get tool (or whose get breaks) gets no variant."""
    flights = get_service("flights")
    broken = Hop("flight_date_broken", "city", "date", _plant_wrong_path)
    assert detail_variant(flights, broken) is None


def _plant_wrong_path(state, rng: random.Random, value: str) -> HopPlan:
    call = PlannedCall("search_flights", {}, reveals=("flights", 0, "no_such_field"))
    return HopPlan([call], "2026-01-01", "search the flights")


def test_weights_prefer_links_with_rare_tools():
    weights = link_weights(get_service("flights"))
    assert set(weights) >= {"booking_passenger", "flight_to_city_date_via_get_flight"}
    assert max(weights.values()) > min(weights.values())


def test_weighted_order_is_seeded_and_favours_heavy_items():
    items = ["light", "heavy"]
    firsts = Counter(weighted_order(items, [1.0, 5.0], random.Random(s))[0] for s in range(400))
    assert firsts["heavy"] > 3 * firsts["light"]
    assert weighted_order(items, [1.0, 5.0], random.Random(7)) == weighted_order(
        items, [1.0, 5.0], random.Random(7)
    )


def test_every_hop_reads_as_a_relation_not_as_its_link_name():
    """A derived variant (``..._via_get_trip``) keeps its base hop's relation, also one derived from
    the base hop's name: before, it read "the date that trip traveler email to start date via get
    trip gives for ..." in 62 of 300 default instructions. Nor is a relation parsed out of a link's
    name: a get by id read "the traveler email of the get whose trip is ..." (Travel Expenses'
    ``get_trip``, 7 of 300 default instructions), Motion's lookup by name "the date that task name
    to due date gives for ...", a simulated read "the reference code that lookup per diem lookup
    gives for ..."."""
    for name, cls in all_services().items():
        hops, _ = links_of(cls)
        for hop in hops:
            relation = hop.relation_of("KNOWN")
            assert "KNOWN" in relation, (name, hop.name, relation)
            unquoted = re.sub(r"'[^']*'", "", relation)  # a quoted tool name may hold an underscore
            assert "_" not in unquoted, (name, hop.name, relation)
            if "_to_" in hop.name or hop.name.endswith("_lookup"):  # a derived link's name
                assert say(hop.name) not in relation, (name, hop.name, relation)
            assert not re.search(r"\bof the (get|fetch|retrieve)\b", relation), (
                name,
                hop.name,
                relation,
            )
            if not cls.curated:
                continue
            assert " via " not in relation, (name, hop.name, relation)
            if "_via_" in hop.name:
                base = next(h for h in hops if h.name == hop.name.split("_via_")[0])
                assert relation == base.relation_of("KNOWN"), (name, hop.name)
