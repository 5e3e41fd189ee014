"""Links of the curated library: together they call every tool, they start from values a walk
carries, and the checks of the links that decide something reject the wrong decision.

The library-wide tests keep coverage from slipping back (issue 15 wants >= 80% of the tools in
some reference solution of 1,000 composed tasks; `bench/compose_content.py` measures that); the
others are each built to fail one plausible mistake: an action satisfied by a cruder change, a
planting that removes what an earlier link planted, a lookup that finds two records.
"""

from __future__ import annotations

import random

import pytest

from envpipeline.compose.variants import links_of
from envpipeline.rubric import answer_is, pass_vector
from envpipeline.services import vocab
from envpipeline.services.library import calendar
from envpipeline.services.library.calendar import CalendarService, _plant_event_attendee, _plant_uninvite
from envpipeline.services.library.crm import CrmService, _plant_company_city, _plant_log_call
from envpipeline.services.library.maps import MapsService, _plant_route_by_walk, _plant_save_nearer
from envpipeline.services.library.shop import ShopService, _plant_customer_name, _plant_place_order
from envpipeline.services.library.tickets import TicketsService, _plant_email_title
from envpipeline.services.links import execute_planned
from envpipeline.services.registry import all_services

#: The hand-written services of the curated library (expenses and issues are synthesized from MCP
#: specs: their links are derived, see test_mcp_link_coverage.py).
HAND_WRITTEN = sorted(
    name for name, cls in all_services().items() if cls.curated and name not in {"expenses", "issues"}
)
#: Listing tools the composer's discovery step calls before an id is used (`compose.discovery`).
DISCOVERY = {"lists": {"list_lists"}, "mail": {"list_folders"}, "notes": {"list_notebooks"}}
#: Value types a walk commonly carries; a link consuming another type is rarely chosen.
COMMON_TYPES = {"person", "email", "city", "date", "title", "code"}
#: The links that consume a domain code on purpose (test_compose_domains.py pins them).
DOMAIN_CODE_LINKS = {
    ("files", "file_containing_code"),
    ("flights", "booking_passenger"),
    ("flights", "cancel_booking"),
    ("hr", "employee_by_code"),
    ("shop", "order_ship_city"),
    ("shop", "cancel_order"),
    ("tickets", "ticket_requester"),
    ("tickets", "ticket_assignee"),
    ("tickets", "escalate_ticket_by_code"),
    ("weather", "advisory_city_for_code"),
    ("weather", "cancel_advisory_by_code"),
}


def _criteria(plan, service: str):
    return [c.model_copy(update={"service": service}) for c in plan.criteria]


@pytest.mark.parametrize("name", HAND_WRITTEN)
def test_the_links_of_a_service_call_every_one_of_its_tools(name):
    cls = all_services()[name]
    hops, actions = links_of(cls)
    called: set[str] = set()
    for index, link in enumerate((*hops, *actions)):
        rng = random.Random(index)
        plan = link.plant(cls.generate_state(rng), rng, vocab.sample_value(link.consumes, rng))
        called |= {call.tool for call in plan.calls}
    assert set(cls.tools) - called - DISCOVERY.get(name, set()) == set()


@pytest.mark.parametrize("name", HAND_WRITTEN)
def test_links_consume_common_value_types_except_the_domain_code_ones(name):
    rare = {(name, x.name) for x in all_services()[name].links() if x.consumes not in COMMON_TYPES}
    assert rare <= DOMAIN_CODE_LINKS


def test_uninvite_is_not_satisfied_by_deleting_the_event():
    service = CalendarService(CalendarService.generate_state(random.Random(1)))
    plan = _plant_uninvite(service.state, random.Random(2), "guest.one@example.com")
    found = execute_planned(service, plan.calls[:1], None)
    event_id = found[0]["data"]["events"][0]["id"]
    service.call("delete_event", {"eventId": event_id})
    assert not all(pass_vector(_criteria(plan, "calendar"), {"calendar": service.state}))


