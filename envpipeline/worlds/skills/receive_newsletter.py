"""receive_newsletter: a newsletter from one of the persona's favourite sites lands in the inbox."""

from __future__ import annotations

import random

from envpipeline.models.world import Operation, Persona
from envpipeline.worlds.schema import stamp
from envpipeline.worlds.skills.base import Skill, mail
from envpipeline.worlds.skills.registry import register_skill
from envpipeline.worlds.state import WorldReader

TOPICS = ["Weekly digest", "Top stories this week", "Spring deals", "New features", "Community highlights"]


class ReceiveNewsletter(Skill):
    name = "receive_newsletter"
    apps = ("mail",)
    summary = "receives a newsletter"

    def plan(
        self, persona: Persona, reader: WorldReader, rng: random.Random, day: int, slot: int = 0
    ) -> list[Operation]:
        site, topic = rng.choice(persona.favourite_sites), rng.choice(TOPICS)
        return [
            mail(
                "inbox",
                f"newsletter@{site}",
                persona.email,
                f"{site}: {topic}",
                f"{topic} from {site}. Read more at https://{site}/news",
                stamp(day, slot, 1),
            )
        ]


register_skill(ReceiveNewsletter())
