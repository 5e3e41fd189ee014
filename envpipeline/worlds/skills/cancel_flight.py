"""cancel_flight: cancel the latest upcoming booking, get the email, drop the calendar event."""

from __future__ import annotations

import random

from envpipeline.models.world import Operation, Persona
from envpipeline.worlds.schema import day_end, stamp
from envpipeline.worlds.skills.base import Skill, mail, rm, upd
from envpipeline.worlds.skills.registry import register_skill
from envpipeline.worlds.state import WorldReader


def upcoming(reader: WorldReader) -> list[dict]:
    """Confirmed bookings departing after the reader's day, each with its flight event id."""
    rows = reader.query(
        "flights",
        "SELECT * FROM bookings WHERE status = 'confirmed' AND depart_at > ? ORDER BY id",
        [day_end(reader.day)],
    )
    out = []
    for row in rows:
        events = reader.query(
            "calendar",
            "SELECT id FROM events WHERE title LIKE ? ORDER BY id",
            [f"Flight %({row['confirmation']})"],
        )
        if events:
            out.append({**row, "event_id": events[0]["id"]})
    return out


class CancelFlight(Skill):
    name = "cancel_flight"
    apps = ("flights", "mail", "calendar")
    summary = "cancels an upcoming flight"
    consumes = "booking"
    follow_up = True
    requires = ("book_flight",)

    def available(self, persona: Persona, reader: WorldReader) -> bool:
        return bool(upcoming(reader))

    def plan(
        self, persona: Persona, reader: WorldReader, rng: random.Random, day: int, slot: int = 0
    ) -> list[Operation]:
        booking = upcoming(reader)[-1]
        conf = booking["confirmation"]
        return [
            upd("flights", "bookings", {"confirmation": conf}, status="cancelled"),
            mail(
                "inbox",
                "bookings@skyways.example",
                persona.email,
                f"Booking cancelled {conf}",
                f"Your flight to {booking['destination']} on {booking['depart_at'][:10]} was cancelled "
                "as requested. A refund is on its way.",
                stamp(day, slot, 3),
            ),
            rm("calendar", "events", {"id": booking["event_id"]}),
        ]


register_skill(CancelFlight())
