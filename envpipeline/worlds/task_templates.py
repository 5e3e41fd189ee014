"""The cross-interface task templates, grounded in the world day's data.

Each template reads real entities of the day (contacts, in-stock products, orders, confirmation
mail, stand-up messages, home files) and, where the task needs a trigger, seeds it with `setup`
operations that name those entities. Flows:

    chat_goahead_order     mcp>cli>web>cli>mcp   go-ahead in chat -> shortlist -> buy -> note -> DM
    dm_friend_request      mcp>web>mcp           a friend asks by DM -> buy -> DM back number + price
    mail_receipt_expense   web>cli>mcp>web       order mail -> expense file -> email total -> archive
    invite_to_agenda       web>cli>mcp           meeting mail -> agenda note -> confirm by email
    restock_from_note      cli>web>cli>mcp       restock list -> buy -> tick the list -> team chat
    reply_with_file        mcp>cli>web>cli       mail asks for a file -> read it -> reply -> log
    standup_digest         mcp>cli>web           teammate stand-up -> digest file -> email digest
    order_status_followup  cli>web>cli>mcp       todo item -> order status page -> tick -> DM
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from envpipeline.models.world import Operation
from envpipeline.worlds.schema import FILES_APP
from envpipeline.worlds.tasks import Context, TaskBuilder, eq, has, new_order_mention

ORDER = "{new:shop/orders.order_number}"
TOPICS = [
    "the Q2 budget",
    "the site survey",
    "the new client brief",
    "the venue walkthrough",
    "the draft contract",
    "the spring schedule",
    "the supplier shortlist",
    "the launch plan",
]
PLACES = ["Room 4B", "Harbour Cafe", "the studio", "Main Library, floor 2", "Central Station kiosk"]
PURPOSES = ["the studio refit", "the client workshop", "the home office", "the next trip", "the team kit"]


@dataclass(frozen=True)
class Template:
    """A task template: `applicable(ctx)` and `build(ctx) -> TaskBuilder`."""

    name: str
    applicable: Callable[[Context], bool]
    build: Callable[[Context], TaskBuilder]


def money(cents: int) -> str:
    """The storefront's price format ($1,234.56)."""
    return f"${cents / 100:,.2f}"


def _at(ctx: Context, hhmm: str) -> str:
    return f"{ctx.date}T{hhmm}:00"


def _has_products(ctx: Context) -> bool:
    return len(ctx.products()) >= 3


