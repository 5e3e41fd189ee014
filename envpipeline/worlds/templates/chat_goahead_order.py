"""mcp>cli>web>cli>mcp: a go-ahead in chat names a product -> shortlist -> buy -> note -> DM (the paper's example)."""

from __future__ import annotations

from envpipeline.models.world import Operation
from envpipeline.worlds.schema import FILES_APP
from envpipeline.worlds.task_builder import Context, TaskBuilder, eq, new_order_mention
from envpipeline.worlds.templates._life import dress
from envpipeline.worlds.templates.base import ORDER, Template, at, buy, has_products
from envpipeline.worlds.templates.registry import register_template

PURPOSES = ["the studio refit", "the client workshop", "the home office", "the next trip", "the team kit"]


def chat_goahead_order(ctx: Context) -> TaskBuilder:
    """The paper's example: mcp>cli>web>cli>mcp."""
    p, alt1, alt2 = ctx.rng.sample(ctx.products(), 3)
    c = ctx.rng.choice(ctx.contacts("colleague", "client"))
    purpose = ctx.rng.choice(PURPOSES)
    channel_id = ctx.reader.query("chat", "SELECT id FROM channels WHERE name = ?", [c.handle])[0]["id"]
    b = TaskBuilder("chat_goahead_order", facts={"sku": p["sku"], "product": p["name"], "peer": c.handle})
    b.setup = [
        Operation(
            app="chat",
            table="messages",
            op="insert",
            values={
                "channel_id": channel_id,
                "author": c.handle,
                "posted_at": at(ctx, "15:50"),
                "body": f"Options for {purpose}: {alt1['name']}, {p['name']}, {alt2['name']}.",
            },
        ),
        Operation(
            app="chat",
            table="messages",
            op="insert",
            values={
                "channel_id": channel_id,
                "author": c.handle,
                "posted_at": at(ctx, "16:00"),
                "body": f"Go ahead with the {p['name']} — order it when you can.",
            },
        ),
    ]
    b.instruction = dress(
        ctx,
        (
            f"{c.name} ({c.handle}) gave a go-ahead in chat for one product for {purpose}. Find it, "
            "put its name in documents/shortlist.txt using the shell, buy exactly that product in the "
            "web shop, record the order number in notes/orders.md, and send "
            f"{c.handle} a direct message with the order number."
        ),
    )
    b.sub(
        "mcp",
        f"Read the chat channel '{c.handle}' and find the go-ahead message.",
        f"Call chat_read_channel with channel '{c.handle}'; the go-ahead names the product.",
    )
    b.step(
        "mcp.read_chat",
        channel=c.handle,
        author=c.handle,
        pattern=r"Go ahead with the (.+?) —",
        vars=["product"],
        distractors={"product": [alt1["name"], alt2["name"]]},
    )
    b.sub(
        "cli",
        "Write the chosen product's name into documents/shortlist.txt.",
        "Use printf or echo with > documents/shortlist.txt in the home folder.",
    )
    b.step("cli.write_file", path="documents/shortlist.txt", content="Shortlist\n- {product}\n")
    b.crit(
        "file_contains",
        f"documents/shortlist.txt names {p['name']}",
        path="documents/shortlist.txt",
        text=p["name"],
    )
    b.expect(FILES_APP, p["name"], path="documents/shortlist.txt")
    b.sub(
        "web",
        "Search the storefront for the product, add it to the cart and place the order.",
        f"Search for '{p['name']}' on the shop page, add it to the cart, then press 'Place order'.",
    )
    buy(b, "product", p)
    b.sub(
        "cli",
        "Append the new order number to notes/orders.md.",
        "The order page shows the number (ORD-...); append it with echo ... >> notes/orders.md.",
    )
    b.step("cli.append_file", path="notes/orders.md", content="- {order}\n")
    b.crit(
        "file_contains",
        "notes/orders.md records the new order number",
        path="notes/orders.md",
        mention=new_order_mention(p["sku"]),
    )
    b.expect(FILES_APP, ORDER, path="notes/orders.md")
    b.sub(
        "mcp",
        f"Send {c.handle} a direct message with the order number.",
        f"Call dm_send with peer '{c.handle}' and put the ORD- number in the body.",
    )
    b.step("mcp.dm_send", peer=c.handle, body="Ordered it: order {order}.")
    b.crit(
        "row_added",
        f"a DM to {c.handle} mentions the new order number",
        app="dm",
        table="messages",
        where={"peer": eq(c.handle), "direction": eq("out")},
        field="body",
        mention=new_order_mention(p["sku"]),
    )
    b.expect("dm", f"{{peer={c.handle}}}", "{direction=out}", ORDER, table="messages")
    return b


register_template(Template("chat_goahead_order", has_products, chat_goahead_order))
