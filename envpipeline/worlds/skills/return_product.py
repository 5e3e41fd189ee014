"""return_product: return a delivered order: status, restock, request and acceptance emails."""

from __future__ import annotations

import json
import random

from envpipeline.models.world import Operation, Persona
from envpipeline.worlds.schema import stamp
from envpipeline.worlds.skills.base import Skill, mail, upd
from envpipeline.worlds.skills.registry import register_skill
from envpipeline.worlds.state import WorldReader

REASONS = ["arrived damaged", "wrong size", "no longer needed", "does not match the description"]


class ReturnProduct(Skill):
    name = "return_product"
    apps = ("shop", "mail")
    summary = "returns a delivered order"
    consumes = "order"
    follow_up = True
    requires = ("order_product", "track_delivery", "track_delivery")

    def _delivered(self, reader: WorldReader) -> list[dict]:
        return reader.query("shop", "SELECT * FROM orders WHERE status = 'delivered' ORDER BY id")

    def available(self, persona: Persona, reader: WorldReader) -> bool:
        return bool(self._delivered(reader))

    def plan(
        self, persona: Persona, reader: WorldReader, rng: random.Random, day: int, slot: int = 0
    ) -> list[Operation]:
        order = self._delivered(reader)[0]
        number, reason = order["order_number"], rng.choice(REASONS)
        ops = [upd("shop", "orders", {"order_number": number}, status="returned")]
        for item in json.loads(order["items_json"]):
            ops.append(upd("shop", "products", {"id": item["product_id"]}, stock={"$add": item["quantity"]}))
        ops += [
            mail(
                "sent",
                persona.email,
                "returns@shop.example",
                f"Return request {number}",
                f"Hello, I would like to return order {number}: {reason}.",
                stamp(day, slot),
            ),
            mail(
                "inbox",
                "returns@shop.example",
                persona.email,
                f"Return accepted {number}",
                f"Your return of order {number} was accepted; the refund follows.",
                stamp(day, slot, 20),
            ),
        ]
        return ops


register_skill(ReturnProduct())
