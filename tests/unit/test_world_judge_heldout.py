"""World judges on worlds they were not tuned on: the wrong attempts other seeds' panels passed.

`bench/world_judges.py` replays the panel on every rollout of 8 personas x 5 days. On seed 0 (the
sample the judges were tuned on) the panel agreed with the verifier on 98.6% of rollouts; on seeds
3, 7 and 11, never looked at before, on 96.4%, 96.1% and 97.7%, passing 22, 18 and 13 failed
attempts. The cases below are what it passed there; each attempt is built by hand, exactly what a
judge sees (`JudgeView`), beside the correct attempt that must still pass. The judges before these
checks (78bbe33, the commit of the bench) fail every test.
"""

from __future__ import annotations

import json

from envpipeline.worlds.judge_sources import formats_read_together, source_kind_read
from envpipeline.worlds.judge_view import JudgeView, requested_apps
from envpipeline.worlds.judge_writes import unnamed_rows
from envpipeline.worlds.judges import DiffJudge, RuleReviewer, TrajectoryJudge
from tests.judge_attempts import NO_ROWS, attempt, balance_change, panel_votes

NAV = "200  Shop Cart Orders Mail Compose Calendar Bank | "


# -- a booking or an event asked for without the verbs the judges knew -------------------------------
REBOOK_TASK = (
    "I cancelled my 'Vienna' flight earlier, but the trip is back on. Book Copenhagen -> 'Vienna' "
    "departing 2026-03-13 at 15:10 with the flights tool, add a calendar event 'Flight Copenhagen -> "
    "Vienna (rebooked)' at 2026-03-13 at 15:10 in the web calendar, and append '- 2026-03-13 at 15:10: "
    "Copenhagen -> Vienna, rebooked' to trips/vienna-log.md from the shell."
)
CHECKIN_TASK = (
    "Set up check-in for my 'Milan' booking EVT052: departure from the flights tool, a web calendar "
    "event 'Check in EVT052' exactly a day before, and '- [ ] check in for Milan (EVT052), the day "
    "before departure' appended to todo.txt from the shell."
)


def test_a_flight_booked_with_the_flights_tool_and_an_event_asked_for_by_its_noun_are_required():
    """A scripted agent that skipped the booking (or the event) wrote everything else: the diff judge
    passed it, since 'Book Copenhagen -> Vienna departing ... with the flights tool' and 'a web
    calendar event ... exactly a day before' asked for no app it knew."""
    assert {"flights", "calendar", "files"} <= requested_apps(REBOOK_TASK)
    assert {"calendar", "files"} <= requested_apps(CHECKIN_TASK)
    line = "- [ ] check in for Milan (EVT052), the day before departure"
    calls = [
        (
            "mcp.flights_list",
            {},
            json.dumps({"bookings": [{"confirmation": "EVT052", "destination": "Milan"}]}),
        ),
        ("cli.exec", {"command": f"printf '%s' '{line}\\n' >> todo.txt"}, "exit=0\n"),
    ]
    no_event = JudgeView(
        CHECKIN_TASK,
        attempt(CHECKIN_TASK, calls),
        {"files": {**NO_ROWS, "changed": ["todo.txt"]}},
        {"todo.txt": f"# TODO\n{line}\n"},
    )
    assert DiffJudge()(no_event) is False


# -- the trip's hotel event cancelled instead of its flight event ---------------------------------------
CANCEL_TASK = (
    "Call off the 'Vienna' trip from day 3: flights tool to cancel, web calendar to cancel the event, "
    "the shell to add '- cancelled JGR032: Copenhagen -> Vienna' to trips/vienna-log.md, and a direct "
    "message to arjun.n saying 'Change of plans: my Vienna trip (JGR032) is cancelled.'"
)
FLIGHT_EVENT = {"id": 2, "title": "Flight Copenhagen -> Vienna (JGR032)", "start": "2026-03-10T15:10:00"}
HOTEL_EVENT = {"id": 3, "title": "Check-in Old Town Suites, Vienna", "start": "2026-03-10T20:10:00"}


