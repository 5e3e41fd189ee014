"""web>cli>mcp>web: an order email -> an expense file -> email the total -> archive the email."""

from __future__ import annotations

import re
from typing import Any

from envpipeline.errors import ConfigError
from envpipeline.worlds.schema import FILES_APP
from envpipeline.worlds.task_builder import Context, TaskBuilder, eq, has, to
from envpipeline.worlds.templates._life import dress
from envpipeline.worlds.templates.base import Template
from envpipeline.worlds.templates.registry import register_template

_ORDER_MAIL = re.compile(r"(?:Order (ORD-[\w-]+) confirmed|Receipt for order (ORD-[\w-]+))")


def _order_mails(ctx: Context) -> list[dict[str, Any]]:
    """Inbox mails about an order (confirmation or receipt) that state a total, by id."""
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
    order_match = _ORDER_MAIL.search(m["subject"])
    total_match = re.search(r"(?:Total:|TOTAL) (\d+\.\d{2})", m["body"])
    if order_match is None or total_match is None:  # _order_mails keeps only mails with both
        raise ConfigError(f"mail {m['id']} is not an order email that states a total")
    number = order_match.group(1) or order_match.group(2)
    total = total_match.group(1)
    c = ctx.rng.choice(ctx.contacts("colleague", "client"))
    path = f"downloads/expense-{number}.txt"
    b = TaskBuilder("mail_receipt_expense", facts={"order": number, "total": total, "mail_id": m["id"]})
    b.instruction = dress(
        ctx,
        (
            f"File order {number} as an expense: find the email '{m['subject']}' in the webmail, write "
            "the total into "
            f"{path} with the shell, email the total to {c.name} <{c.email}> through the mail tool "
            f"with the subject 'Expense {number}', then archive the order email in the webmail."
        ),
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
        where={"folder": eq("sent"), "recipients": to(c.email), "subject": has(number), "body": has(total)},
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


def applicable(ctx: Context) -> bool:
    """The inbox holds an order email that states a total."""
    return bool(_order_mails(ctx))


register_template(Template("mail_receipt_expense", applicable, mail_receipt_expense))
