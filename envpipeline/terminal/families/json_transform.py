"""json-transform: flatten nested orders, filter, sort with tie-breaks and group by region.

``/app/input/orders.json`` nests customers -> orders -> items, where an item may be a kit whose
``components`` replace it (recursively at depth 3). The agent writes a flat, sorted item list and a
per-region summary. A tie on amount, a `CANCELLED` order (any case), a kit and an order dated exactly
on the end date are always present.
"""

from __future__ import annotations

import inspect
import json
import random

from envpipeline.terminal.families._script_kit import all_solutions, test_script
from envpipeline.terminal.families.base import (
    STANDARD_DOCKERFILE,
    STANDARD_TEST_SH,
    Knobs,
    TaskFamily,
    TaskParts,
    knob,
)
from envpipeline.terminal.families.registry import register_family

REGIONS = ["EU", "NA", "APAC", "LATAM"]
SKUS = ["A-100", "A-205", "B-310", "B-020", "C-777", "D-404", "E-512", "F-001", "G-650", "H-909"]


def transform(doc: dict, start: str, end: str, variant: str = "oracle") -> tuple:
    """(flat rows sorted, per-region summary) of the orders document."""

    def leaves(item, mult):
        qty = item.get("qty", 1) * mult
        if item.get("components") and variant != "top_level_only":
            for comp in item["components"]:
                yield from leaves(comp, qty)
        else:
            yield item["sku"], qty, item["price_cents"]

    rows = []
    for cust in doc["customers"]:
        region = cust.get("region", "UNKNOWN")
        for order in cust["orders"]:
            status = (
                order["status"] if variant == "case_sensitive_status" else order["status"].strip().lower()
            )
            in_range = (
                start <= order["date"] < end
                if variant == "exclusive_end_date"
                else start <= order["date"] <= end
            )
            if status == "cancelled" or not in_range:
                continue
            for item in order["items"]:
                for sku, qty, price in leaves(item, 1):
                    rows.append(
                        {
                            "customer": cust["id"],
                            "region": region,
                            "order_id": order["order_id"],
                            "date": order["date"],
                            "sku": sku,
                            "qty": qty,
                            "amount_cents": qty * price,
                        }
                    )
    if variant == "no_tiebreak":
        rows.sort(key=lambda r: -r["amount_cents"])
    else:
        rows.sort(key=lambda r: (-r["amount_cents"], r["order_id"], r["sku"]))
    regions = {}
    for r in rows:
        g = regions.setdefault(r["region"], {"orders": set(), "items": 0, "revenue_cents": 0, "skus": {}})
        g["orders"].add(r["order_id"])
        g["items"] += r["qty"]
        g["revenue_cents"] += r["amount_cents"]
        g["skus"][r["sku"]] = g["skus"].get(r["sku"], 0) + r["amount_cents"]
    summary = {
        name: {
            "orders": len(g["orders"]),
            "items": g["items"],
            "revenue_cents": g["revenue_cents"],
            "top_sku": min(g["skus"], key=lambda s: (-g["skus"][s], s)),
        }
        for name, g in regions.items()
    }
    return rows, summary


SOLVER = (
    "import json, os\n"
    + inspect.getsource(transform)
    + r"""
doc = json.load(open("input/orders.json"))
conf = json.load(open("input/filter.json"))
rows, summary = transform(doc, conf["start_date"], conf["end_date"], VARIANT)
os.makedirs("output", exist_ok=True)
json.dump(rows, open("output/items.json", "w"), indent=2)
json.dump(summary, open("output/by_region.json", "w"), indent=2, sort_keys=True)
"""
)

TEST_BODY = r"""
rows = json.loads(read("/app/output/items.json"))
check("items.json is a list of objects with the required keys",
      isinstance(rows, list) and all(isinstance(r, dict) and sorted(r) == EXPECTED["keys"] for r in rows))
key = lambda r: json.dumps(r, sort_keys=True)
check("items.json has the right rows (as a multiset)", sorted(map(key, rows)) == sorted(map(key, EXPECTED["rows"])))
check("items.json order (amount desc, order_id, sku)", rows == EXPECTED["rows"])
check("by_region.json", json.loads(read("/app/output/by_region.json")) == EXPECTED["summary"])
"""


class JsonTransformKnobs(Knobs):
    customers: int = knob(4, 3, 30, "breadth", "customers in the document")
    orders: int = knob(2, 1, 5, "breadth", "maximum orders per customer")
    depth: int = knob(
        1,
        1,
        3,
        "depth",
        "1: one-level kits; 2: + defaults for missing qty/region, padded statuses; 3: + nested kits",
    )