def _cancelled(event: dict) -> JudgeView:
    booking = {"id": 1, "confirmation": "JGR032", "destination": "Vienna", "status": "confirmed"}
    log, dm = (
        "- cancelled JGR032: Copenhagen -> Vienna",
        "Change of plans: my Vienna trip (JGR032) is cancelled.",
    )
    page = (
        f"{NAV}Calendar | Event | Start | End | Where | Flight Copenhagen -> Vienna (JGR032) | "
        "2026-03-10T15:10:00 | 2026-03-10T18:10:00 | Copenhagen airport | Check-in Old Town Suites, "
        "Vienna | 2026-03-10T20:10:00 | 2026-03-10T20:40:00 | Old Town Suites | New event"
    )
    calls = [
        ("mcp.flights_list", {}, json.dumps({"bookings": [booking]})),
        ("mcp.flights_cancel", {"confirmation": "JGR032"}, json.dumps({**booking, "status": "cancelled"})),
        ("web.GET /calendar", {}, page.replace(" | Event | ", "\nEvent | ").replace(" | Flight", "\nFlight")),
        (f"web.GET /calendar/{event['id']}", {}, f"{NAV}{event['title']} | Start {event['start']}"),
        (f"web.POST /calendar/{event['id']}/cancel", {}, f"303 /calendar/{event['id']}"),
        ("cli.exec", {"command": f"printf '%s' '{log}\\n' >> trips/vienna-log.md"}, "exit=0\n"),
        ("mcp.dm_send", {"peer": "arjun.n", "body": dm}, json.dumps({"peer": "arjun.n", "direction": "out"})),
    ]
    cancelled = {**event, "title": "Cancelled: " + event["title"]}
    diff = {
        "calendar/events": {
            **NO_ROWS,
            "changed": [{"id": event["id"], "fields": ["title"], "before": event, "after": cancelled}],
        },
        "flights/bookings": {
            **NO_ROWS,
            "changed": [
                {
                    "id": 1,
                    "fields": ["status"],
                    "before": booking,
                    "after": {**booking, "status": "cancelled"},
                }
            ],
        },
        "dm/messages": {**NO_ROWS, "added": [{"id": 5, "peer": "arjun.n", "direction": "out", "body": dm}]},
        "files": {**NO_ROWS, "added": ["trips/vienna-log.md"]},
    }
    return JudgeView(CANCEL_TASK, attempt(CANCEL_TASK, calls), diff, {"trips/vienna-log.md": log + "\n"})


def test_a_trip_named_by_its_code_is_not_the_hotel_event_that_shares_its_city():
    """Cancelling the hotel's check-in event ('... Vienna') for the flight's ('... (JGR032)'): the
    rules judge took any event holding the request's 'Vienna' for the one it names."""
    assert panel_votes(_cancelled(FLIGHT_EVENT)) == {"diff": True, "rules": True, "trajectory": True}
    hotel = _cancelled(HOTEL_EVENT)
    assert RuleReviewer()(hotel) is False
    assert DiffJudge()(hotel) is False


# -- the file a mail asks for ---------------------------------------------------------------------------
FILE_TASK = (
    "Arjun Novak asked by email for one of your files. Read the request with the mail tool, get the "
    "file's content with the shell, send it to arjun.novak@example.net from the webmail with the subject "
    "'Re: Request: README.txt', and log '- sent PATH to arjun.novak@example.net' in notes/sent-log.md."
)
REQUEST_MAIL = {
    "id": 4,
    "sender": "arjun.novak@example.net",
    "subject": "Request: README.txt",
    "body": "Hi, could you send me the contents of downloads/README.txt? Thanks, Arjun Novak",
}


