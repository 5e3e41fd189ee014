"""sqlite-query: answer business questions from a SQLite shop database into CSV files.

The database is built at image build time from a SQL script (then the script is removed). It
holds cancelled orders and customers without valid orders. Its edge cases, each present with the
knob-set probability: refunded orders (``includes_refunded``; without it no order is refunded), a
category without sales (``inner_join_drops_empty_categories``; without it an anchor order sells
every category) and unit prices paid below the current price (``uses_current_price``; without it
every item was paid at the current price). Three valid orders of an anchor customer, in the
country of the refunded order, keep each present edge case visible in the always-asked answers
(the country passes any order-count threshold). Depth knobs add filter conditions and dirty data
(inconsistent status spelling, items of deleted products); breadth knobs add customers and
questions. The solver runs each question's SQL, edited per missed edge case (`variant_sql`), with
the ``sqlite3`` shell.
"""

from __future__ import annotations

import inspect
import random
import sqlite3
from typing import Any

from envpipeline.terminal.families._script_kit import fail_fast_script, python_program
from envpipeline.terminal.families.base import (
    STANDARD_DOCKERFILE,
    STANDARD_TEST_SH,
    Knobs,
    TaskFamily,
    TaskParts,
    knob,
)
from envpipeline.terminal.families.registry import register_family

COUNTRIES = ["PT", "NO", "NG", "JP", "US", "FR", "BR", "IN", "DE", "KE"]
CATEGORIES = ["books", "garden", "toys", "kitchen", "sports", "music", "office", "pets"]
FIRST = ["Ana", "Ben", "Chloe", "Dev", "Eva", "Femi", "Gus", "Hana", "Ivo", "Jade", "Kai", "Lea"]
LAST = ["Silva", "Berg", "Okoro", "Sato", "Reed", "Blanc", "Costa", "Rao", "Wolf", "Mwangi"]
VALID = "LOWER(TRIM(o.status)) IN ('completed', 'shipped')"
SCHEMA = """CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, country TEXT NOT NULL,
  email TEXT, signup_date TEXT NOT NULL);
CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, category TEXT NOT NULL,
  price_cents INTEGER NOT NULL);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL, order_date TEXT NOT NULL,
  status TEXT NOT NULL);
CREATE TABLE order_items (order_id INTEGER NOT NULL, product_id INTEGER NOT NULL, quantity INTEGER NOT NULL,
  unit_price_cents INTEGER NOT NULL);
"""


def variant_sql(sql: str, missed: frozenset = frozenset()) -> str:
    """A question's SQL as written by a solver that misses the edge cases in `missed`."""
    if "includes_refunded" in missed:
        sql = sql.replace(
            "LOWER(TRIM(o.status)) IN ('completed', 'shipped')", "LOWER(TRIM(o.status)) != 'cancelled'"
        )
    if "inner_join_drops_empty_categories" in missed:
        sql = sql.replace("\nLEFT JOIN", "\nJOIN")
    if "uses_current_price" in missed:
        paid = "JOIN order_items i ON i.order_id = o.id"
        sql = sql.replace(paid, paid + "\nLEFT JOIN products p ON p.id = i.product_id").replace(
            "i.unit_price_cents", "COALESCE(p.price_cents, i.unit_price_cents)"
        )
    return sql


SOLVER = (
    "import os, subprocess\n"
    + inspect.getsource(variant_sql)
    + r"""
os.makedirs("answers", exist_ok=True)
for file, sql in DATA["questions"]:
    with open("answers/" + file, "w") as out:
        subprocess.run(["sqlite3", "-header", "-csv", "shop.db"], input=variant_sql(sql, MISSED) + "\n",
                       stdout=out, text=True, check=True)
"""
)