def test_fresh_titles_keep_events_planted_earlier_in_the_task(monkeypatch):
    state = CalendarService.generate_state(random.Random(3))
    hop = _plant_event_attendee(state, random.Random(4), "Cannot access Vendor Review Amber")
    titles = iter(["Vendor Review Amber", "Budget Sync Onyx"])  # the first draw is inside the hop's title
    monkeypatch.setattr(calendar.vocab, "title", lambda rng: next(titles))
    plan = _plant_uninvite(state, random.Random(5), "guest@example.com")
    assert plan.calls[0].arguments["query"] == "Budget Sync Onyx"
    observations = execute_planned(CalendarService(state), hop.calls, "Cannot access Vendor Review Amber")
    assert observations[-1]["data"]["events"][0]["attendees"][0] == hop.output


def test_a_later_contact_never_reuses_an_email_a_hop_planted():
    state = CrmService.generate_state(random.Random(5))
    email = "yara.iversen@tyrell.test"
    hop = _plant_company_city(state, random.Random(6), email)
    for seed in range(30):
        _plant_log_call(state, random.Random(seed), "Yara Iversen")
    observations = execute_planned(CrmService(state), hop.calls, email)
    assert len(observations[0]["data"]["contacts"]) == 1
    assert observations[-1]["data"]["company"]["city"] == hop.output


@pytest.mark.parametrize("seed", range(6))
def test_route_mode_follows_the_walking_time(seed):
    service = MapsService(MapsService.generate_state(random.Random(seed)))
    plan = _plant_route_by_walk(service.state, random.Random(seed + 100), "Lisbon")
    observations = execute_planned(service, plan.calls[:3], "Lisbon")
    minutes = observations[2]["data"]["durationMin"]
    assert plan.calls[3].arguments["mode"] == ("walking" if minutes <= 30 else "transit")
    other = "transit" if plan.calls[3].arguments["mode"] == "walking" else "walking"
    ids = {
        k: observations[i]["data"]["places"][0]["id"]
        for k, i in (("originPlaceId", 0), ("destinationPlaceId", 1))
    }
    day = plan.calls[3].arguments["date"]
    service.call("save_route", {**ids, "mode": other, "date": day})
    assert not all(pass_vector(_criteria(plan, "maps"), {"maps": service.state}))


def test_saving_the_farther_place_fails():
    service = MapsService(MapsService.generate_state(random.Random(1)))
    plan = _plant_save_nearer(service.state, random.Random(2), "Budget Sync Onyx")
    observations = execute_planned(service, plan.calls[:5], "Budget Sync Onyx")
    distances = [observations[3]["data"]["distanceKm"], observations[4]["data"]["distanceKm"]]
    farther = 1 + distances.index(max(distances))
    far_id = observations[farther]["data"]["places"][0]["id"]
    service.call("save_place", {"placeId": far_id, "label": "Budget Sync Onyx"})
    assert not all(pass_vector(_criteria(plan, "maps"), {"maps": service.state}))


def test_a_new_customer_never_reuses_an_email_a_hop_planted():
    state = ShopService.generate_state(random.Random(5))
    email = "rosa.tanaka@tyrell.test"
    hop = _plant_customer_name(state, random.Random(6), email)
    for seed in range(30):
        _plant_place_order(state, random.Random(seed), "Rosa Tanaka")
    observations = execute_planned(ShopService(state), hop.calls, email)
    assert len(observations[0]["data"]["customers"]) == 1
    assert observations[0]["data"]["customers"][0]["name"] == hop.output


def test_a_ticket_subject_is_one_plain_title_as_a_final_answer():
    state = TicketsService.generate_state(random.Random(3))
    hop = _plant_email_title(state, random.Random(4), "ana.silva@example.com")
    assert answer_is(f"The title you asked for is {hop.output}.", hop.output, "title", 200)