def _sent_file(path: str, content: str | None, body: str) -> JudgeView:
    log = f"- sent {path} to arjun.novak@example.net"
    mail = {"to": "arjun.novak@example.net", "subject": "Re: Request: README.txt", "body": body}
    calls = [("mcp.mail_read", {"message_id": 4}, json.dumps(REQUEST_MAIL))]
    if content is not None:
        calls.append(("cli.exec", {"command": f"cat {path}"}, f"exit=0\n{content}"))
    calls += [
        ("web.POST /mail/send", mail, "303 /mail?folder=sent"),
        ("cli.exec", {"command": f"printf '%s' '{log}\\n' >> notes/sent-log.md"}, "exit=0\n"),
    ]
    sent = {"id": 5, "folder": "sent", "recipients": mail["to"], "subject": mail["subject"], "body": body}
    diff = {
        "mail/messages": {**NO_ROWS, "added": [sent]},
        "files": {**NO_ROWS, "added": ["notes/sent-log.md"]},
    }
    return JudgeView(FILE_TASK, attempt(FILE_TASK, calls), diff, {"notes/sent-log.md": log + "\n"})


def test_the_file_sent_is_the_one_the_mail_names_and_unknown_is_no_content():
    """The trajectory judge passed a mail with another file's content, logged under that file's
    name (any path it had seen counted), and a mail whose body was 'unknown' (the file never read)."""
    readme = "Camera club archive. Keep the originals."
    right = _sent_file("downloads/README.txt", readme, readme)
    assert panel_votes(right) == {"diff": True, "rules": True, "trajectory": True}
    ideas = "# Ideas\n\n- things to try as a senior wildlife photographer"
    assert TrajectoryJudge()(_sent_file("notes/ideas.md", ideas, ideas)) is False
    assert TrajectoryJudge()(_sent_file("downloads/README.txt", None, "unknown")) is False


# -- the item a restock list says is running low --------------------------------------------------------
RESTOCK_TASK = (
    "Your camera gear restock list is in notes/restock-camera gear.md. Order the item that is running "
    "low in the web shop, tick it off in the list as '- [x] NAME (ordered ORDER-NUMBER)' with the shell, "
    "and post the order number in the 'team' chat channel."
)


def _restocked(name: str, sku: str, cents: int) -> JudgeView:
    note = "# Restock list\n\n- [x] Classic passport wallet (done)\n- [ ] Classic light stand (running low)\n"
    item = {"name": name, "price_cents": cents, "quantity": 1, "sku": sku}
    order = {
        "id": 1,
        "order_number": "ORD-00001",
        "status": "placed",
        "total_cents": cents,
        "items_json": json.dumps([item]),
    }
    ticked = f"- [x] {name} (ordered ORD-00001)"
    post = f"Restocked {name}, order ORD-00001."
    calls = [
        ("cli.exec", {"command": "cat 'notes/restock-camera gear.md'"}, f"exit=0\n{note}"),
        (f"web.GET /product/{sku}", {}, f"{NAV}{name} | SKU {sku} | ${cents / 100:.2f} | 17 in stock"),
        ("web.POST /cart/add", {"sku": sku, "quantity": "1"}, "303 /cart"),
        ("web.POST /checkout", {}, "303 /orders/ORD-00001"),
        ("web.GET /orders/ORD-00001", {}, f"{NAV}Order ORD-00001 | Status placed | Total ${cents / 100:.2f}"),
        (
            "cli.exec",
            {
                "command": f"sed -i 's|- \\[ \\] {name} (running low)|{ticked}|' 'notes/restock-camera gear.md'"
            },
            "exit=0\n",
        ),
        ("mcp.chat_post", {"channel": "team", "body": post}, json.dumps({"channel": "team", "body": post})),
    ]
    diff = {
        "shop/orders": {**NO_ROWS, "added": [order]},
        "chat/messages": {**NO_ROWS, "added": [{"id": 2, "channel_id": 2, "body": post}]},
        "files": {**NO_ROWS, "changed": ["notes/restock-camera gear.md"]},
    }
    files = {"notes/restock-camera gear.md": note.replace(f"- [ ] {name} (running low)", ticked)}
    return JudgeView(RESTOCK_TASK, attempt(RESTOCK_TASK, calls), diff, files)