def _buy(b: TaskBuilder, product_var: str, sku: str) -> None:
    b.step("web.buy", product=product_var, vars={"sku": "sku", "order": "order", "price": "price"})
    b.crit(
        "row_added",
        f"a new shop order contains {sku}",
        2.0,
        app="shop",
        table="orders",
        where={"items_json": has(sku)},
    )
    b.expect("shop", sku, table="orders")


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
                "posted_at": _at(ctx, "15:50"),
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
                "posted_at": _at(ctx, "16:00"),
                "body": f"Go ahead with the {p['name']} — order it when you can.",
            },
        ),
    ]
    b.instruction = (
        f"{c.name} ({c.handle}) gave a go-ahead in chat for one product for {purpose}. Find it, "
        "put its name in documents/shortlist.txt using the shell, buy exactly that product in the "
        "web shop, record the order number in notes/orders.md, and send "
        f"{c.handle} a direct message with the order number."
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
    _buy(b, "product", p["sku"])
    b.sub(
        "cli",
        "Append the new order number to notes/orders.md.",
        "The order page shows the number (ORD-...); append it with echo ... >> notes/orders.md.",
    )
    b.step("cli.append_file", path="notes/orders.md", content="- {order}: {product}\n")
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
    b.step("mcp.dm_send", peer=c.handle, body="Ordered the {product}: order {order}.")
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
                "sent_at": _at(ctx, "16:10"),
                "body": f"Could you order me a {p['name']} from the shop? I'll pay you back.",
            },
        )
    ]
    b.instruction = (
        f"{c.name} asked you in a direct message to order something for them. Order it in the "
        f"web shop and reply to {c.handle} by DM with the order number and the product's price."
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
    _buy(b, "product", p["sku"])
    b.sub(
        "mcp",
        f"Reply to {c.handle} with the order number and price.",
        f"dm_send to '{c.handle}': include the ORD- number and {price}.",
    )
    b.step("mcp.dm_send", peer=c.handle, body="Done! Ordered the {product} for you: order {order}, {price}.")
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


_ORDER_MAIL = re.compile(r"(?:Order (ORD-[\w-]+) confirmed|Receipt for order (ORD-[\w-]+))")


def _order_mails(ctx: Context) -> list[dict]:
    rows = ctx.reader.query("mail", "SELECT * FROM messages WHERE folder = 'inbox' ORDER BY id")
    return [
        r
        for r in rows
        if _ORDER_MAIL.search(r["subject"] or "")
        and re.search(r"(?:Total:|TOTAL) \d+\.\d{2}", r["body"] or "")
    ]


def mail_receipt_expense(ctx: Context) -> TaskBuilder:
    """web>cli>mcp>web: file an order email as an expense."""
    m = ctx.rng.choice(_order_mails(ctx))
    match = _ORDER_MAIL.search(m["subject"])
    number = match.group(1) or match.group(2)
    total = re.search(r"(?:Total:|TOTAL) (\d+\.\d{2})", m["body"]).group(1)
    c = ctx.rng.choice(ctx.contacts("colleague", "client"))
    path = f"downloads/expense-{number}.txt"
    b = TaskBuilder("mail_receipt_expense", facts={"order": number, "total": total, "mail_id": m["id"]})
    b.instruction = (
        f"File order {number} as an expense: find the email '{m['subject']}' in the webmail, write "
        "the total into "
        f"{path} with the shell, email the total to {c.name} <{c.email}> through the mail tool "
        f"with the subject 'Expense {number}', then archive the order email in the webmail."
    )
    b.sub(
        "web",
        f"Open the webmail and find the email '{m['subject']}'.",
        f"The inbox message '{m['subject']}' has the total in its body.",
    )
    b.step(
        "web.read_mail",
        subject=m["subject"],
        pattern=r"(?:Total:|TOTAL) (\d+\.\d{2})",
        vars=["total"],
        id_var="msg",
        distractors={"total": [f"{float(total) + 1:.2f}"]},
    )
    b.sub(
        "cli", f"Write the order number and total into {path}.", f"printf 'Order ...\\nTotal ...\\n' > {path}"
    )
    b.step("cli.write_file", path=path, content=f"Order {number}\nTotal {{total}}\n")
    b.crit("file_contains", f"{path} holds the total {total}", path=path, text=total)
    b.expect(FILES_APP, total, path=path)
    b.sub(
        "mcp",
        f"Email the total to {c.email} with the subject 'Expense {number}'.",
        f"Call mail_send(to='{c.email}', subject='Expense {number}', body=... the total).",
    )
    b.step(
        "mcp.mail_send", to=c.email, subject=f"Expense {number}", body=f"Order {number} came to {{total}}."
    )
    b.crit(
        "row_added",
        f"a sent email to {c.email} about {number} states {total}",
        2.0,
        app="mail",
        table="messages",
        where={"folder": eq("sent"), "recipients": has(c.email), "subject": has(number), "body": has(total)},
    )
    b.expect("mail", "{folder=sent}", c.email, number, total, table="messages")
    b.sub("web", f"Archive the email about {number} in the webmail.", "Open the message and press 'Archive'.")
    b.step("web.archive_mail", id_var="msg")
    b.crit(
        "row_changed",
        f"the email about {number} was archived",
        app="mail",
        table="messages",
        where={"id": eq(m["id"]), "subject": eq(m["subject"])},
        field="folder",
        to="archive",
    )
    b.expect("mail", "{folder=archive}", m["subject"], table="messages")
    return b


def invite_to_agenda(ctx: Context) -> TaskBuilder:
    """web>cli>mcp: calendar-from-mail, kept in an agenda note."""
    c = ctx.rng.choice(ctx.contacts("colleague", "client"))
    topic, place = ctx.rng.choice(TOPICS), ctx.rng.choice(PLACES)
    from envpipeline.worlds.schema import day_date

    date = day_date(ctx.day + ctx.rng.randint(2, 6)).isoformat()
    time = ctx.rng.choice(["09:30", "11:00", "14:30", "16:15"])
    b = TaskBuilder("invite_to_agenda", facts={"date": date, "time": time, "place": place, "topic": topic})
    b.setup = [
        Operation(
            app="mail",
            table="messages",
            op="insert",
            values={
                "folder": "inbox",
                "sender": c.email,
                "recipients": ctx.persona.email,
                "is_read": 0,
                "subject": f"Meeting request: {topic}",
                "sent_at": _at(ctx, "15:30"),
                "body": f"Hi {ctx.persona.name.split()[0]}, can we meet on {date} at {time} at {place} to discuss "
                f"{topic}? Best, {c.name}",
            },
        )
    ]
    b.instruction = (
        f"{c.name} emailed a meeting request about {topic}. Read it in the webmail, add a line "
        "'- DATE TIME TOPIC @ PLACE' to notes/agenda.md with the shell, and confirm the date and "
        f"time to {c.email} by email through the mail tool."
    )
    b.sub(
        "web",
        "Read the meeting request in the webmail.",
        f"Open the inbox message 'Meeting request: {topic}'.",
    )
    b.step(
        "web.read_mail",
        subject=f"Meeting request: {topic}",
        pattern=r"meet on (\S+) at (\S+) at (.+?) to discuss",
        vars=["date", "time", "place"],
        distractors={"date": [ctx.date], "time": ["10:00"]},
    )
    b.sub(
        "cli", "Append the meeting to notes/agenda.md.", "echo '- DATE TIME TOPIC @ PLACE' >> notes/agenda.md"
    )
    b.step("cli.append_file", path="notes/agenda.md", content=f"- {{date}} {{time}} {topic} @ {{place}}\n")
    b.crit(
        "file_contains", f"notes/agenda.md has {date} {time}", path="notes/agenda.md", text=f"{date} {time}"
    )
    b.crit("file_contains", f"notes/agenda.md names the place {place}", path="notes/agenda.md", text=place)
    b.expect(FILES_APP, f"{date} {time}", place, path="notes/agenda.md")
    b.sub(
        "mcp",
        f"Confirm {date} at {time} to {c.email} by email.",
        f"mail_send to '{c.email}' with a body like 'Confirmed: {date} at {time}'.",
    )
    b.step(
        "mcp.mail_send",
        to=c.email,
        subject=f"Re: Meeting request: {topic}",
        body="Confirmed: {date} at {time}, {place}.",
    )
    b.crit(
        "row_added",
        f"a sent email to {c.email} confirms {date} at {time}",
        2.0,
        app="mail",
        table="messages",
        where={"folder": eq("sent"), "recipients": has(c.email), "body": has(f"{date} at {time}")},
    )
    b.expect("mail", "{folder=sent}", c.email, f"{date} at {time}", table="messages")
    return b


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
    b.instruction = (
        f"Your {p['category']} restock list is in {path}. Order the item that is running low in the "
        "web shop, tick "
        "it off in the list as '- [x] NAME (ordered ORDER-NUMBER)' with the shell, and post the "
        "order number in the 'team' chat channel."
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
    _buy(b, "product", p["sku"])
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
    b.step("mcp.chat_post", channel="team", body="Restocked {product}, order {order}.")
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


def _shareable(ctx: Context) -> list[tuple[str, str]]:
    out = []
    for path in ctx.reader.list_files():
        if path == "todo.txt" or not path.endswith((".md", ".txt")):
            continue
        lines = [
            ln.strip()
            for ln in ctx.reader.read_file(path).splitlines()
            if ln.strip() and not ln.startswith("#") and 12 <= len(ln.strip()) <= 120
        ]
        if lines:
            out.append((path, lines[0]))
    return out


def reply_with_file(ctx: Context) -> TaskBuilder:
    """mcp>cli>web>cli: answer a mail with a file's content."""
    path, key = ctx.rng.choice(_shareable(ctx))
    c = ctx.rng.choice(ctx.contacts("client", "colleague"))
    title = path.rsplit("/", 1)[-1]
    b = TaskBuilder("reply_with_file", facts={"path": path, "key": key})
    b.setup = [
        Operation(
            app="mail",
            table="messages",
            op="insert",
            values={
                "folder": "inbox",
                "sender": c.email,
                "recipients": ctx.persona.email,
                "is_read": 0,
                "subject": f"Request: {title}",
                "sent_at": _at(ctx, "15:40"),
                "body": f"Hi, could you send me the contents of {path}? Thanks, {c.name}",
            },
        )
    ]
    b.instruction = (
        f"{c.name} asked by email for one of your files. Read the request with the mail tool, get "
        f"the file's content with the shell, send it to {c.email} from the webmail with the subject "
        f"'Re: Request: {title}', and log '- sent PATH to {c.email}' in notes/sent-log.md."
    )
    b.sub("mcp", "Read the request email.", f"mail_list then mail_read the message 'Request: {title}'.")
    b.step(
        "mcp.read_mail",
        subject=f"Request: {title}",
        pattern=r"contents of (\S+)\?",
        vars=["path"],
        distractors={"path": ["notes/ideas.md" if path != "notes/ideas.md" else "todo.txt"]},
    )
    b.sub("cli", "Print the requested file.", f"cat {path}")
    b.step("cli.read_file", path="{path}", pattern=r"(?s)(.+)", vars=["content"])
    b.sub(
        "web",
        f"Reply to {c.email} with the file content from the webmail.",
        "Open Compose, paste the content into the body and send.",
    )
    b.step("web.send_mail", to=c.email, subject=f"Re: Request: {title}", body="{content}")
    b.crit(
        "row_added",
        f"a sent email to {c.email} has subject 'Re: Request: {title}'",
        app="mail",
        table="messages",
        where={"folder": eq("sent"), "recipients": has(c.email), "subject": has(title)},
    )
    b.crit(
        "row_added",
        f"the reply carries the content of {path}",
        2.0,
        app="mail",
        table="messages",
        where={"folder": eq("sent"), "recipients": has(c.email), "body": has(key)},
    )
    b.expect("mail", "{folder=sent}", c.email, title, key, table="messages")
    b.sub(
        "cli",
        "Log the sent file in notes/sent-log.md.",
        f"echo '- sent {path} to {c.email}' >> notes/sent-log.md",
    )
    b.step("cli.append_file", path="notes/sent-log.md", content=f"- sent {{path}} to {c.email}\n")
    b.crit("file_contains", f"notes/sent-log.md logs {path}", path="notes/sent-log.md", text=f"sent {path}")
    b.expect(FILES_APP, path, path="notes/sent-log.md")
    return b


def _standups(ctx: Context) -> list[dict]:
    handles = {c.handle for c in ctx.persona.contacts}
    rows = ctx.reader.query(
        "chat",
        "SELECT m.* FROM messages m JOIN channels c ON c.id = m.channel_id "
        "WHERE c.name = 'team' ORDER BY m.id",
    )
    return [r for r in rows if r["author"] in handles and r["body"].startswith("Stand-up: ")]


def standup_digest(ctx: Context) -> TaskBuilder:
    """mcp>cli>web: a stand-up digest."""
    last = _standups(ctx)[-1]
    update = last["body"].removeprefix("Stand-up: ")
    author = last["author"]
    lead = ctx.rng.choice([c for c in ctx.persona.contacts if c.handle != author] or ctx.persona.contacts)
    path = f"notes/standup-{ctx.date}.md"
    b = TaskBuilder("standup_digest", facts={"update": update, "author": author})
    b.instruction = (
        f"Write a stand-up digest: read {author}'s latest stand-up in the 'team' chat, save it as "
        f"'- {author}: UPDATE' in {path} with the shell, and email it to {lead.name} <{lead.email}> "
        f"from the webmail with the subject 'Stand-up digest {ctx.date}'."
    )
    b.sub(
        "mcp", f"Read {author}'s latest stand-up in the team channel.", "chat_read_channel(channel='team')."
    )
    b.step(
        "mcp.read_chat",
        channel="team",
        author=author,
        pattern=r"Stand-up: (.+)",
        vars=["update"],
        distractors={"update": ["blocked on a review."]},
    )
    b.sub("cli", f"Write the digest file {path}.", f"printf '# Stand-up\\n- {author}: ...\\n' > {path}")
    b.step("cli.write_file", path=path, content=f"# Stand-up {ctx.date}\n\n- {author}: {{update}}\n")
    b.crit("file_contains", f"{path} holds {author}'s update", path=path, text=f"{author}: {update}")
    b.expect(FILES_APP, author, update, path=path)
    b.sub(
        "web",
        f"Email the digest to {lead.email} from the webmail.",
        f"Compose to {lead.email}, subject 'Stand-up digest {ctx.date}', body with the update.",
    )
    b.step(
        "web.send_mail", to=lead.email, subject=f"Stand-up digest {ctx.date}", body=f"{author}: {{update}}"
    )
    b.crit(
        "row_added",
        f"a sent email to {lead.email} is titled 'Stand-up digest {ctx.date}'",
        app="mail",
        table="messages",
        where={
            "folder": eq("sent"),
            "recipients": has(lead.email),
            "subject": has(f"Stand-up digest {ctx.date}"),
        },
    )
    b.crit(
        "row_added",
        "the digest email carries the update",
        2.0,
        app="mail",
        table="messages",
        where={"folder": eq("sent"), "recipients": has(lead.email), "body": has(update)},
    )
    b.expect("mail", "{folder=sent}", lead.email, "Stand-up digest", update, table="messages")
    return b


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
    b.instruction = (
        "Your todo.txt asks you to check an order's status. Look the order up in the web shop, "
        "tick the todo line as '- [x] check the status of order NUMBER: STATUS' with the shell, "
        f"and tell {c.name} ({c.handle}) the status by direct message."
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


TEMPLATES: dict[str, Template] = {
    t.name: t
    for t in [
        Template("chat_goahead_order", _has_products, chat_goahead_order),
        Template("dm_friend_request", _has_products, dm_friend_request),
        Template("mail_receipt_expense", lambda ctx: bool(_order_mails(ctx)), mail_receipt_expense),
        Template("invite_to_agenda", lambda ctx: True, invite_to_agenda),
        Template("restock_from_note", _has_products, restock_from_note),
        Template("reply_with_file", lambda ctx: bool(_shareable(ctx)), reply_with_file),
        Template("standup_digest", lambda ctx: bool(_standups(ctx)), standup_digest),
        Template(
            "order_status_followup",
            lambda ctx: bool(ctx.reader.query("shop", "SELECT id FROM orders")),
            order_status_followup,
        ),
    ]
}
