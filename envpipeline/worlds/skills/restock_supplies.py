"""restock_supplies: order supplies for the team, announce it in chat, log it in notes/supplies.md."""

from __future__ import annotations

import random

from envpipeline.models.world import Operation, Persona
from envpipeline.worlds.schema import stamp
from envpipeline.worlds.skills.base import Skill, append, chat_post
from envpipeline.worlds.skills.order_product import order_ops
from envpipeline.worlds.skills.registry import register_skill
from envpipeline.worlds.state import WorldReader


class RestockSupplies(Skill):
    name = "restock_supplies"
    apps = ("shop", "chat", "files")
    summary = "restocks team supplies"

    def plan(
        self, persona: Persona, reader: WorldReader, rng: random.Random, day: int, slot: int = 0
    ) -> list[Operation]:
        number, items, ops = order_ops(reader, rng, day, slot, category="supplies")
        item = items[0]
        return [
            *ops,
            chat_post(
                reader,
                "team",
                persona.username,
                f"Ordered {item['quantity']} x {item['name']} for the team (order {number}).",
                stamp(day, slot, 6),
            ),
            append(
                reader,
                "notes/supplies.md",
                f"- {stamp(day, slot)[:10]}: {item['quantity']} x {item['name']} ({number})\n",
                "# Supplies log\n\n",
            ),
        ]


register_skill(RestockSupplies())