def test_the_item_ordered_is_the_line_the_request_describes_not_any_line_of_the_list():
    """Ordering the list's 'done' item: the rules and trajectory judges took any product the list
    names for the one it says is running low."""
    assert TrajectoryJudge()(_restocked("Classic light stand", "SKU-CLALIGSTA-1020", 4599)) is True
    assert TrajectoryJudge()(_restocked("Classic passport wallet", "SKU-CLAPASWAL-8248", 2099)) is False


# -- a share of the salary ------------------------------------------------------------------------------
SHARE_TASK = (
    "Move 5% of the salary that came in on 2026-03-04 from checking to savings in the web bank (memo "
    "'salary 2026-03-04'), append '- 2026-03-04 salary: saved <amount>' to notes/budget.md from the "
    "shell, and tell arjun.h by direct message 'Saved <amount> from my salary.'"
)
CHECKING = (
    f"{NAV}Checking | Balance $3,690.00\n2026-03-04T08:00:00 | 2026-03-04 | Salary (private chef) | "
    "$2,400.00\n2026-03-03T13:30:00 | 2026-03-03 | Transfer to savings | -$270.00\n2026-03-02T08:00:00 | "
    "2026-03-02 | Opening balance | $1,560.00"
)


def _saved(amount: str, read: bool = True) -> JudgeView:
    cents = int(amount.replace(".", ""))
    line, dm = f"- 2026-03-04 salary: saved {amount}", f"Saved {amount} from my salary."
    calls = [("web.GET /bank/checking", {}, CHECKING)] if read else []
    calls += [
        (
            "web.POST /bank/transfer",
            {"source": "Checking", "target": "Savings", "amount": amount, "memo": "salary 2026-03-04"},
            "303 /bank/savings",
        ),
        # the savings page after the transfer shows the amount moved: seen, but only as its own write
        (
            "web.GET /bank/savings",
            {},
            f"{NAV}Savings\n2026-03-04T17:00:00 | 2026-03-04 | Transfer from checking salary 2026-03-04 | ${amount}",
        ),
        ("cli.exec", {"command": f"printf '%s' '{line}\\n' >> notes/budget.md"}, "exit=0\n"),
        ("mcp.dm_send", {"peer": "arjun.h", "body": dm}, json.dumps({"peer": "arjun.h", "direction": "out"})),
    ]
    accounts = [
        balance_change(1, 369000, 369000 - cents, name="Checking"),
        balance_change(2, 645000, 645000 + cents, name="Savings"),
    ]
    moves = [
        {"id": 6, "account_id": 1, "amount_cents": -cents, "memo": "Transfer to savings salary 2026-03-04"},
        {"id": 7, "account_id": 2, "amount_cents": cents, "memo": "Transfer from checking salary 2026-03-04"},
    ]
    diff = {
        "bank/accounts": {**NO_ROWS, "changed": accounts},
        "bank/transactions": {**NO_ROWS, "added": moves},
        "dm/messages": {**NO_ROWS, "added": [{"id": 2, "peer": "arjun.h", "direction": "out", "body": dm}]},
        "files": {**NO_ROWS, "added": ["notes/budget.md"]},
    }
    return JudgeView(SHARE_TASK, attempt(SHARE_TASK, calls), diff, {"notes/budget.md": line + "\n"})


def test_a_share_moved_is_that_share_of_the_amount_the_request_points_at():
    """5% of the opening balance (78.00) or of nothing read (a guessed 309.00): every judge passed
    both, since the amount written was the amount moved and no judge computed the share."""
    assert panel_votes(_saved("120.00")) == {"diff": True, "rules": True, "trajectory": True}
    for wrong in (_saved("78.00"), _saved("309.00", read=False)):
        assert RuleReviewer()(wrong) is False
        assert TrajectoryJudge()(wrong) is False


