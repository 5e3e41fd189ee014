"""plan_trip: write an itinerary for a booked flight and block the hotel check-in in the calendar."""

from __future__ import annotations

import random

from envpipeline.models.world import Operation, Persona
from envpipeline.worlds.skills.base import Skill, event, plus_minutes, write
from envpipeline.worlds.skills.cancel_flight import upcoming
from envpipeline.worlds.skills.registry import register_skill
from envpipeline.worlds.state import WorldReader

HOTELS = ["Hotel Aurora", "Harbour Inn", "Old Town Suites", "Station Hotel", "Garden Lodge"]


def unplanned(reader: WorldReader) -> list[dict]:
    """Upcoming bookings without an itinerary file."""
    return [b for b in upcoming(reader) if not reader.exists(f"documents/trip-{b['confirmation']}.md")]


class PlanTrip(Skill):
    name = "plan_trip"
    apps = ("calendar", "files")
    summary = "plans the stay for a booked trip"
    consumes = "booking"
    follow_up = True
    requires = ("book_flight",)

    def available(self, persona: Persona, reader: WorldReader) -> bool:
        return bool(unplanned(reader))

    def plan(
        self, persona: Persona, reader: WorldReader, rng: random.Random, day: int, slot: int = 0
    ) -> list[Operation]:
        booking = unplanned(reader)[0]
        hotel = rng.choice(HOTELS)
        checkin = plus_minutes(booking["depart_at"], 300)
        nights = rng.randint(2, 4)
        text = (
            f"# Trip to {booking['destination']}\n\n- Flight: {booking['confirmation']} "
            f"departing {booking['depart_at']}\n- Hotel: {hotel}, {nights} nights\n- Check-in: {checkin}\n"
            "- Pack: passport, charger, adapter\n"
        )
        return [
            write(f"documents/trip-{booking['confirmation']}.md", text),
            event(
                f"Check-in {hotel}, {booking['destination']}",
                checkin,
                plus_minutes(checkin, 30),
                hotel,
                [persona.email],
            ),
        ]


register_skill(PlanTrip())
