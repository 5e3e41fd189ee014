"""team_standup_chat: a short async stand-up in the team channel."""

from __future__ import annotations

import random

from envpipeline.models.world import Operation, Persona
from envpipeline.worlds.schema import stamp
from envpipeline.worlds.skills.base import Skill, chat_post, contact
from envpipeline.worlds.skills.registry import register_skill
from envpipeline.worlds.state import WorldReader

UPDATES = [
    "finishing the draft today",
    "blocked on a review",
    "testing the new setup",
    "meeting the client at 2",
    "cleaning up last week's notes",
    "on the budget numbers",
]


class TeamStandupChat(Skill):
    name = "team_standup_chat"
    apps = ("chat",)
    summary = "posts a stand-up update in the team chat"

    def plan(
        self, persona: Persona, reader: WorldReader, rng: random.Random, day: int, slot: int = 0
    ) -> list[Operation]:
        colleague = contact(persona, rng, "colleague")
        mine, theirs = rng.sample(UPDATES, 2)
        return [
            chat_post(reader, "team", persona.username, f"Stand-up: {mine}.", stamp(day, slot)),
            chat_post(reader, "team", colleague.handle, f"Stand-up: {theirs}.", stamp(day, slot, 4)),
        ]


register_skill(TeamStandupChat())
