"""Templates over the bank's history (web bank pages, MCP DM/mail/flights, shell notes).

salary_to_savings      web>web>cli>mcp  a share of a salary paid on an earlier day goes to savings
savings_transfer_log   web>cli>mcp      an earlier transfer to savings, logged and told by DM
pay_friend_back        mcp>web>web>cli>mcp  a friend's share request for plans made earlier, paid
balance_report         web>cli>mcp      both balances (every earlier posting) filed and emailed
trip_savings_transfer  mcp>web>cli      money set aside for a trip booked on an earlier day
"""

from __future__ import annotations

from envpipeline.models.world import Operation
from envpipeline.worlds.schema import FILES_APP
from envpipeline.worlds.task_builder import Context, TaskBuilder, eq, has, to
from envpipeline.worlds.templates._life import history_rows, phrase, prefer_history
from envpipeline.worlds.templates.base import Template, at
from envpipeline.worlds.templates.calendar_tasks import _plans
from envpipeline.worlds.templates.flight_tasks import _confirmed, other_confirmations
from envpipeline.worlds.templates.registry import register_template

BUDGET = "notes/budget.md"


def plain(cents: int) -> str:
    """Cents as a plain amount (3400.00), the way the bank form takes it."""
    return f"{cents / 100:.2f}"


def _account_id(ctx: Context, name: str) -> int:
    return int(ctx.reader.query("bank", "SELECT id FROM accounts WHERE name = ?", [name])[0]["id"])


def _balance(ctx: Context, name: str) -> int:
    return int(
        ctx.reader.query("bank", "SELECT balance_cents FROM accounts WHERE name = ?", [name])[0][
            "balance_cents"
        ]
    )


def _amounts(ctx: Context, not_cents: int) -> list[str]:
    rows = ctx.reader.query("bank", "SELECT DISTINCT amount_cents FROM transactions")
    return [plain(abs(r["amount_cents"])) for r in rows if abs(r["amount_cents"]) != abs(not_cents)] or [
        "1.00"
    ]


def _transfer_criteria(b: TaskBuilder, ctx: Context, cents: int, memo: str) -> None:
    b.crit(
        "row_added",
        f"savings receives {plain(cents)} ({memo})",
        2.0,
        app="bank",
        table="transactions",
        where={"account_id": eq(_account_id(ctx, "Savings")), "amount_cents": eq(cents), "memo": has(memo)},
    )
    b.crit(
        "row_count_delta",
        f"checking pays out {plain(cents)}",
        app="bank",
        table="transactions",
        where={"account_id": eq(_account_id(ctx, "Checking")), "amount_cents": eq(-cents)},
        delta=1,
    )
    b.expect("bank", memo, table="transactions")


def _salaries(ctx: Context) -> list[dict]:
    return history_rows(ctx, "bank", "transactions", "memo LIKE 'Salary%' AND amount_cents > 0")


def salary_to_savings(ctx: Context) -> TaskBuilder:
    """A share of the salary paid on an earlier day moves to savings; a budget line and a DM."""
    tx = prefer_history(ctx, _salaries(ctx))
    assert tx is not None
    share = ctx.rng.choice([5, 10, 15, 20, 25])
    cents = tx["amount_cents"] * share // 100
    when = tx["posted_at"][:10]
    memo = f"salary {when}"
    c = ctx.rng.choice(ctx.contacts("family", "friend"))
    b = TaskBuilder("salary_to_savings", facts={"salary": plain(tx["amount_cents"]), "saved": plain(cents)})
    b.instruction = phrase(
        ctx,
        [
            "Move {share}% of the salary that came in on {when} from checking to savings in the web bank "
            "(memo '{memo}'), append '- {when} salary: saved <amount>' to {path} from the shell, and tell "
            "{handle} by direct message 'Saved <amount> from my salary.'",
            "Pay yourself first: {share}% of my {when} salary should go to savings. Do the transfer on the "
            "bank website with the memo '{memo}', log '- {when} salary: saved <amount>' in {path} with "
            "the shell, then DM {handle} 'Saved <amount> from my salary.'",
            "Look up the salary of {when} in the web bank and transfer {share}% of it to savings (memo "
            "'{memo}'). Then add '- {when} salary: saved <amount>' to {path} in the terminal and send "
            "{handle} the direct message 'Saved <amount> from my salary.'",
        ],
        share=share,
        when=when,
        memo=memo,
        path=BUDGET,
        handle=c.handle,
    )
    b.sub("web", f"Read the salary of {when}.", "Open /bank/checking and find the 'Salary' line.")
    b.step(
        "web.find_transaction",
        account="checking",
        match={"memo": "Salary", "posted_at": when},
        vars={"salary": "amount"},
        distractors={"salary": _amounts(ctx, tx["amount_cents"])},
    )
    b.sub(
        "web",
        f"Transfer {share}% to savings.",
        f"/bank/transfer: Checking -> Savings, {plain(cents)}, memo '{memo}'.",
    )
    b.step(
        "web.transfer",
        source="Checking",
        target="Savings",
        amount="{salary}",
        percent=share,
        memo=memo,
        var="saved",
    )
    _transfer_criteria(b, ctx, cents, memo)
    line = f"- {when} salary: saved {plain(cents)}"
    b.sub("cli", f"Log it in {BUDGET}.", f"echo '{line}' >> {BUDGET}")
    b.step("cli.append_file", path=BUDGET, content=f"- {when} salary: saved {{saved}}\n")
    b.crit("file_contains", f"{BUDGET} logs {plain(cents)} saved", path=BUDGET, text=line)
    b.expect(FILES_APP, plain(cents), path=BUDGET)
    b.sub("mcp", f"Tell {c.handle} by DM.", f"dm_send to {c.handle}: 'Saved {plain(cents)} from my salary.'")
    b.step("mcp.dm_send", peer=c.handle, body="Saved {saved} from my salary.")
    b.crit(
        "row_added",
        f"a DM to {c.handle} says {plain(cents)} was saved",
        app="dm",
        table="messages",
        where={"peer": eq(c.handle), "direction": eq("out"), "body": has(f"Saved {plain(cents)}")},
    )
    b.expect("dm", c.handle, plain(cents), table="messages")
    return b


