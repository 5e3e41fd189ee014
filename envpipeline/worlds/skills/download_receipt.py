"""download_receipt: the shop mails a receipt, which is saved under downloads/."""

from __future__ import annotations

import json
import random

from envpipeline.models.world import Operation, Persona
from envpipeline.worlds.schema import stamp
from envpipeline.worlds.skills.base import Skill, mail, money, write
from envpipeline.worlds.skills.registry import register_skill
from envpipeline.worlds.state import WorldReader


class DownloadReceipt(Skill):
    name = "download_receipt"
    apps = ("files", "mail")
    summary = "downloads the receipt of an order"
    follow_up = True
    requires = ("order_product",)

    def _missing(self, reader: WorldReader) -> list[dict]:
        orders = reader.query("shop", "SELECT * FROM orders ORDER BY id")
        return [o for o in orders if not reader.exists(f"downloads/receipt-{o['order_number']}.txt")]

    def available(self, persona: Persona, reader: WorldReader) -> bool:
        return bool(self._missing(reader))

    def plan(
        self, persona: Persona, reader: WorldReader, rng: random.Random, day: int, slot: int = 0
    ) -> list[Operation]:
        order = self._missing(reader)[0]
        number = order["order_number"]
        lines = [f"RECEIPT {number}", f"Date: {order['placed_at'][:10]}", f"Customer: {persona.name}"]
        for item in json.loads(order["items_json"]):
            lines.append(
                f"{item['quantity']} x {item['name']} ({item['sku']}) @ {money(item['price_cents'])}"
            )
        lines.append(f"TOTAL {money(order['total_cents'])}")
        return [
            mail(
                "inbox",
                "receipts@shop.example",
                persona.email,
                f"Receipt for order {number}",
                "Your receipt is attached.\n\n" + "\n".join(lines),
                stamp(day, slot),
            ),
            write(f"downloads/receipt-{number}.txt", "\n".join(lines) + "\n"),
        ]


register_skill(DownloadReceipt())
