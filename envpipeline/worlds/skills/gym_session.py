"""gym_session: a workout in the calendar and a line in notes/fitness.md."""

from __future__ import annotations

import random

from envpipeline.models.world import Operation, Persona
from envpipeline.worlds.skills.base import Skill, append, at_day, event, plus_minutes
from envpipeline.worlds.skills.registry import register_skill
from envpipeline.worlds.state import WorldReader

WORKOUTS = ["strength", "running intervals", "yoga", "swimming", "cycling"]


class GymSession(Skill):
    name = "gym_session"
    apps = ("calendar", "files")
    summary = "goes to the gym"

    def plan(
        self, persona: Persona, reader: WorldReader, rng: random.Random, day: int, slot: int = 0
    ) -> list[Operation]:
        workout, minutes = rng.choice(WORKOUTS), rng.choice([30, 45, 60])
        start = at_day(day, 18, 30)
        return [
            event(f"Gym: {workout}", start, plus_minutes(start, minutes), "City gym", [persona.email]),
            append(
                reader, "notes/fitness.md", f"- {start[:10]}: {workout}, {minutes} min\n", "# Fitness log\n\n"
            ),
        ]


register_skill(GymSession())