def _transfers(ctx: Context) -> list[dict]:
    return history_rows(ctx, "bank", "transactions", "memo = 'Transfer to savings' AND amount_cents < 0")


def savings_transfer_log(ctx: Context) -> TaskBuilder:
    """An earlier transfer to savings: its amount and time logged, and told by DM."""
    tx = prefer_history(ctx, _transfers(ctx))
    assert tx is not None
    amount, when = plain(-tx["amount_cents"]), tx["posted_at"][:10]
    c = ctx.rng.choice(ctx.contacts("family", "friend"))
    line = f"- {when}: moved {amount} to savings"
    b = TaskBuilder("savings_transfer_log", facts={"amount": amount, "posted_at": when})
    b.instruction = phrase(
        ctx,
        [
            "Find the 'Transfer to savings' line of day {day} in the web bank, append '- <time>: moved <amount> "
            "to savings' to {path} with the shell (time and amount as the bank shows them), and tell "
            "{handle} by direct message 'I moved <amount> to savings on <time>.'",
            "Keep my budget honest: the web bank shows a 'Transfer to savings' I made on day {day}. Log "
            "it as '- <time>: moved <amount> to savings' in {path} from the terminal and DM {handle} "
            "'I moved <amount> to savings on <time>.'",
            "Record the savings transfer of day {day}: read it on the bank website, add '- <time>: moved "
            "<amount> to savings' to {path} in the shell, then send {handle} a direct message 'I moved "
            "<amount> to savings on <time>.'",
        ],
        day=tx["_day"],
        path=BUDGET,
        handle=c.handle,
    )
    b.sub("web", "Find the transfer in the bank.", "Open /bank/checking, the 'Transfer to savings' line.")
    b.step(
        "web.find_transaction",
        account="checking",
        match={"memo": "Transfer to savings", "posted_at": when},
        vars={"amount": "amount", "when": "posted_at_date"},
        distractors={"amount": _amounts(ctx, tx["amount_cents"])},
    )
    b.sub("cli", f"Log it in {BUDGET}.", f"echo '{line}' >> {BUDGET}")
    b.step("cli.append_file", path=BUDGET, content="- {when}: moved {amount} to savings\n")
    b.crit("file_contains", f"{BUDGET} logs {amount} moved on {when}", 2.0, path=BUDGET, text=line)
    b.expect(FILES_APP, amount, when, path=BUDGET)
    b.sub("mcp", f"Tell {c.handle}.", f"dm_send to {c.handle}: 'I moved {amount} to savings on {when}.'")
    b.step("mcp.dm_send", peer=c.handle, body="I moved {amount} to savings on {when}.")
    b.crit(
        "row_added",
        f"a DM to {c.handle} names {amount}",
        app="dm",
        table="messages",
        where={
            "peer": eq(c.handle),
            "direction": eq("out"),
            "body": has(f"moved {amount} to savings on {when}"),
        },
    )
    b.expect("dm", c.handle, amount, table="messages")
    return b


