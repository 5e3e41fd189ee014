"""order_product: place a shop order (stock goes down) and receive the confirmation email."""

from __future__ import annotations

import json
import random

from envpipeline.models.world import Operation, Persona
from envpipeline.worlds.schema import stamp
from envpipeline.worlds.skills.base import Skill, ins, mail, money, upd
from envpipeline.worlds.skills.registry import register_skill
from envpipeline.worlds.state import WorldReader
from envpipeline.worlds.worldstore import order_item, order_number

#: A skill's order on day d, slot s is number ORDER_SEQUENCE_PER_DAY * d + s (the storefront skips taken ones).
ORDER_SEQUENCE_PER_DAY = 100


def order_ops(
    reader: WorldReader, rng: random.Random, day: int, slot: int, category: str | None = None
) -> tuple[str, list[dict], list[Operation]]:
    """Order 1-2 units of an in-stock product: (order number, items, ops for orders + stock)."""
    sql = (
        "SELECT * FROM products WHERE stock >= 3" + (" AND category = ?" if category else "") + " ORDER BY id"
    )
    products = reader.query("shop", sql, [category] if category else [])
    if not products:
        products = reader.query("shop", "SELECT * FROM products WHERE stock >= 3 ORDER BY id")
    product = rng.choice(products)
    quantity = rng.randint(1, 2)
    number = order_number(ORDER_SEQUENCE_PER_DAY * day + slot)
    items = [order_item(product, quantity)]
    ops = [
        ins(
            "shop",
            "orders",
            order_number=number,
            status="placed",
            total_cents=quantity * product["price_cents"],
            placed_at=stamp(day, slot),
            items_json=json.dumps(items, sort_keys=True),
        ),
        upd("shop", "products", {"id": product["id"]}, stock={"$add": -quantity}),
    ]
    return number, items, ops


class OrderProduct(Skill):
    name = "order_product"
    apps = ("shop", "mail")
    summary = "orders something from the online shop"

    def plan(
        self, persona: Persona, reader: WorldReader, rng: random.Random, day: int, slot: int = 0
    ) -> list[Operation]:
        number, items, ops = order_ops(reader, rng, day, slot)
        item = items[0]
        total = item["quantity"] * item["price_cents"]
        return [
            *ops,
            mail(
                "inbox",
                "orders@shop.example",
                persona.email,
                f"Order {number} confirmed",
                f"Thanks for your order of {item['quantity']} x {item['name']} ({item['sku']}). "
                f"Total: {money(total)}.",
                stamp(day, slot, 1),
            ),
        ]


register_skill(OrderProduct())
