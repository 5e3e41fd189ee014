"""The task-template plug-in and the helpers several templates share.

A template module defines ``applicable(ctx)`` and ``build(ctx)`` and ends with
``register_template(Template(name, applicable, build))``; the module is named after the template.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from envpipeline.worlds.task_builder import Context, TaskBuilder, eq, has

#: The new order's number, as the state-diff judge's token (resolved from the rows added).
ORDER = "{new:shop/orders.order_number}"


@dataclass(frozen=True)
class Template:
    """A task template: `applicable(ctx)` and `build(ctx) -> TaskBuilder`."""

    name: str
    applicable: Callable[[Context], bool]
    build: Callable[[Context], TaskBuilder]


def money(cents: int) -> str:
    """The storefront's price format ($1,234.56)."""
    return f"${cents / 100:,.2f}"


def at(ctx: Context, hhmm: str) -> str:
    """The frozen timestamp of `hhmm` on the context's day."""
    return f"{ctx.date}T{hhmm}:00"


def has_products(ctx: Context) -> bool:
    """At least three in-stock products (the shopping templates draw up to three)."""
    return len(ctx.products()) >= 3


def buy(b: TaskBuilder, product_var: str, product: dict) -> None:
    """The web purchase sub-task's step, its criterion and expectation. The criterion asks for a
    new order of one unit of the product and nothing else (its total is that unit's price): a
    request for 'a' product is not met by four of it (a cart left full on an earlier day) or by it
    among others, which 'contains the SKU' let through."""
    sku = product["sku"]
    b.step("web.buy", product=product_var, vars={"sku": "sku", "order": "order", "price": "price"})
    b.crit(
        "row_added",
        f"a new shop order of one {sku} and nothing else",
        2.0,
        app="shop",
        table="orders",
        where={"items_json": has(sku), "total_cents": eq(product["price_cents"])},
    )
    b.expect("shop", sku, table="orders")