TEST_BODY = r"""
def norm(cell):
    try:
        return round(float(cell), 2)
    except ValueError:
        return cell.strip()


for name, rows in EXPECTED.items():
    path = "/app/answers/" + name
    try:
        with open(path, newline="") as fh:
            got = [row for row in csv.reader(fh) if row]
    except OSError as exc:
        fail(f"{path} missing: {exc}")
    if not got or [c.strip() for c in got[0]] != rows[0]:
        fail(f"{name}: header expected {rows[0]}, got {got[:1]}")
    if len(got) != len(rows):
        fail(f"{name}: expected {len(rows) - 1} data rows, got {len(got) - 1}")
    for i, (have, want) in enumerate(zip(got[1:], rows[1:]), start=1):
        if [norm(c) for c in have] != [norm(c) for c in want]:
            fail(f"{name}: row {i} expected {want}, got {have}")
"""


class SqliteQueryKnobs(Knobs):
    """Knobs of the sqlite-query family."""

    n_customers: int = knob(12, 10, 600, "breadth", "customers (orders scale with them)")
    n_questions: int = knob(2, 2, 6, "breadth", "questions to answer, one CSV each")
    conditions: int = knob(1, 1, 3, "depth", "1 valid statuses; 2 + a year filter; 3 + a HAVING threshold")
    dirty_data: int = knob(
        0, 0, 2, "depth", "0 clean; 1 inconsistent status spelling; 2 + items of deleted products"
    )


