"""share_document: write a document, email it to a contact and ping them by DM."""

from __future__ import annotations

import random

from envpipeline.models.world import Operation, Persona
from envpipeline.worlds.schema import stamp
from envpipeline.worlds.skills.base import Skill, contact, dm, mail, plus_minutes, write
from envpipeline.worlds.skills.registry import register_skill
from envpipeline.worlds.state import WorldReader

DOCS = ["proposal", "meeting-notes", "checklist", "budget", "draft", "report"]


class ShareDocument(Skill):
    name = "share_document"
    apps = ("files", "mail", "dm")
    summary = "shares a document with a contact"

    def plan(
        self, persona: Persona, reader: WorldReader, rng: random.Random, day: int, slot: int = 0
    ) -> list[Operation]:
        other = contact(persona, rng, "colleague", "client", "friend")
        kind = rng.choice(DOCS)
        path = f"documents/{kind}-{day:02d}{slot}.md"
        at = stamp(day, slot)
        return [
            write(
                path,
                f"# {kind.replace('-', ' ').title()}\n\nPrepared by {persona.name} for "
                f"{other.name} on {at[:10]}.\n",
            ),
            mail(
                "sent",
                persona.email,
                other.email,
                f"{kind.replace('-', ' ').title()} attached",
                f"Hi {other.name.split()[0]}, attached is the {kind} ({path.split('/')[-1]}).",
                plus_minutes(at, 8),
            ),
            dm(other.handle, "out", f"Just emailed you the {kind}.", plus_minutes(at, 9)),
        ]


register_skill(ShareDocument())
