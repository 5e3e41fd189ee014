"""cli>web>cli>mcp: a todo item -> the order's status page -> tick the item -> DM the status."""

from __future__ import annotations

from envpipeline.models.world import Operation
from envpipeline.worlds.schema import FILES_APP
from envpipeline.worlds.task_builder import Context, TaskBuilder, eq, has
from envpipeline.worlds.templates._life import dress
from envpipeline.worlds.templates.base import Template
from envpipeline.worlds.templates.registry import register_template


def order_status_followup(ctx: Context) -> TaskBuilder:
    """cli>web>cli>mcp: follow up an existing order from the todo list."""
    order = ctx.rng.choice(ctx.reader.query("shop", "SELECT * FROM orders ORDER BY id"))
    number, status = order["order_number"], order["status"]
    c = ctx.rng.choice(ctx.contacts("friend", "family"))
    b = TaskBuilder("order_status_followup", facts={"order": number, "status": status, "peer": c.handle})
    b.setup = [
        Operation(
            app=FILES_APP,
            op="append_file",
            path="todo.txt",
            content=f"- [ ] check the status of order {number}\n",
        )
    ]
    b.instruction = dress(
        ctx,
        (
            "Your todo.txt asks you to check an order's status. Look the order up in the web shop, "
            "tick the todo line as '- [x] check the status of order NUMBER: STATUS' with the shell, "
            f"and tell {c.name} ({c.handle}) the status by direct message."
        ),
    )
    b.sub("cli", "Find the open order item in todo.txt.", "cat todo.txt")
    b.step(
        "cli.read_file",
        path="todo.txt",
        pattern=r"- \[ \] check the status of order (ORD-[\w-]+)",
        vars=["order"],
    )
    b.sub("web", "Open the order page in the storefront and read its status.", f"Open /orders/{number}.")
    b.step("web.order_status", order="order", var="status", distractors={"status": ["cancelled"]})
    b.sub(
        "cli",
        "Tick the todo line with the status.",
        "sed -i 's/- \\[ \\] check .../- [x] ...: STATUS/' todo.txt",
    )
    b.step(
        "cli.replace_line",
        path="todo.txt",
        old="- [ ] check the status of order {order}",
        new="- [x] check the status of order {order}: {status}",
    )
    b.crit(
        "file_contains",
        f"todo.txt ticks order {number} with its status '{status}'",
        path="todo.txt",
        text=f"- [x] check the status of order {number}: {status}",
    )
    b.expect(FILES_APP, f"[x] check the status of order {number}: {status}", path="todo.txt")
    b.sub(
        "mcp", f"Tell {c.handle} the status by DM.", f"dm_send(peer='{c.handle}', body='... {number} ...')."
    )
    b.step("mcp.dm_send", peer=c.handle, body="Update: order {order} is {status}.")
    b.crit(
        "row_added",
        f"a DM to {c.handle} gives {number} and '{status}'",
        2.0,
        app="dm",
        table="messages",
        where={"peer": eq(c.handle), "direction": eq("out"), "body": has(number)},
    )
    b.crit(
        "row_added",
        f"the DM states the status '{status}'",
        app="dm",
        table="messages",
        where={"peer": eq(c.handle), "direction": eq("out"), "body": has(status)},
    )
    b.expect("dm", f"{{peer={c.handle}}}", "{direction=out}", number, status, table="messages")
    return b


def applicable(ctx: Context) -> bool:
    """The shop has at least one order."""
    return bool(ctx.reader.query("shop", "SELECT id FROM orders"))


register_template(Template("order_status_followup", applicable, order_status_followup))
