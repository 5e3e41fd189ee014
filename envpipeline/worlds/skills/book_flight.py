"""book_flight: a flight booking with its confirmation email, a DM, a calendar event and a travel note."""

from __future__ import annotations

import random

from envpipeline.models.world import Operation, Persona
from envpipeline.worlds.schema import stamp
from envpipeline.worlds.skills.base import (
    Skill,
    append,
    at_day,
    code,
    contact,
    dm,
    event,
    ins,
    mail,
    plus_minutes,
)
from envpipeline.worlds.skills.registry import register_skill
from envpipeline.worlds.state import WorldReader

DESTINATIONS = [
    "Lisbon",
    "Oslo",
    "Berlin",
    "Madrid",
    "Vienna",
    "Dublin",
    "Prague",
    "Athens",
    "Helsinki",
    "Milan",
    "Zurich",
    "Copenhagen",
    "Warsaw",
    "Edinburgh",
]


class BookFlight(Skill):
    name = "book_flight"
    apps = ("flights", "mail", "dm", "calendar", "files")
    summary = "books a flight and tells a contact"

    def plan(
        self, persona: Persona, reader: WorldReader, rng: random.Random, day: int, slot: int = 0
    ) -> list[Operation]:
        destination = rng.choice([d for d in DESTINATIONS if d != persona.city])
        confirmation = code(rng, 3, day, slot)
        depart = at_day(day + rng.randint(4, 9), rng.choice([6, 7, 9, 12, 15]), rng.choice([10, 25, 40]))
        friend = contact(persona, rng, "friend", "family", "colleague")
        at = stamp(day, slot)
        return [
            ins(
                "flights",
                "bookings",
                confirmation=confirmation,
                origin=persona.city,
                destination=destination,
                depart_at=depart,
                passenger=persona.name,
                status="confirmed",
            ),
            mail(
                "inbox",
                "bookings@skyways.example",
                persona.email,
                f"Booking confirmed {confirmation}",
                f"Dear {persona.name}, your flight {persona.city} -> {destination} departing {depart} "
                f"is confirmed. Confirmation code: {confirmation}.",
                plus_minutes(at, 2),
            ),
            dm(
                friend.handle,
                "out",
                f"Booked my flight to {destination}, leaving {depart[:10]} ({confirmation})",
                plus_minutes(at, 10),
            ),
            event(
                f"Flight {persona.city} -> {destination} ({confirmation})",
                depart,
                plus_minutes(depart, 180),
                f"{persona.city} airport",
                [persona.email],
            ),
            append(
                reader,
                "notes/travel.md",
                f"- {depart[:10]}: {persona.city} -> {destination}, confirmation {confirmation}\n",
                "# Travel\n\n",
            ),
        ]


register_skill(BookFlight())
