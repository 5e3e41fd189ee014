"""schedule_meeting: a meeting in the calendar, an invitation email and a note in the team chat."""

from __future__ import annotations

import random

from envpipeline.models.world import Operation, Persona
from envpipeline.worlds.schema import stamp
from envpipeline.worlds.skills.base import Skill, at_day, chat_post, contact, event, mail, plus_minutes
from envpipeline.worlds.skills.registry import register_skill
from envpipeline.worlds.state import WorldReader

TOPICS = ["Project kickoff", "Budget review", "Design sync", "Quarterly planning", "Client check-in"]


class ScheduleMeeting(Skill):
    name = "schedule_meeting"
    apps = ("calendar", "mail", "chat")
    summary = "schedules a meeting"

    def plan(
        self, persona: Persona, reader: WorldReader, rng: random.Random, day: int, slot: int = 0
    ) -> list[Operation]:
        other = contact(persona, rng, "colleague", "client")
        topic = rng.choice(TOPICS)
        start = at_day(day + rng.randint(1, 5), rng.choice([9, 11, 14, 16]))
        at = stamp(day, slot)
        return [
            event(
                f"{topic} with {other.name}",
                start,
                plus_minutes(start, 60),
                "Video call",
                [persona.email, other.email],
            ),
            mail(
                "sent",
                persona.email,
                other.email,
                f"Invitation: {topic} on {start[:10]}",
                f"Hi {other.name.split()[0]}, invitation for {topic} at {start[11:16]} on {start[:10]}.",
                plus_minutes(at, 3),
            ),
            chat_post(
                reader,
                "team",
                persona.username,
                f"Scheduled '{topic}' with {other.name} on {start[:10]}.",
                plus_minutes(at, 5),
            ),
        ]


register_skill(ScheduleMeeting())