def pay_friend_back(ctx: Context) -> TaskBuilder:
    """A friend asks by DM for the share of plans made on an earlier day: pay it, log it, reply."""
    ev = prefer_history(ctx, _plans(ctx))
    assert ev is not None
    c, title = ev["_with"], ev["title"]
    cents = ctx.rng.randint(12, 60) * 100 + ctx.rng.choice([0, 50])
    b = TaskBuilder("pay_friend_back", facts={"share": plain(cents), "event": title})
    b.setup = [
        Operation(
            app="dm",
            table="messages",
            op="insert",
            values={
                "peer": c.handle,
                "direction": "in",
                "sent_at": at(ctx, "11:40"),
                "body": f"Booked and paid for '{title}' - your share is ${plain(cents)}.",
            },
        )
    ]
    memo = f"share of {title}"
    line = f"- paid {c.name} {plain(cents)} for {title}"
    b.instruction = phrase(
        ctx,
        [
            "{handle} paid for '{title}' and sent me my share by direct message. Read it with the DM "
            "tool, pay {name} that amount from checking on the bank website (memo '{memo}'), add '- paid "
            "{name} <amount> for {title}' to {path} from the shell, and reply to {handle} 'Sent you "
            "<amount>.'",
            "Settle up with {name} for '{title}': the amount is in their latest DM. Pay it from checking "
            "in the web bank with the memo '{memo}', log '- paid {name} <amount> for {title}' in {path} "
            "with the shell, and DM {handle} back 'Sent you <amount>.'",
        ],
        handle=c.handle,
        name=c.name,
        title=title,
        memo=memo,
        path=BUDGET,
    )
    b.sub("mcp", f"Read {c.handle}'s DM.", f"dm_read {c.handle}.")
    b.step(
        "mcp.read_dm",
        peer=c.handle,
        pattern=r"your share is \$(\d+\.\d\d)",
        vars=["share"],
        distractors={"share": _amounts(ctx, cents)[:3]},
    )
    b.sub("web", f"Check '{title}' in the calendar.", f"Open /calendar, the event '{title}'.")
    b.step("web.find_event", match={"title": title}, vars={"event_id": "id", "start": "start"})
    b.sub(
        "web",
        f"Pay {c.name}.",
        f"/bank/transfer, Pay: Checking, payee {c.name}, {plain(cents)}, memo '{memo}'.",
    )
    b.step("web.pay", account="Checking", payee=c.name, amount="{share}", memo=memo)
    b.crit(
        "row_added",
        f"checking pays {c.name} {plain(cents)}",
        2.0,
        app="bank",
        table="transactions",
        where={
            "account_id": eq(_account_id(ctx, "Checking")),
            "amount_cents": eq(-cents),
            "memo": has(c.name),
        },
    )
    b.expect("bank", c.name, table="transactions")
    b.sub("cli", f"Log it in {BUDGET}.", f"echo '{line}' >> {BUDGET}")
    b.step("cli.append_file", path=BUDGET, content=f"- paid {c.name} {{share}} for {title}\n")
    b.crit("file_contains", f"{BUDGET} logs the payment", path=BUDGET, text=line)
    b.expect(FILES_APP, plain(cents), path=BUDGET)
    b.sub("mcp", f"Reply to {c.handle}.", f"dm_send to {c.handle}: 'Sent you {plain(cents)}.'")
    b.step("mcp.dm_send", peer=c.handle, body="Sent you {share}.")
    b.crit(
        "row_added",
        f"a DM to {c.handle} says {plain(cents)} was sent",
        app="dm",
        table="messages",
        where={"peer": eq(c.handle), "direction": eq("out"), "body": has(f"Sent you {plain(cents)}")},
    )
    b.expect("dm", c.handle, plain(cents), table="messages")
    return b


