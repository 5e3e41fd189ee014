"""dm_friend_plans: agree on plans with a friend by DM and put them in the calendar."""

from __future__ import annotations

import random

from envpipeline.models.world import Operation, Persona
from envpipeline.worlds.schema import stamp
from envpipeline.worlds.skills.base import Skill, at_day, contact, dm, event, plus_minutes
from envpipeline.worlds.skills.registry import register_skill
from envpipeline.worlds.state import WorldReader

PLANS = [
    ("dinner", "Trattoria Roma"),
    ("coffee", "Corner Cafe"),
    ("a concert", "City Hall"),
    ("a hike", "North trailhead"),
    ("the cinema", "Odeon"),
]


class DmFriendPlans(Skill):
    name = "dm_friend_plans"
    apps = ("dm", "calendar")
    summary = "makes plans with a friend"

    def plan(
        self, persona: Persona, reader: WorldReader, rng: random.Random, day: int, slot: int = 0
    ) -> list[Operation]:
        friend = contact(persona, rng, "friend", "family")
        what, where = rng.choice(PLANS)
        start = at_day(day + rng.randint(1, 4), rng.choice([18, 19, 20]))
        at = stamp(day, slot)
        return [
            dm(friend.handle, "in", f"Up for {what} on {start[:10]}?", at),
            dm(friend.handle, "out", f"Yes! {where} at {start[11:16]} works.", plus_minutes(at, 6)),
            event(
                f"{what.capitalize()} with {friend.name}",
                start,
                plus_minutes(start, 120),
                where,
                [persona.email, friend.email],
            ),
        ]


register_skill(DmFriendPlans())
