"""Coherent workflows: domain codes (bookings, tickets, orders, advisories...) are never consumed as one another."""

from __future__ import annotations

from typing import get_args

from envpipeline.compose.author import ComposeConfig, draft_task
from envpipeline.models.criteria import ValueKind
from envpipeline.rubric import answer_is, mentions
from envpipeline.services import vocab
from envpipeline.services.links import VALUE_NOUNS, VALUE_PHRASES, VALUE_TYPES, Action, Hop
from envpipeline.services.registry import get_service

PREFIXES = {**vocab.CODE_PREFIXES}


def test_every_value_kind_has_a_noun_a_phrase_a_sample_and_a_mention_pattern():
    assert set(VALUE_TYPES) == set(get_args(ValueKind))
    for kind in VALUE_TYPES:
        assert kind in VALUE_NOUNS and kind in VALUE_PHRASES
        value = vocab.sample_value(kind, vocab.seeded(kind))
        assert mentions(f"It is {value}.", kind), (kind, value)


def test_domain_links_take_only_their_own_codes():
    consumes = {
        ("flights", "booking_passenger"): "booking_code",
        ("flights", "cancel_booking"): "booking_code",
        ("weather", "cancel_advisory_by_code"): "advisory_code",
        ("shop", "cancel_order"): "order_number",
        ("tickets", "escalate_ticket_by_code"): "ticket_code",
        ("hr", "employee_by_code"): "employee_code",
    }
    for (service, name), kind in consumes.items():
        link = next(x for x in get_service(service).links() if x.name == name)
        assert isinstance(link, Hop | Action) and link.consumes == kind, (service, name)
    channel = next(x for x in get_service("chat").links() if x.name == "channel_ticket")
    assert isinstance(channel, Hop) and channel.produces == "ticket_code"  # a chat channel leads to a ticket


def test_composed_chains_carry_each_domain_code_with_its_own_prefix():
    seen = set()
    for seed in range(60):
        draft = draft_task(seed, ComposeConfig())
        if draft.failure:
            continue
        for kind, value in zip(draft.metadata["value_types"], draft.values):
            if kind in PREFIXES:
                seen.add(kind)
                assert value.startswith(PREFIXES[kind] + "-"), (seed, kind, value)
    assert len(seen) >= 3, seen


def test_a_reply_naming_two_flight_numbers_fails():
    assert answer_is("It is SK961.", "SK961", "flight_number", 200)
    assert not answer_is("SK961 or NR188", "SK961", "flight_number", 200)