def balance_report(ctx: Context) -> TaskBuilder:
    """Both balances (the sum of every earlier posting) filed by the shell and emailed."""
    chk, sav = f"{_balance(ctx, 'Checking') / 100:,.2f}", f"{_balance(ctx, 'Savings') / 100:,.2f}"
    c = ctx.rng.choice(ctx.contacts("family", "friend", "colleague"))
    path = f"finance/balances-{ctx.date}.md"
    text = f"checking ${chk}, savings ${sav}"
    b = TaskBuilder("balance_report", facts={"checking": chk, "savings": sav})
    b.instruction = phrase(
        ctx,
        [
            "Write today's 'Checking' and 'Savings' balances from the web bank to {path} with the shell as 'checking $<amount>, "
            "savings $<amount>', and email the same line to {email} through the mail tool with the "
            "subject 'Balances {date}'.",
            "{name} asked where my accounts stand. Read the 'Checking' and 'Savings' balances on the bank website, save 'checking $"
            "<amount>, savings $<amount>' in {path} from the terminal, and send that line to {email} "
            "through the mail tool (subject 'Balances {date}').",
            "Month check-in: put 'checking $<amount>, savings $<amount>' (the 'Checking' and 'Savings' balances of the web bank) into {path} "
            "using the shell, then email it to {email} through the mail tool, subject 'Balances {date}'.",
        ],
        path=path,
        email=c.email,
        name=c.name,
        date=ctx.date,
    )
    b.sub("web", "Read both balances.", "Open /bank/checking and /bank/savings.")
    b.step("web.read_balance", account="checking", var="chk", distractors={"chk": [sav]})
    b.step("web.read_balance", account="savings", var="sav", distractors={"sav": [chk]})
    b.sub("cli", f"Write {path}.", f"echo '{text}' > {path}")
    b.step("cli.write_file", path=path, content="checking ${chk}, savings ${sav}\n")
    b.crit("file_contains", f"{path} has both balances", path=path, text=text)
    b.expect(FILES_APP, chk, sav, path=path)
    b.sub("mcp", f"Email {c.email}.", f"mail_send to {c.email}, subject 'Balances {ctx.date}'.")
    b.step(
        "mcp.mail_send", to=c.email, subject=f"Balances {ctx.date}", body="checking ${chk}, savings ${sav}"
    )
    b.crit(
        "row_added",
        f"a sent email to {c.email} has both balances",
        2.0,
        app="mail",
        table="messages",
        where={"folder": eq("sent"), "recipients": to(c.email), "body": has(text)},
    )
    b.expect("mail", "{folder=sent}", c.email, chk, table="messages")
    return b


def trip_savings_transfer(ctx: Context) -> TaskBuilder:
    """Set money aside in savings for a trip booked on an earlier day (memo names its confirmation)."""
    bk = prefer_history(ctx, _confirmed(ctx))
    assert bk is not None
    dest, conf = bk["destination"], bk["confirmation"]
    cents = ctx.rng.choice([150, 200, 250, 300, 400]) * 100
    memo = f"trip {dest} {conf}"
    line = f"- set aside {plain(cents)} for {dest} ({conf})"
    b = TaskBuilder("trip_savings_transfer", facts={"confirmation": conf, "amount": plain(cents)})
    b.instruction = phrase(
        ctx,
        [
            "Set aside {amount} for my {dest} trip: get its confirmation code from the flights tool, "
            "transfer {amount} from checking to savings in the web bank with the memo 'trip {dest} "
            "<code>', and append '- set aside {amount} for {dest} (<code>)' to {path} from the shell.",
            "For the {dest} flight I booked on day {bday}, move {amount} from checking to savings on the "
            "bank website (memo 'trip {dest} <confirmation>', the code from the flights tool) and log '- "
            "set aside {amount} for {dest} (<confirmation>)' in {path} with the shell.",
        ],
        amount=plain(cents),
        dest=dest,
        bday=bk["_day"],
        path=BUDGET,
    )
    b.sub("mcp", f"Find the {dest} booking's code.", f"flights_list: the {dest} booking is {conf}.")
    b.step(
        "mcp.find_booking",
        match={"destination": dest, "status": "confirmed"},
        confirmation=conf,
        vars={"conf": "confirmation"},
        distractors={"conf": other_confirmations(ctx, conf)},
    )
    b.sub(
        "web", f"Transfer {plain(cents)} to savings.", f"/bank/transfer: Checking -> Savings, memo '{memo}'."
    )
    b.step(
        "web.transfer", source="Checking", target="Savings", amount=plain(cents), memo=f"trip {dest} {{conf}}"
    )
    _transfer_criteria(b, ctx, cents, memo)
    b.sub("cli", f"Log it in {BUDGET}.", f"echo '{line}' >> {BUDGET}")
    b.step("cli.append_file", path=BUDGET, content=f"- set aside {plain(cents)} for {dest} ({{conf}})\n")
    b.crit("file_contains", f"{BUDGET} logs the {dest} savings", path=BUDGET, text=line)
    b.expect(FILES_APP, conf, path=BUDGET)
    return b


def _can_save(ctx: Context) -> bool:
    return _balance(ctx, "Checking") >= 40000


register_template(
    Template("salary_to_savings", lambda ctx: bool(_salaries(ctx)) and _can_save(ctx), salary_to_savings)
)
register_template(Template("savings_transfer_log", lambda ctx: bool(_transfers(ctx)), savings_transfer_log))
register_template(
    Template("pay_friend_back", lambda ctx: bool(_plans(ctx)) and _can_save(ctx), pay_friend_back)
)
register_template(Template("balance_report", lambda ctx: True, balance_report))
register_template(
    Template(
        "trip_savings_transfer", lambda ctx: bool(_confirmed(ctx)) and _can_save(ctx), trip_savings_transfer
    )
)
