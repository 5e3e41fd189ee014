"""cli>web>cli>mcp: a restock list in home/ -> buy the open item -> tick the list -> team chat."""

from __future__ import annotations

from envpipeline.models.world import Operation
from envpipeline.worlds.schema import FILES_APP
from envpipeline.worlds.task_builder import Context, TaskBuilder, eq, new_order_mention
from envpipeline.worlds.templates._life import dress
from envpipeline.worlds.templates.base import ORDER, Template, buy, has_products
from envpipeline.worlds.templates.registry import register_template


def restock_from_note(ctx: Context) -> TaskBuilder:
    """cli>web>cli>mcp: a restock list in home/."""
    p, done = ctx.rng.sample(ctx.products(), 2)
    path = f"notes/restock-{p['category']}.md"
    b = TaskBuilder("restock_from_note", facts={"sku": p["sku"], "product": p["name"]})
    b.setup = [
        Operation(
            app=FILES_APP,
            op="write_file",
            path=path,
            content=(f"# Restock list\n\n- [x] {done['name']} (done)\n- [ ] {p['name']} (running low)\n"),
        )
    ]
    b.instruction = dress(
        ctx,
        (
            f"Your {p['category']} restock list is in {path}. Order the item that is running low in the "
            "web shop, tick "
            "it off in the list as '- [x] NAME (ordered ORDER-NUMBER)' with the shell, and post the "
            "order number in the 'team' chat channel."
        ),
    )
    b.sub(
        "cli",
        f"Read {path} and find the open item.",
        f"cat {path}; the open item is '- [ ] ... (running low)'.",
    )
    b.step(
        "cli.read_file",
        path=path,
        pattern=r"- \[ \] (.+?) \(running low\)",
        vars=["product"],
        distractors={"product": [done["name"]]},
    )
    b.sub("web", "Buy the item in the storefront.", f"Search for '{p['name']}' and place an order for it.")
    buy(b, "product", p)
    b.sub(
        "cli",
        f"Tick the item off in {path} with the order number.",
        "Use sed -i to turn '- [ ] NAME (running low)' into '- [x] NAME (ordered ORD-...)'.",
    )
    b.step(
        "cli.replace_line",
        path=path,
        old="- [ ] {product} (running low)",
        new="- [x] {product} (ordered {order})",
    )
    b.crit(
        "file_contains",
        f"{path} ticks {p['name']} off with the new order number",
        path=path,
        text=f"- [x] {p['name']} (ordered ",
        mention=new_order_mention(p["sku"]),
    )
    b.expect(FILES_APP, f"[x] {p['name']}", ORDER, path=path)
    b.sub("mcp", "Post the order number in the team channel.", "chat_post(channel='team', body=... ORD-...).")
    b.step("mcp.chat_post", channel="team", body="Restocked: order {order}.")
    team = ctx.reader.query("chat", "SELECT id FROM channels WHERE name = 'team'")[0]["id"]
    b.crit(
        "row_added",
        "a team chat message by you mentions the new order number",
        app="chat",
        table="messages",
        where={"channel_id": eq(team), "author": eq(ctx.persona.username)},
        field="body",
        mention=new_order_mention(p["sku"]),
    )
    b.expect("chat", f"{{author={ctx.persona.username}}}", ORDER, table="messages")
    return b


register_template(Template("restock_from_note", has_products, restock_from_note))
