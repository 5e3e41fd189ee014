"""json-transform: flatten nested orders, filter, sort with tie-breaks and group by region.

``/app/input/orders.json`` nests customers -> orders -> items, where an item may be a kit whose
``components`` replace it (recursively at depth 3). The agent writes a flat, sorted item list and a
per-region summary. Its edge cases, each present with the knob-set probability: a tie on amount
(``no_tiebreak``; without it every amount is distinct), a `CANCELLED` order in another case
(``case_sensitive_status``; without it a cancelled status is always plain ``cancelled``), kits
(``top_level_only``; without it no item is a kit) and a kept order dated exactly on the end date
(``exclusive_end_date``; without it no order falls on that day).
"""

from __future__ import annotations

import inspect
import json
import random

from envpipeline.terminal.families._script_kit import python_program, test_script
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


def transform(doc: dict, start: str, end: str, missed: frozenset = frozenset()) -> tuple:
    """(flat rows sorted, per-region summary) of the orders document, by a solver that misses the
    edge cases in `missed`."""

    def leaves(item, mult):
        qty = item.get("qty", 1) * mult
        if item.get("components") and "top_level_only" not in missed:
            for comp in item["components"]:
                yield from leaves(comp, qty)
        else:
            yield item["sku"], qty, item["price_cents"]

    rows = []
    for cust in doc["customers"]:
        region = cust.get("region", "UNKNOWN")
        for order in cust["orders"]:
            status = order["status"] if "case_sensitive_status" in missed else order["status"].strip().lower()
            in_range = (
                start <= order["date"] < end
                if "exclusive_end_date" in missed
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
    if "no_tiebreak" in missed:
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
rows, summary = transform(doc, conf["start_date"], conf["end_date"], MISSED)
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


def _distinct_amounts(customers: list[dict]) -> None:
    """Raise prices cent by cent until no two items' amounts (effective qty x price) are equal,
    so that sorting needs no tie-break."""
    used: set[int] = set()

    def walk(item: dict, mult: int) -> None:
        qty = item.get("qty", 1) * mult
        if item.get("components"):
            for comp in item["components"]:
                walk(comp, qty)
            return
        while qty * item["price_cents"] in used:
            item["price_cents"] += 1
        used.add(qty * item["price_cents"])

    for cust in customers:
        for order in cust["orders"]:
            for item in order["items"]:
                walk(item, 1)


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
    edge_case_axes = {
        "no_tiebreak": "breadth",
        "case_sensitive_status": "depth",
        "top_level_only": "depth",
        "exclusive_end_date": "breadth",
    }

    def build(
        self, rng: random.Random, knobs: JsonTransformKnobs, seed: int, edge_cases: frozenset[str]
    ) -> TaskParts:
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
            if level == 0 and rng.random() < 0.15 and "top_level_only" in edge_cases:
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
            if date is None and d == end and "exclusive_end_date" not in edge_cases:
                d = "2024-12-31"  # after every end date: the edge case stays out
            s = status or rng.choice(["shipped", "delivered", "pending", "cancelled", "Shipped"])
            plain_cancelled = s == "cancelled" and "case_sensitive_status" not in edge_cases
            if knobs.depth >= 2 and rng.random() < 0.2 and not plain_cancelled:
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
        # The present edge cases, each in its own order inside the date range.
        inside = f"2024-05-{rng.randint(1, 28):02d}"
        specials = []
        if "no_tiebreak" in edge_cases:
            tie_price = rng.choice([300, 700])
            tie = order(inside, "shipped")
            tie["items"] = [
                {"sku": "Z-900", "qty": 2, "price_cents": tie_price},
                {"sku": "B-100", "qty": 1, "price_cents": 2 * tie_price},
            ]
            specials.append(tie)
        if "case_sensitive_status" in edge_cases:
            specials.append(order(inside, "CANCELLED"))
        if "top_level_only" in edge_cases:
            kitted = order(inside, "delivered")
            kitted["items"].append(kit(0))
            specials.append(kitted)
        if "exclusive_end_date" in edge_cases:
            specials.append(order(end, "delivered"))
        for special in specials:
            rng.choice(customers)["orders"].append(special)
        for cust in customers:
            rng.shuffle(cust["orders"])
        if "no_tiebreak" not in edge_cases:
            _distinct_amounts(customers)
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
            solver=python_program(SOLVER),
        )


register_family(JsonTransformFamily())