class JsonTransformFamily(TaskFamily[JsonTransformKnobs]):
    """Flatten, filter, sort and group a nested JSON document."""

    name = "json-transform"
    category = "data-processing"
    description = (
        "Reshape nested JSON orders: flatten kits into items, filter, sort with tie-breaks, group by region."
    )
    skills = ["json", "aggregation", "file-io"]
    knob_model = JsonTransformKnobs
    presets = {
        "easy": {"customers": 3, "orders": 2, "depth": 1},
        "medium": {"customers": 6, "orders": 3, "depth": 2},
        "hard": {"customers": 12, "orders": 4, "depth": 3},
    }
    variants = ("no_tiebreak", "case_sensitive_status", "top_level_only", "exclusive_end_date")

    def build(self, rng: random.Random, knobs: JsonTransformKnobs, seed: int) -> TaskParts:
        start, end = (
            f"2024-0{rng.randint(1, 3)}-{rng.randint(1, 28):02d}",
            f"2024-0{rng.randint(6, 9)}-{rng.randint(1, 28):02d}",
        )
        counter = iter(range(1001, 99999))

        def item(level: int = 0) -> dict:
            it = {
                "sku": rng.choice(SKUS),
                "qty": rng.randint(1, 4),
                "price_cents": rng.choice([99, 250, 1000, 1499, 2500]),
            }
            if knobs.depth >= 2 and rng.random() < 0.15:
                del it["qty"]
            if level == 0 and rng.random() < 0.15:
                it = kit(level)
            return it

        def kit(level: int) -> dict:
            comps = [item(level + 1) for _ in range(rng.randint(2, 3))]
            if knobs.depth >= 3 and level == 0:
                comps.append(kit(level + 1))
            return {
                "sku": f"KIT-{rng.randint(1, 99)}",
                "qty": rng.randint(1, 3),
                "price_cents": rng.choice([0, 5000]),
                "components": comps,
            }

        def order(date: str | None = None, status: str | None = None) -> dict:
            d = date or f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
            s = status or rng.choice(["shipped", "delivered", "pending", "cancelled", "Shipped"])
            if knobs.depth >= 2 and rng.random() < 0.2:
                s = f" {s.upper()} "
            return {
                "order_id": f"O-{next(counter)}",
                "status": s,
                "date": d,
                "items": [item() for _ in range(rng.randint(1, 3))],
            }

        customers = []
        for i in range(knobs.customers):
            cust = {
                "id": f"C{rng.randint(100, 999)}{i}",
                "name": rng.choice(["Acme", "Globex", "Initech", "Umbrella"]),
                "region": rng.choice(REGIONS),
                "orders": [order() for _ in range(rng.randint(1, knobs.orders))],
            }
            if knobs.depth >= 2 and rng.random() < 0.2:
                del cust["region"]
            customers.append(cust)
        # Guaranteed edge cases, each in its own order inside the date range.
        inside = f"2024-05-{rng.randint(1, 28):02d}"
        tie_price = rng.choice([300, 700])
        tie = order(inside, "shipped")
        tie["items"] = [
            {"sku": "Z-900", "qty": 2, "price_cents": tie_price},
            {"sku": "B-100", "qty": 1, "price_cents": 2 * tie_price},
        ]
        cancelled = order(inside, "CANCELLED")
        kitted = order(inside, "delivered")
        kitted["items"].append(kit(0))
        last_day = order(end, "delivered")
        for special in (tie, cancelled, kitted, last_day):
            rng.choice(customers)["orders"].append(special)
        for cust in customers:
            rng.shuffle(cust["orders"])
        doc = {"customers": customers}
        rows, summary = transform(doc, start, end)
        expected = {
            "rows": rows,
            "summary": summary,
            "keys": sorted(["customer", "region", "order_id", "date", "sku", "qty", "amount_cents"]),
        }
        env = {
            "Dockerfile": STANDARD_DOCKERFILE,
            "app/input/orders.json": json.dumps(doc, indent=2) + "\n",
            "app/input/filter.json": json.dumps({"start_date": start, "end_date": end}, indent=2) + "\n",
        }
        instruction = """# Reshape nested order data

`/app/input/orders.json` is `{"customers": [{"id", "name", "region", "orders": [{"order_id", "status",
"date", "items": [...]}]}]}`. An item has `sku`, `qty` and `price_cents`; an item with a non-empty
`components` list is a kit: replace it by its components (recursively), multiplying each component's
`qty` by the kit's `qty`; the kit's own `sku` and `price_cents` are ignored. A missing `qty` means 1;
a customer without `region` belongs to region `"UNKNOWN"`.

Keep only orders whose status, trimmed and compared case-insensitively, is not `cancelled` and whose
`date` lies between `start_date` and `end_date` of `/app/input/filter.json`, both inclusive.

1. Write `/app/output/items.json`: a JSON list with one object per resulting item, with exactly the
   keys `customer` (customer id), `region`, `order_id`, `date`, `sku`, `qty` (effective quantity) and
   `amount_cents` (`qty * price_cents`, an integer). Sort by `amount_cents` descending, then
   `order_id` ascending, then `sku` ascending (plain string order).
2. Write `/app/output/by_region.json`: an object keyed by region with `orders` (number of distinct
   kept orders with items), `items` (sum of `qty`), `revenue_cents` (sum of `amount_cents`) and
   `top_sku` (the sku with the highest summed `amount_cents` in the region; ties -> smallest sku).
"""
        return TaskParts(
            instruction=instruction,
            environment=env,
            tests={"test.sh": STANDARD_TEST_SH, "test_outputs.py": test_script(expected, TEST_BODY)},
            solutions=all_solutions(SOLVER, self.variants),
        )


register_family(JsonTransformFamily())
