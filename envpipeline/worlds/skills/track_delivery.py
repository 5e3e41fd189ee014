"""track_delivery: an open order moves on (placed -> shipped -> delivered) with a shipping email."""

from __future__ import annotations

import random

from envpipeline.models.world import Operation, Persona
from envpipeline.worlds.schema import stamp
from envpipeline.worlds.skills.base import Skill, mail, upd
from envpipeline.worlds.skills.registry import register_skill
from envpipeline.worlds.state import WorldReader

NEXT = {"placed": "shipped", "shipped": "delivered"}


class TrackDelivery(Skill):
    name = "track_delivery"
    apps = ("shop", "mail")
    summary = "follows an open order until it arrives"
    consumes = "order"
    follow_up = True
    requires = ("order_product",)

    def _open(self, reader: WorldReader) -> list[dict]:
        return reader.query("shop", "SELECT * FROM orders WHERE status IN ('placed', 'shipped') ORDER BY id")

    def available(self, persona: Persona, reader: WorldReader) -> bool:
        return bool(self._open(reader))

    def plan(
        self, persona: Persona, reader: WorldReader, rng: random.Random, day: int, slot: int = 0
    ) -> list[Operation]:
        order = self._open(reader)[0]
        status = NEXT[order["status"]]
        subject = f"Order {order['order_number']} " + (
            "has shipped" if status == "shipped" else "was delivered"
        )
        return [
            upd("shop", "orders", {"order_number": order["order_number"]}, status=status),
            mail(
                "inbox",
                "shipping@shop.example",
                persona.email,
                subject,
                f"Status update for order {order['order_number']}: {status}.",
                stamp(day, slot, 2),
            ),
        ]


register_skill(TrackDelivery())