# -- after the templates changed: seeds 3 and 23 (seeds 7, 11 and 19 held out) ----------------------
def test_a_flight_from_another_airport_and_the_mail_beside_the_one_named_are_not_the_request():
    """A rebooking from 'Lyo' (the origin miscopied) and an archive of the mail next to the order's
    receipt: the diff and rules judges took any booking to the named city, and any archived mail."""
    rebook = "Book Lyon -> 'Warsaw' departing 2026-03-12 at 15:25 with the flights tool."
    booking = {"id": 3, "origin": "Lyon", "destination": "Warsaw", "depart_at": "2026-03-12T15:25"}

    def booked(row: dict) -> JudgeView:
        diff = {"flights/bookings": {**NO_ROWS, "added": [row]}, "files": NO_ROWS}
        return JudgeView(rebook, attempt(rebook, []), diff, {})

    assert not unnamed_rows(booked(booking))
    assert unnamed_rows(booked({**booking, "origin": "Lyo"}))
    archive = "File order ORD-00203 as an expense, then archive the order email in the webmail."
    receipt = {
        "id": 4,
        "folder": "inbox",
        "subject": "Receipt for order ORD-00203",
        "sender": "shop@x.example",
    }

    def archived(row: dict) -> JudgeView:
        change = {"id": row["id"], "fields": ["folder"], "before": row, "after": {**row, "folder": "archive"}}
        diff = {"mail/messages": {**NO_ROWS, "changed": [change]}, "files": NO_ROWS}
        return JudgeView(archive, attempt(archive, []), diff, {})

    assert not unnamed_rows(archived(receipt))
    assert unnamed_rows(archived({**receipt, "id": 3, "subject": "Your weekly digest"}))


def test_the_figures_of_one_formatted_line_are_read_in_one_record():
    """'- <time>: moved <amount> to savings', time and amount as the bank shows them: the salary
    row's date beside the transfer's amount passed the rules judge (each figure was on the page)."""
    task = (
        "Find the 'Transfer to savings' line of day 1 in the web bank and append '- <time>: moved <amount> "
        "to savings' to notes/budget.md with the shell (time and amount as the bank shows them)."
    )
    page = (
        f"{NAV}Checking\n2026-03-04T08:00:00 | 2026-03-04 | Salary | $2,400.00\n"
        "2026-03-03T13:30:00 | 2026-03-03 | Transfer to savings | -$270.00"
    )

    def logged(line: str) -> JudgeView:
        calls = [
            ("web.GET /bank/checking", {}, page),
            ("cli.exec", {"command": f"printf '%s' '{line}\\n' >> notes/budget.md"}, "exit=0\n"),
        ]
        diff = {"files": {**NO_ROWS, "changed": ["notes/budget.md"]}}
        return JudgeView(task, attempt(task, calls), diff, {"notes/budget.md": line + "\n"})

    assert formats_read_together(logged("- 2026-03-03: moved 270.00 to savings"))
    assert not formats_read_together(logged("- 2026-03-04: moved 270.00 to savings"))
    assert RuleReviewer()(logged("- 2026-03-04: moved 270.00 to savings")) is False


def test_a_value_the_request_says_is_in_a_dm_is_read_from_a_dm():
    """'The amount is in their latest DM': an agent that never read the DM and paid the water bill's
    amount found on the bank page passed the rules judge (the friend's calendar event, which names
    them, stood in for the DM)."""
    task = (
        "Settle up with Hanna Silva for 'The cinema with Hanna Silva': the amount is in their latest DM. "
        "Pay it from checking in the web bank and DM hanna.s back 'Sent you <amount>.'"
    )
    dm = json.dumps({"messages": [{"peer": "hanna.s", "body": "My share was 24.50, thanks!"}]})
    event = f"{NAV}The cinema with Hanna Silva | Start 2026-03-05T19:00:00 | Where Odeon"
    read = [("mcp.dm_read", {"peer": "hanna.s"}, dm)]
    guessed = [("web.GET /calendar/3", {}, event)]
    assert source_kind_read(JudgeView(task, attempt(task, read), {"files": NO_ROWS}, {}))
    assert not source_kind_read(JudgeView(task, attempt(task, guessed), {"files": NO_ROWS}, {}))
