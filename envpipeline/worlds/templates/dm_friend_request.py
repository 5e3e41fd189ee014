"""mcp>web>mcp: a friend asks for a product by DM -> buy it -> DM back the order number and price."""

from __future__ import annotations

from envpipeline.models.world import Operation
from envpipeline.worlds.task_builder import Context, TaskBuilder, eq, has, new_order_mention
from envpipeline.worlds.templates._life import dress
from envpipeline.worlds.templates.base import ORDER, Template, at, buy, has_products, money
from envpipeline.worlds.templates.registry import register_template


def dm_friend_request(ctx: Context) -> TaskBuilder:
    """mcp>web>mcp: a friend asks for a product by DM."""
    p, alt = ctx.rng.sample(ctx.products(), 2)
    c = ctx.rng.choice(ctx.contacts("friend", "family"))
    price = money(p["price_cents"])
    b = TaskBuilder("dm_friend_request", facts={"sku": p["sku"], "price": price, "peer": c.handle})
    b.setup = [
        Operation(
            app="dm",
            table="messages",
            op="insert",
            values={
                "peer": c.handle,
                "direction": "in",
                "sent_at": at(ctx, "16:10"),
                "body": f"Could you order me a {p['name']} from the shop? I'll pay you back.",
            },
        )
    ]
    b.instruction = dress(
        ctx,
        (
            f"{c.name} asked you in a direct message to order something for them. Order it in the "
            f"web shop and reply to {c.handle} by DM with the order number and the product's price."
        ),
    )
    b.sub("mcp", f"Read the DM conversation with {c.handle}.", f"Call dm_read with peer '{c.handle}'.")
    b.step(
        "mcp.read_dm",
        peer=c.handle,
        pattern=r"order me an? (.+?) from the shop",
        vars=["product"],
        distractors={"product": [alt["name"]]},
    )
    b.sub(
        "web",
        "Buy the requested product in the storefront.",
        f"Search for '{p['name']}', note its price on the product page, add it and place the order.",
    )
    buy(b, "product", p)
    b.sub(
        "mcp",
        f"Reply to {c.handle} with the order number and price.",
        f"dm_send to '{c.handle}': include the ORD- number and {price}.",
    )
    b.step("mcp.dm_send", peer=c.handle, body="Done! Ordered it for you: order {order}, {price}.")
    b.crit(
        "row_added",
        f"a DM to {c.handle} mentions the new order number",
        app="dm",
        table="messages",
        where={"peer": eq(c.handle), "direction": eq("out")},
        field="body",
        mention=new_order_mention(p["sku"]),
    )
    b.crit(
        "row_added",
        f"a DM to {c.handle} states the price {price}",
        app="dm",
        table="messages",
        where={"peer": eq(c.handle), "direction": eq("out"), "body": has(price)},
    )
    b.expect("dm", f"{{peer={c.handle}}}", "{direction=out}", ORDER, price, table="messages")
    return b


register_template(Template("dm_friend_request", has_products, dm_friend_request))
