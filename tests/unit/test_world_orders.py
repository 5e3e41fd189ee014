"""One order shape: orders placed by a skill and through the storefront both pass the rule reviewer."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from envpipeline.models.world import DayPlan
from envpipeline.worlds.build import review_rules
from envpipeline.worlds.delta import apply_delta
from envpipeline.worlds.genesis import create_day0
from envpipeline.worlds.personas import generate_persona
from envpipeline.worlds.planner import plan_to_delta
from envpipeline.worlds.schema import stamp
from envpipeline.worlds.skills.registry import get_skill
from envpipeline.worlds.state import WorldReader, day_path
from envpipeline.worlds.worldstore import WorldStore, order_item

ORDER_NUMBER = re.compile(r"ORD-\d{5}")


def test_skill_and_storefront_orders_share_one_shape_and_pass_review(tmp_path: Path) -> None:
    persona = generate_persona(7, 0)
    world = tmp_path / persona.persona_id
    create_day0(persona, day_path(world, 0))
    skill = get_skill("order_product")
    plan = DayPlan.model_validate(
        {
            "persona_id": persona.persona_id,
            "day": 1,
            "app_usage": {},
            "activities": [
                {
                    "index": 0,
                    "skill": skill.name,
                    "apps": list(skill.apps),
                    "description": "t",
                    "time": stamp(1, 0),
                }
            ],
        }
    )
    reader = WorldReader(day_path(world, 0))
    apply_delta(day_path(world, 1), plan_to_delta(persona, plan, reader, skills={skill.name: skill}))
    day = day_path(world, 1)
    shutil.rmtree(day / "home", ignore_errors=True)
    shutil.copytree(day_path(world, 0) / "home", day / "home")
    store = WorldStore(day)
    product = next(p for p in store.products() if p["stock"] >= 2)
    store.add_to_cart(product["sku"], 1)
    placed = store.checkout()

    orders = store.orders()
    assert len(orders) >= 2
    shapes = {
        tuple(sorted(item)) for o in orders if o["items_json"] != "[]" for item in json.loads(o["items_json"])
    }
    assert shapes == {tuple(sorted(order_item(product, 1)))}
    assert all(ORDER_NUMBER.fullmatch(o["order_number"]) for o in orders)
    assert len({o["order_number"] for o in orders}) == len(orders)
    assert json.loads(placed["items_json"])[0]["product_id"] == product["id"]
    review = review_rules(day, 1)
    assert review.passed, review.reason
