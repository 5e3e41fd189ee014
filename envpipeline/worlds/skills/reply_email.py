"""reply_email: read the oldest unread email and answer it."""

from __future__ import annotations

import random

from envpipeline.models.world import Operation, Persona
from envpipeline.worlds.schema import stamp
from envpipeline.worlds.skills.base import Skill, mail, upd
from envpipeline.worlds.skills.registry import register_skill
from envpipeline.worlds.state import WorldReader

REPLIES = ["Thanks, noted.", "Thank you! I will get back to you soon.", "Got it, thanks for the update."]


class ReplyEmail(Skill):
    name = "reply_email"
    apps = ("mail",)
    summary = "catches up on email"
    follow_up = True
    consumes = "inbox"

    def _unread(self, reader: WorldReader) -> list[dict]:
        return reader.query(
            "mail", "SELECT * FROM messages WHERE folder = 'inbox' AND is_read = 0 ORDER BY id"
        )

    def available(self, persona: Persona, reader: WorldReader) -> bool:
        return bool(self._unread(reader))

    def plan(
        self, persona: Persona, reader: WorldReader, rng: random.Random, day: int, slot: int = 0
    ) -> list[Operation]:
        message = self._unread(reader)[0]
        return [
            upd("mail", "messages", {"id": message["id"]}, is_read=1),
            mail(
                "sent",
                persona.email,
                message["sender"],
                f"Re: {message['subject']}",
                rng.choice(REPLIES),
                stamp(day, slot, 12),
            ),
        ]


register_skill(ReplyEmail())
