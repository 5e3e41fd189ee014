"""browse_shop: put a product in the shop cart for later."""

from __future__ import annotations

import random

from envpipeline.models.world import Operation, Persona
from envpipeline.worlds.schema import stamp
from envpipeline.worlds.skills.base import Skill, ins
from envpipeline.worlds.skills.registry import register_skill
from envpipeline.worlds.state import WorldReader


class BrowseShop(Skill):
    name = "browse_shop"
    apps = ("shop",)
    summary = "browses the shop and saves an item in the cart"

    def plan(
        self, persona: Persona, reader: WorldReader, rng: random.Random, day: int, slot: int = 0
    ) -> list[Operation]:
        in_cart = {r["product_id"] for r in reader.query("shop", "SELECT product_id FROM cart_items")}
        products = reader.query("shop", "SELECT id FROM products WHERE stock > 0 ORDER BY id")
        choices = [p["id"] for p in products if p["id"] not in in_cart] or [p["id"] for p in products]
        return [
            ins(
                "shop",
                "cart_items",
                product_id=rng.choice(choices),
                quantity=rng.randint(1, 3),
                added_at=stamp(day, slot, 7),
            )
        ]


register_skill(BrowseShop())
