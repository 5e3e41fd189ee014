"""write_journal: an entry in notes/journal.md."""

from __future__ import annotations

import random

from envpipeline.models.world import Operation, Persona
from envpipeline.worlds.schema import stamp
from envpipeline.worlds.skills.base import Skill, append
from envpipeline.worlds.skills.registry import register_skill
from envpipeline.worlds.state import WorldReader

MOODS = ["productive", "tired but happy", "restless", "calm", "busy", "inspired"]


class WriteJournal(Skill):
    name = "write_journal"
    apps = ("files",)
    summary = "writes a journal entry"

    def plan(
        self, persona: Persona, reader: WorldReader, rng: random.Random, day: int, slot: int = 0
    ) -> list[Operation]:
        entry = f"\n## {stamp(day, slot)[:10]}\nFeeling {rng.choice(MOODS)}. Work as a {persona.occupation} today.\n"
        return [append(reader, "notes/journal.md", entry, "# Journal\n")]


register_skill(WriteJournal())