class SqliteQueryFamily(TaskFamily[SqliteQueryKnobs]):
    """Query a shop database built at image build time and write answers as CSV."""

    name = "sqlite-query"
    category = "databases"
    description = (
        "Answer questions by querying a SQLite database built at image build time; write CSV results."
    )
    skills = ["sqlite", "aggregation", "csv"]
    knob_model = SqliteQueryKnobs
    presets = {
        "easy": {"n_customers": 12, "n_questions": 2, "conditions": 1, "dirty_data": 0},
        "medium": {"n_customers": 40, "n_questions": 4, "conditions": 2, "dirty_data": 1},
        "hard": {"n_customers": 150, "n_questions": 6, "conditions": 3, "dirty_data": 2},
    }
    variants = ("includes_refunded", "inner_join_drops_empty_categories", "uses_current_price")
    edge_case_axes = {
        "includes_refunded": "depth",
        "inner_join_drops_empty_categories": "breadth",
        "uses_current_price": "depth",
    }

    def _data(
        self, rng: Any, knobs: SqliteQueryKnobs, year: int, edge_cases: frozenset[str]
    ) -> tuple[str, dict[str, Any]]:
        countries = rng.sample(COUNTRIES, 4)
        cats = rng.sample(CATEGORIES, 4 + knobs.n_questions // 3)
        empty_cat = cats[-1] if "inner_join_drops_empty_categories" in edge_cases else None
        refunded = "includes_refunded" in edge_cases
        discounted = "uses_current_price" in edge_cases
        products, pid = [], 0
        for cat in cats:
            for _ in range(3):
                pid += 1
                products.append((pid, f"{cat}-item-{pid}", cat, rng.randint(300, 9000)))
        sold = [p for p in products if p[2] != empty_cat]
        customers, orders, items = [], [], []
        oid = 0
        for cid in range(1, knobs.n_customers + 1):
            email = f"c{cid}@shop.example" if cid > 2 and rng.random() > 0.15 else rng.choice([None, ""])
            customers.append(
                (
                    cid,
                    f"{rng.choice(FIRST)} {rng.choice(LAST)}",
                    countries[cid % 4],
                    email,
                    f"{year - 2}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
                )
            )
            for k in range(rng.randint(1, 4)):
                oid += 1
                status = rng.choice(
                    ["completed"] * 5 + ["shipped"] * 2 + ["cancelled"] + (["refunded"] if refunded else [])
                )
                if cid == 1:
                    status = "cancelled"
                elif cid == 2 and k == 0 and refunded:
                    status = "refunded"
                if knobs.dirty_data >= 1 and rng.random() < 0.3:
                    status = rng.choice([status.upper(), status.title(), f" {status} "])
                when = (
                    f"{rng.choice([year - 1, year, year])}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
                )
                if cid == 2 and k == 0:
                    when = f"{year}-06-15"
                orders.append((oid, cid, when, status))
                for _ in range(rng.randint(1, 3)):
                    prod = rng.choice(products if "cancel" in status.lower() else sold)
                    price = (
                        prod[3] if rng.random() < 0.6 or not discounted else prod[3] - rng.randint(50, 250)
                    )
                    items.append((oid, prod[0], rng.randint(1, 5), price))
        # The anchor: three valid orders in `year` of customer 6 (the country of customer 2's
        # refunded order); the first sells every category but the empty one, at a discount when
        # prices paid differ, from products that are never deleted.
        for k in range(3):
            oid += 1
            orders.append((oid, 6, f"{year}-{3 + 3 * k:02d}-{rng.randint(1, 28):02d}", "completed"))
            kept = (
                [p for p in products if p[0] % 3 == 0 and p[2] != empty_cat] if k == 0 else [rng.choice(sold)]
            )
            for i, prod in enumerate(kept):
                price = prod[3] - rng.randint(50, 250) if discounted and i == 0 else prod[3]
                items.append((oid, prod[0], rng.randint(1, 5), price))
        if knobs.dirty_data >= 2:
            gone = {products[0][0], products[4][0]}
            products = [p for p in products if p[0] not in gone]
        lines = [SCHEMA, "BEGIN;"]
        for table, rows in (
            ("customers", customers),
            ("products", products),
            ("orders", orders),
            ("order_items", items),
        ):
            for row in rows:
                values = ", ".join(
                    "NULL" if v is None else repr(v) if isinstance(v, str) else str(v) for v in row
                )
                lines.append(f"INSERT INTO {table} VALUES ({values});")
        lines.append("COMMIT;")
        return "\n".join(lines) + "\n", {"countries": countries}

    def _questions(self, rng: Any, knobs: SqliteQueryKnobs, year: int) -> list[tuple[str, str, str]]:
        """(file, description, SQL) per question; the first two are always asked."""
        when = f" AND o.order_date BETWEEN '{year}-01-01' AND '{year}-12-31'" if knobs.conditions >= 2 else ""
        scope = f" placed in {year}" if knobs.conditions >= 2 else ""
        having = " HAVING COUNT(DISTINCT o.id) >= 3" if knobs.conditions >= 3 else ""
        spend = "SUM(i.quantity * i.unit_price_cents)"
        asked = [
            (
                "revenue_by_country.csv",
                f"columns `country,revenue`: revenue (sum of quantity x unit price paid, in currency units with 2 "
                f"decimals) of valid orders{scope} per customer country"
                + (", only for countries with at least 3 such orders" if having else "")
                + "; sorted by revenue descending, then country ascending.",
                f"SELECT c.country AS country, printf('%.2f', {spend} / 100.0) AS revenue\nFROM orders o\n"
                f"JOIN customers c ON c.id = o.customer_id\nJOIN order_items i ON i.order_id = o.id\n"
                f"WHERE {VALID}{when}\nGROUP BY c.country{having}\nORDER BY {spend} DESC, country ASC;",
            ),
            (
                "units_by_category.csv",
                f"columns `category,units`: total quantity sold in valid orders{scope} per product category, "
                "listing every category in `products` (0 when nothing was sold); sorted by units descending, "
                "then category ascending.",
                "SELECT p.category AS category, COALESCE(SUM(x.quantity), 0) AS units\n"
                "FROM (SELECT DISTINCT category FROM products) p\nLEFT JOIN (SELECT pr.category, i.quantity "
                "FROM order_items i JOIN orders o ON o.id = i.order_id\n"
                f"  JOIN products pr ON pr.id = i.product_id WHERE {VALID}{when}) x ON x.category = p.category\n"
                "GROUP BY p.category\nORDER BY units DESC, category ASC;",
            ),
        ]
        top = rng.randint(3, 5)
        extra = [
            (
                "top_customers.csv",
                f"columns `customer_id,name,total_spent`: the {top} customers with the highest spend (2 decimals) "
                f"in valid orders{scope}; ties broken by customer_id ascending.",
                f"SELECT c.id AS customer_id, c.name AS name, printf('%.2f', {spend} / 100.0) AS total_spent\n"
                "FROM orders o\nJOIN customers c ON c.id = o.customer_id\nJOIN order_items i ON i.order_id = o.id\n"
                f"WHERE {VALID}{when}\nGROUP BY c.id\nORDER BY {spend} DESC, c.id ASC\nLIMIT {top};",
            ),
            (
                "monthly_orders.csv",
                f"columns `month,orders`: number of valid orders per month (`YYYY-MM`) in {year}, only months "
                "with at least one, sorted by month.",
                "SELECT substr(o.order_date, 1, 7) AS month, COUNT(*) AS orders\nFROM orders o\n"
                f"WHERE {VALID} AND o.order_date LIKE '{year}-%'\nGROUP BY month\nORDER BY month;",
            ),
            (
                "inactive_customers.csv",
                f"columns `id,name`: customers without any valid order{scope}, sorted by id.",
                "SELECT c.id AS id, c.name AS name\nFROM customers c\nWHERE NOT EXISTS (SELECT 1 FROM orders o "
                f"WHERE o.customer_id = c.id AND {VALID}{when})\nORDER BY c.id;",
            ),
            (
                "missing_emails.csv",
                "columns `country,missing`: number of customers per country whose email is NULL or blank, "
                "only countries with at least one, sorted by country.",
                "SELECT country, COUNT(*) AS missing\nFROM customers\nWHERE email IS NULL OR TRIM(email) = ''\n"
                "GROUP BY country\nORDER BY country;",
            ),
        ]
        return asked + rng.sample(extra, knobs.n_questions - 2)

    def build(
        self, rng: random.Random, knobs: SqliteQueryKnobs, seed: int, edge_cases: frozenset[str]
    ) -> TaskParts:
        year = rng.randint(2021, 2024)
        script, _ = self._data(rng, knobs, year, edge_cases)
        questions = self._questions(rng, knobs, year)
        db = sqlite3.connect(":memory:")
        db.executescript(script)
        expected = {}
        for file, _, sql in questions:
            cursor = db.execute(sql)
            rows = [[str(v) for v in row] for row in cursor.fetchall()]
            if not rows:
                raise ValueError(f"{self.name}: empty answer for {file} (seed {seed})")
            expected[file] = [[d[0] for d in cursor.description], *rows]
        db.close()

        spelling = (
            " (statuses may differ in letter case and have surrounding spaces)" if knobs.dirty_data else ""
        )
        deleted = ""
        if knobs.dirty_data >= 2:
            deleted = (
                " Some order items reference products that no longer exist; they still count towards "
                "revenue and spend, but belong to no category."
            )
        listing = "\n".join(f"{n}. `/app/answers/{f}` with {d}" for n, (f, d, _) in enumerate(questions, 1))
        instruction = f"""# Answer questions from the shop database

`/app/shop.db` is a SQLite database with tables `customers(id, name, country, email, signup_date)`,
`products(id, name, category, price_cents)` (current prices), `orders(id, customer_id,
order_date, status)` (dates are `YYYY-MM-DD`) and `order_items(order_id, product_id, quantity,
unit_price_cents)` (the price actually paid). Money is stored in cents.

An order is **valid** when its status is `completed` or `shipped`{spelling}; `cancelled` and
`refunded` orders never count. Revenue and spend always use the price paid
(`order_items.unit_price_cents`).{deleted}

Write one CSV file per question (a header row with exactly the given column names, then the
rows in the required order; do not modify the database):

{listing}
"""
        return TaskParts(
            instruction=instruction,
            environment={
                "Dockerfile": STANDARD_DOCKERFILE
                + "RUN sqlite3 /app/shop.db < /app/.setup/shop.sql && rm -rf /app/.setup\n",
                "app/.setup/shop.sql": script,
            },
            tests={
                "test.sh": STANDARD_TEST_SH,
                "test_outputs.py": fail_fast_script(expected, TEST_BODY, imports=("csv",), embed="literal"),
            },
            solver=python_program(SOLVER, {"questions": [[q[0], q[2]] for q in questions]}),
        )


register_family(SqliteQueryFamily())
