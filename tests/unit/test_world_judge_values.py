"""The world judges check the values an attempt wrote, not only that it wrote something.

Found by replaying every rollout of 8 personas x 5 days through the panel: the panel passed 42
attempts the verifier failed (the diff judge checks effects only, so a wrong value passed whenever
the rules or trajectory judge let it through), and the rules judge failed 157 correct attempts (a
requested move, transfer or password change counted as a side effect; one page read for the two
balances a report names; '$12.99' taken for a price read elsewhere). After these checks the panel
passes 9 failed attempts and fails no correct one of 630 (agreement 92.9% -> 98.6%). Each test
builds one attempt by hand, exactly what a judge sees (`JudgeView`), and names the policy it must
reject; the tree before these checks (9b0f779) fails every one of them.
"""

from __future__ import annotations

import json

from envpipeline.worlds.judge_sources import labelled_values
from envpipeline.worlds.judge_view import JudgeView, requested_apps
from envpipeline.worlds.judge_writes import unopened_records
from envpipeline.worlds.judges import DiffJudge, RuleReviewer, TrajectoryJudge
from tests.judge_attempts import NO_ROWS, attempt, balance_change, panel_votes

# -- two balances, each read on its own page -----------------------------------------------------------
BALANCE_TASK = (
    "Month check-in: put 'checking $<amount>, savings $<amount>' (the 'Checking' and 'Savings' balances "
    "of the web bank) into finance/balances-2026-03-05.md using the shell, then email it to "
    "sofia.lind@mail.example through the mail tool, subject 'Balances 2026-03-05'."
)
CHECKING_PAGE = (
    "200  Checking Shop Cart Orders Mail Compose Calendar Bank Checking Balance $1,745.00 "
    "2026-03-05T08:05:00 2026-03-05 Rentio car rental RNYQT030 -$105.00 2026-03-02T08:00:00 2026-03-02 "
    "Opening balance $1,850.00"
)
SAVINGS_PAGE = (
    "200  Savings Shop Cart Orders Mail Compose Calendar Bank Savings Balance $8,060.00 "
    "2026-03-02T08:00:00 2026-03-02 Opening balance $8,060.00"
)


def _balance_report(line: str, pages: tuple[str, ...] = ("checking", "savings")) -> JudgeView:
    shown = {"checking": CHECKING_PAGE, "savings": SAVINGS_PAGE}
    calls = [(f"web.GET /bank/{page}", {}, shown[page]) for page in pages]
    path = "finance/balances-2026-03-05.md"
    mail = {"to": "sofia.lind@mail.example", "subject": "Balances 2026-03-05", "body": line}
    calls += [
        ("cli.exec", {"command": f"printf '%s' '{line}\\n' > {path}"}, "exit=0\n"),
        ("mcp.mail_send", mail, json.dumps({"folder": "sent", **mail})),
    ]
    row = {"id": 6, "folder": "sent", "recipients": mail["to"], "subject": mail["subject"], "body": line}
    diff = {"mail/messages": {**NO_ROWS, "added": [row]}, "files": {**NO_ROWS, "added": [path]}}
    return JudgeView(BALANCE_TASK, attempt(BALANCE_TASK, calls), diff, {path: line + "\n"})


def test_each_balance_is_read_where_its_name_says_and_a_swapped_or_unread_one_fails():
    """Before, the rules judge read one page (the latest) as the source and failed every correct
    report (31 of 35), and passed 'checking $8,060.00' (the savings figure twice) because both
    figures were on that page; the trajectory judge passed it because the figure was seen somewhere."""
    right = _balance_report("checking $1,745.00, savings $8,060.00")
    assert sorted(set(labelled_values(right))) == [
        ("checking", "1,745.00", frozenset({"checking", "savings"})),
        ("savings", "8,060.00", frozenset({"checking", "savings"})),
    ]
    assert panel_votes(right) == {"diff": True, "rules": True, "trajectory": True}
    swapped = _balance_report("checking $8,060.00, savings $8,060.00")
    assert swapped.state_diff and RuleReviewer()(swapped) is False
    assert TrajectoryJudge()(swapped) is False
    unread = _balance_report("checking $8,060.00, savings $8,060.00", pages=("savings",))
    assert RuleReviewer()(unread) is False
    assert TrajectoryJudge()(unread) is False


# -- a meeting moved to the time a mail asks for ------------------------------------------------------
MOVE_TASK = (
    "Astrid Berg emailed asking to move 'Design sync with Astrid Berg'. Read the request with the mail "
    "tool, move the event in the web calendar to the time they ask for, confirm to astrid.berg@example.net "
    "through the mail tool, and append '- Design sync with Astrid Berg: moved to <new time>' to "
    "notes/agenda.md with the shell."
)
REQUEST = {
    "id": 6,
    "sender": "astrid.berg@example.net",
    "subject": "Moving Design sync with Astrid Berg",
    "body": "Hi, something came up. Could we move 'Design sync with Astrid Berg' to 2026-03-08 at 16:00?",
}
EVENT_PAGE = (
    "200  Design sync with Astrid Berg Shop Cart Orders Design sync with Astrid Berg Date 2026-03-06 at 14:00 "
    "Start 2026-03-06T14:00:00 End 2026-03-06T15:00:00 Where Video call Move Cancel event"
)
SYNC = {
    "id": 2,
    "title": "Design sync with Astrid Berg",
    "start": "2026-03-06T14:00:00",
    "end": "2026-03-06T15:00:00",
}
PLANNING = {"id": 1, "title": "Weekly planning", "start": "2026-03-02T10:30:00", "end": "2026-03-02T11:00:00"}


def _move(when: str, event: dict = SYNC, instruction: str = MOVE_TASK) -> JudgeView:
    day, clock = when.split(" at ")
    start = f"{day}T{clock}:00"
    end = f"{day}T{int(clock[:2]) + 1:02d}{clock[2:]}:00"
    text = f"Done: 'Design sync with Astrid Berg' now starts {when}."
    line = f"- Design sync with Astrid Berg: moved to {when}\n"
    reply = {
        "to": "astrid.berg@example.net",
        "subject": "Re: Moving Design sync with Astrid Berg",
        "body": text,
    }
    calls = [
        ("mcp.mail_read", {"message_id": 6}, json.dumps(REQUEST)),
        ("web.GET /calendar/2", {}, EVENT_PAGE),
        (f"web.POST /calendar/{event['id']}/move", {"start": start[:16]}, f"303 /calendar/{event['id']}"),
        ("mcp.mail_send", reply, json.dumps({"folder": "sent", **reply})),
        ("cli.exec", {"command": f"printf '%s' '{line}' >> notes/agenda.md"}, "exit=0\n"),
    ]
    moved = {
        "id": event["id"],
        "fields": ["end", "start"],
        "before": event,
        "after": {**event, "start": start, "end": end},
    }
    sent = {"id": 7, "folder": "sent", "recipients": reply["to"], "subject": reply["subject"], "body": text}
    diff = {
        "calendar/events": {**NO_ROWS, "changed": [moved]},
        "mail/messages": {**NO_ROWS, "added": [sent]},
        "files": {**NO_ROWS, "changed": ["notes/agenda.md"]},
    }
    return JudgeView(instruction, attempt(instruction, calls), diff, {"notes/agenda.md": line})


def test_a_requested_move_is_no_side_effect_but_a_wrong_time_or_another_event_fails():
    """Before, the rules judge failed every correct move, transfer, cancellation and password change
    (83 attempts: a changed row counted as a side effect unless it archived a mail), and the diff
    and trajectory judges passed a move of the wrong event and one to the old time of day. The rules
    judge read the event's page, read after the mail and sharing more of the request's words
    ('move', 'event'), as the message the request points at: the mail its author wrote now counts."""
    assert panel_votes(_move("2026-03-08 at 16:00")) == {"diff": True, "rules": True, "trajectory": True}
    old_time = _move("2026-03-08 at 14:00")  # the new day with the event's old time
    assert RuleReviewer()(old_time) is False
    assert TrajectoryJudge()(old_time) is False  # 2026-03-08 and 14:00 were never read together
    other = _move("2026-03-08 at 16:00", event=PLANNING)
    assert DiffJudge()(other) is False
    assert RuleReviewer()(other) is False
    unasked = MOVE_TASK.replace("move the event in the web calendar to the time they ask for, ", "")
    assert "calendar" not in requested_apps(unasked)
    assert RuleReviewer()(_move("2026-03-08 at 16:00", instruction=unasked)) is False


def test_the_life_apps_are_asked_for_in_the_words_the_templates_use():
    """'Update the booking via the flights tool, the calendar event via the web calendar', 'flights
    tool to cancel', 'reset that login ... through the accounts tool' asked for no write before, so
    the rules judge took the requested change for a side effect."""
    assert {"flights", "calendar"} <= requested_apps(
        "Update the booking via the flights tool, the calendar event via the web calendar."
    )
    assert "flights" in requested_apps("Call off the 'Warsaw' trip from day 5: flights tool to cancel.")
    assert "accounts" in requested_apps("reset that login to 'cobalt-zephyr-28' through the accounts tool")


# -- a check-in event one day before a departure ------------------------------------------------------
CHECKIN_TASK = (
    "Remind me to check in for the 'Warsaw' trip: the flights tool gives the departure; put 'Check in "
    "UGT052' in the web calendar one day before it, same time."
)
BOOKING = {
    "confirmation": "UGT052",
    "destination": "Warsaw",
    "depart_at": "2026-03-15T06:40:00",
    "depart_at_time": "06:40",
}


def _checkin(start: str) -> JudgeView:
    event = {"title": "Check in UGT052", "start": start, "end": "2026-03-14T07:10:00", "location": "online"}
    calls = [
        ("mcp.flights_get", {"confirmation": "UGT052"}, json.dumps(BOOKING)),
        ("web.POST /calendar/add", event, "303 /calendar/6"),
    ]
    diff = {"calendar/events": {**NO_ROWS, "added": [{"id": 6, **event}]}, "files": NO_ROWS}
    return JudgeView(CHECKIN_TASK, attempt(CHECKIN_TASK, calls), diff, {})


def test_an_event_set_to_a_time_of_day_nobody_read_fails():
    """A check-in event at 06:40:01 (the scripted agents' wrong value) passed all three judges: the
    values of rows the agent added were never compared with what it read."""
    assert TrajectoryJudge()(_checkin("2026-03-14T06:40:00")) is True
    assert RuleReviewer()(_checkin("2026-03-14T06:40:00")) is True
    assert TrajectoryJudge()(_checkin("2026-03-14T06:40:01")) is False
    assert RuleReviewer()(_checkin("2026-03-14T06:40:01")) is False


# -- a dictated line, written with a figure changed -----------------------------------------------------
ITINERARY_TASK = (
    "Freya Haddad wants my 'Edinburgh' itinerary. Get the booking from the flights tool, save the line "
    "'Copenhagen -> Edinburgh, departs 2026-03-10 at 07:40, confirmation ELX030' as trips/edinburgh.md in "
    "the terminal, then send it to freya.haddad@example.org from the webmail (subject 'Itinerary')."
)


def _itinerary(file_line: str) -> JudgeView:
    booking = {"confirmation": "ELX030", "origin": "Copenhagen", "destination": "Edinburgh"}
    body = "Copenhagen -> Edinburgh, departs 2026-03-10 at 07:40, confirmation ELX030"
    mail = {"to": "freya.haddad@example.org", "subject": "Itinerary", "body": body}
    calls = [
        ("mcp.flights_list", {}, json.dumps({"bookings": [booking]})),
        ("cli.exec", {"command": f"printf '%s' '{file_line}\\n' > trips/edinburgh.md"}, "exit=0\n"),
        ("web.POST /mail/send", mail, "303 /mail?folder=sent"),
    ]
    sent = {"id": 5, "folder": "sent", "recipients": mail["to"], "subject": "Itinerary", "body": body}
    diff = {
        "mail/messages": {**NO_ROWS, "added": [sent]},
        "files": {**NO_ROWS, "added": ["trips/edinburgh.md"]},
    }
    return JudgeView(
        ITINERARY_TASK, attempt(ITINERARY_TASK, calls), diff, {"trips/edinburgh.md": file_line + "\n"}
    )


def test_a_dictated_line_written_with_a_code_changed_fails():
    """The file said 'confirmation ELX031' where the request dictated ELX030 (the mail was right):
    all three judges passed it. A heading that drops a word of a dictated subject is no such change."""
    right = _itinerary("Copenhagen -> Edinburgh, departs 2026-03-10 at 07:40, confirmation ELX030")
    assert DiffJudge()(right) is True
    assert RuleReviewer()(right) is True
    wrong = _itinerary("Copenhagen -> Edinburgh, departs 2026-03-10 at 07:40, confirmation ELX031")
    assert DiffJudge()(wrong) is False
    assert RuleReviewer()(wrong) is False


# -- money moves only through posted transactions ---------------------------------------------------------
PAY_TASK = "Pay Astrid Mensah back: pay 26.50 from checking in the web bank, memo 'Dinner'."


def _payment(balance_after: int) -> JudgeView:
    pay = {"source": "Checking", "payee": "Astrid Mensah", "amount": "26.50", "memo": "Dinner"}
    calls = [
        ("web.GET /bank/checking", {}, "200  Checking Balance $3,113.51"),
        ("web.POST /bank/pay", pay, "303"),
    ]
    account = {"id": 1, "name": "Checking", "balance_cents": 311351}
    changed = {
        "id": 1,
        "fields": ["balance_cents"],
        "before": account,
        "after": {**account, "balance_cents": balance_after},
    }
    posted = {"id": 5, "account_id": 1, "amount_cents": -2650, "memo": "Payment to Astrid Mensah Dinner"}
    diff = {
        "bank/accounts": {**NO_ROWS, "changed": [changed]},
        "bank/transactions": {**NO_ROWS, "added": [posted]},
        "files": NO_ROWS,
    }
    return JudgeView(PAY_TASK, attempt(PAY_TASK, calls), diff, {})


def test_a_balance_that_moved_by_more_than_its_transactions_fails():
    assert RuleReviewer()(_payment(311351 - 2650)) is True
    assert RuleReviewer()(_payment(311351 - 26500)) is False


# -- a shop reply with the order's price, and a log naming a file nobody saw --------------------------------
def test_the_new_orders_price_written_with_its_currency_sign_is_dictated_by_the_order():
    """'$12.99' in the reply was taken for a piece copied from the shop page (only '12.99' counted as
    the new order's), which failed all 34 correct friend requests."""
    task = (
        "Amara Kowalski asked you in a direct message to order something for them. Order it in the web "
        "shop and reply to amara.k by DM with the order number and the product's price."
    )
    ask = {
        "messages": [
            {"peer": "amara.k", "direction": "in", "body": "Could you order me a Compact soil pH meter?"}
        ]
    }
    body = "Done! Ordered the Compact soil pH meter for you: order ORD-00001, $12.99."
    calls = [
        ("mcp.dm_read", {"peer": "amara.k"}, json.dumps(ask)),
        (
            "web.GET /",
            {"q": "Compact soil pH meter"},
            "200  Shop Compact soil pH meter tools $12.99 in stock",
        ),
        ("web.POST /cart/add", {"sku": "SKU-COMSOIPH-688D", "quantity": "1"}, "303 /cart"),
        ("web.POST /checkout", {}, "303 /orders/ORD-00001"),
        ("mcp.dm_send", {"peer": "amara.k", "body": body}, json.dumps({"body": body})),
    ]
    item = {"name": "Compact soil pH meter", "price_cents": 1299, "quantity": 1, "sku": "SKU-COMSOIPH-688D"}
    order = {"order_number": "ORD-00001", "total_cents": 1299, "items_json": json.dumps([item])}
    stock = {
        "id": 7,
        "fields": ["stock"],
        "before": {"sku": item["sku"], "stock": 34},
        "after": {"sku": item["sku"], "stock": 33},
    }
    diff = {
        "shop/orders": {**NO_ROWS, "added": [order]},
        "shop/products": {**NO_ROWS, "changed": [stock]},
        "dm/messages": {**NO_ROWS, "added": [{"peer": "amara.k", "direction": "out", "body": body}]},
        "files": NO_ROWS,
    }
    view = JudgeView(task, attempt(task, calls), diff, {})
    assert panel_votes(view) == {"diff": True, "rules": True, "trajectory": True}


def test_a_log_that_names_a_file_nobody_saw_fails_the_trajectory_judge():
    task = (
        "Astrid Silva asked by email for one of your files. Read the request with the mail tool, get the "
        "file's content with the shell, and log '- sent PATH to astrid.silva@example.org' in notes/sent-log.md."
    )
    ask = {"sender": "astrid.silva@example.org", "body": "Could you send me documents/trip-VXE020.md?"}

    def logged(path: str) -> JudgeView:
        line = f"- sent {path} to astrid.silva@example.org\n"
        calls = [
            ("mcp.mail_read", {"message_id": 7}, json.dumps(ask)),
            ("cli.exec", {"command": "cat documents/trip-VXE020.md"}, "exit=0\n# Trip to Prague\n"),
            ("cli.exec", {"command": f"printf '%s' '{line}' >> notes/sent-log.md"}, "exit=0\n"),
        ]
        diff = {"files": {**NO_ROWS, "added": ["notes/sent-log.md"]}}
        return JudgeView(task, attempt(task, calls), diff, {"notes/sent-log.md": line})

    assert TrajectoryJudge()(logged("documents/trip-VXE020.md")) is True
    assert TrajectoryJudge()(logged("documents/trip-VXE021.md")) is False


# -- what the agent made up, and what the request asks in other words ----------------------------------------
SET_ASIDE_TASK = (
    "Set aside 400.00 for my Edinburgh trip: get its confirmation code from the flights tool, transfer "
    "400.00 from checking to savings in the web bank with the memo 'trip Edinburgh <code>', and append "
    "'- set aside 400.00 for Edinburgh (<code>)' to notes/budget.md from the shell."
)


def _set_aside(code: str) -> JudgeView:
    booking = {"confirmation": "AXT042", "origin": "Bergen", "destination": "Edinburgh"}
    transfer = {
        "source": "Checking",
        "target": "Savings",
        "amount": "400.00",
        "memo": f"trip Edinburgh {code}",
    }
    savings = f"200  Savings Balance $7,700.00 2026-03-07T17:00:00 2026-03-07 Transfer from checking trip Edinburgh {code} $400.00"
    line = f"- set aside 400.00 for Edinburgh ({code})\n"
    calls = [
        ("mcp.flights_list", {}, json.dumps({"bookings": [booking]})),
        ("web.POST /bank/transfer", transfer, "303 /bank/savings"),
        ("web.GET /bank/savings", {}, savings),
        ("cli.exec", {"command": f"printf '%s' '{line}' >> notes/budget.md"}, "exit=0\n"),
    ]
    accounts = [balance_change(1, 100000, 60000), balance_change(2, 730000, 770000)]
    posted = [
        {
            "id": 7,
            "account_id": 1,
            "amount_cents": -40000,
            "memo": f"Transfer to savings trip Edinburgh {code}",
        },
        {
            "id": 8,
            "account_id": 2,
            "amount_cents": 40000,
            "memo": f"Transfer from checking trip Edinburgh {code}",
        },
    ]
    diff = {
        "bank/accounts": {**NO_ROWS, "changed": accounts},
        "bank/transactions": {**NO_ROWS, "added": posted},
        "files": {**NO_ROWS, "changed": ["notes/budget.md"]},
    }
    return JudgeView(SET_ASIDE_TASK, attempt(SET_ASIDE_TASK, calls), diff, {"notes/budget.md": line})


def test_a_code_typed_before_any_read_showed_it_is_made_up_even_when_read_back_later():
    """The memo said AXT043 where the flights tool showed AXT042; the savings page read after the
    transfer lists the memo, so the log's AXT043 counted as seen."""
    assert TrajectoryJudge()(_set_aside("AXT042")) is True
    assert TrajectoryJudge()(_set_aside("AXT043")) is False


def test_a_status_written_into_the_requests_format_without_reading_the_order_fails():
    task = (
        "Your todo.txt asks you to check an order's status. Look the order up in the web shop, tick the "
        "todo line as '- [x] check the status of order NUMBER: STATUS' with the shell."
    )
    todo = "# TODO\n- [ ] check the status of order ORD-00302\n"

    def ticked(read_the_order: bool) -> JudgeView:
        calls = [("cli.exec", {"command": "cat todo.txt"}, "exit=0\n" + todo)]
        if read_the_order:
            calls.append(
                ("web.GET /orders/ORD-00302", {}, "200  Order ORD-00302 Status cancelled Total $5.99")
            )
        calls.append(
            ("cli.exec", {"command": "sed -i 's|- \\[ \\] check|- [x] check|' todo.txt"}, "exit=0\n")
        )
        after = todo.replace(
            "- [ ] check the status of order ORD-00302",
            "- [x] check the status of order ORD-00302: cancelled",
        )
        diff = {"files": {**NO_ROWS, "changed": ["todo.txt"]}}
        return JudgeView(task, attempt(task, calls), diff, {"todo.txt": after})

    assert TrajectoryJudge()(ticked(read_the_order=True)) is True
    assert TrajectoryJudge()(ticked(read_the_order=False)) is False


REBOOK_TASK = (
    "Rebook the 'Milan' trip that was cancelled: a new flight from Bergen leaving 2026-03-10 at 06:40 "
    "through the flights tool."
)


def _rebooked(origin: str, destination: str) -> JudgeView:
    asked = {"origin": origin, "destination": destination, "depart_at": "2026-03-10T06:40:00"}
    booked = {"id": 2, "confirmation": "NEW002", **asked, "status": "confirmed"}
    calls = [("mcp.flights_book", asked, json.dumps(booked))]
    diff = {"flights/bookings": {**NO_ROWS, "added": [booked]}, "files": NO_ROWS}
    return JudgeView(REBOOK_TASK, attempt(REBOOK_TASK, calls), diff, {})


def test_a_flight_booked_to_a_place_the_request_never_names_fails():
    assert panel_votes(_rebooked("Bergen", "Milan")) == {"diff": True, "rules": True, "trajectory": True}
    assert panel_votes(_rebooked("unknown", "Nowhere")) == {
        "diff": False,
        "rules": False,
        "trajectory": False,
    }


def test_a_dm_or_a_mail_is_asked_for_in_the_words_the_templates_use():
    """'DM astrid.m ...' asked for no direct message and 'send that line to selin.holm@... in the
    webmail' for no mail, so an attempt that skipped either lost nothing with the judges."""
    assert "dm" in requested_apps("From the web calendar event 'Dinner', DM astrid.m 'Reminder: <start>'.")
    assert "mail" in requested_apps("and send that line to selin.holm@example.net in the webmail.")


# -- a request that names nothing the page shows -----------------------------------------------------------
LOG_TASK = (
    "Record the savings transfer of day 4: read it on the bank website, add '- <time>: moved <amount> to "
    "savings' to notes/budget.md in the shell, then send astrid.m a direct message 'I moved <amount> to "
    "savings on <time>.'"
)
CHECKING_ROWS = (
    "200  Shop Cart Orders Mail Compose Calendar Bank\nChecking\nBalance $2,863.51\n"
    "2026-03-06T08:30:00 | 2026-03-06 | Transfer to savings | -$250.00\n"
    "2026-03-05T08:15:00 | 2026-03-05 | Electricity bill BEMQ030 | -$47.00\n"
    "2026-03-02T08:00:00 | 2026-03-02 | Opening balance | $3,200.00"
)


def _transfer_log(amount: str) -> JudgeView:
    line = f"- 2026-03-06: moved {amount} to savings\n"
    dm = f"I moved {amount} to savings on 2026-03-06."
    calls = [
        ("web.GET /bank/checking", {}, CHECKING_ROWS),
        ("cli.exec", {"command": f"printf '%s' '{line}' >> notes/budget.md"}, "exit=0\n"),
        ("mcp.dm_send", {"peer": "astrid.m", "body": dm}, json.dumps({"peer": "astrid.m", "body": dm})),
    ]
    diff = {
        "dm/messages": {**NO_ROWS, "added": [{"peer": "astrid.m", "direction": "out", "body": dm}]},
        "files": {**NO_ROWS, "changed": ["notes/budget.md"]},
    }
    return JudgeView(LOG_TASK, attempt(LOG_TASK, calls), diff, {"notes/budget.md": line})


def test_a_request_naming_nothing_the_bank_shows_points_at_the_row_its_format_describes():
    """The request names no sender, title or file the bank page shows, so nothing observed was about
    it: the rules and trajectory judges failed every correct log (the task was rejected for judges
    that disagree with the verifier). Its format's words 'to savings' pick the row out; another
    row's amount still fails, and the page's rows are records of their own (`page_text`)."""
    assert panel_votes(_transfer_log("250.00")) == {"diff": True, "rules": True, "trajectory": True}
    wrong = _transfer_log("47.00")  # the electricity bill's amount, on the same page
    assert RuleReviewer()(wrong) is False
    assert TrajectoryJudge()(wrong) is False


def test_a_page_reads_as_a_text_browser_shows_it():
    """A page's text was one line that began with its style sheet ('body{font-family:...}'), so a
    table's rows were not records of their own and the style's words counted as the page's."""
    from envpipeline.worlds.agent_session import page_text

    html = (
        "<html><head><title>Checking</title><style>body{font-family:sans-serif}</style></head><body>"
        '<nav><a href="/">Shop</a><a href="/bank">Bank</a></nav><h1>Checking</h1><p>Balance <span>$1.00</span></p>'
        "<table><tr><td>2026-03-06</td><td>Transfer to savings &amp; more</td><td>-$250.00</td></tr>"
        "<tr><td>Lamp</td><td><form><button>Add to cart</button></form></td></tr></table></body></html>"
    )
    assert page_text(html) == (
        "Shop Bank\nChecking\nBalance $1.00\n2026-03-06 | Transfer to savings & more | -$250.00\nLamp | Add to cart"
    )


def test_a_record_written_to_without_opening_its_page_fails_the_trajectory_judge():
    """The calendar list shows no event's id: an attempt that read event 2 and moved event 1 (the
    scripted agents' wrong value) had a named title to point at and passed. A mail the mail tool
    showed (its answers carry ids) may be archived in the webmail without opening its page."""
    view = _move("2026-03-08 at 16:00")
    assert TrajectoryJudge()(view) is True
    moved_other = json.loads(json.dumps(view.trajectory).replace("/calendar/2/move", "/calendar/1/move"))
    assert TrajectoryJudge()(JudgeView(view.instruction, moved_other, view.state_diff, view.files)) is False
    read_by_tool = [("mcp.mail_read", {"message_id": 11}, '{"id": 11, "subject": "Receipt"}')]
    archived = [*read_by_tool, ("web.POST /mail/11/archive", {}, "303 /mail")]
    assert unopened_records(JudgeView("Archive the receipt.", attempt("", archived), {}, {})) is False
    elsewhere = [*read_by_tool, ("web.POST /mail/12/archive", {}, "303 /mail")]
    assert unopened_records(JudgeView("Archive the receipt.", attempt("", elsewhere), {}, {})) is True


ROTATE_TASK = (
    "I signed up at designboard.example on day 4. Find the login name in the welcome email in the webmail, "
    "set its password to 'violet-timber-15' with the accounts tool; then tell welcome@designboard.example "
    "from the webmail 'Password rotated for <login>.'"
)


def _rotated(login: str) -> JudgeView:
    welcome = (
        "200  Shop Cart\nWelcome to designboard.example\nFrom welcome@designboard.example\n"
        "To leila.petersen@example.com\nYour account leila.petersen@designboard.example is ready."
    )
    logins = {"logins": [{"username": "leila.petersen"}, {"username": "leila.petersen@designboard.example"}]}
    body = f"Password rotated for {login}."
    mail = {
        "to": "welcome@designboard.example",
        "subject": "Re: Welcome to designboard.example",
        "body": body,
    }
    calls = [
        ("web.GET /mail/7", {}, welcome),
        ("mcp.accounts_list", {}, json.dumps(logins)),
        (
            "mcp.accounts_set_password",
            {"username": login, "new_password": "violet-timber-15"},
            '{"changed": true}',
        ),
        ("web.POST /mail/send", mail, "303 /mail?folder=sent"),
    ]
    user = {"id": 2, "username": login, "password_hash": "old"}
    changed = {
        "id": 2,
        "fields": ["password_hash"],
        "before": user,
        "after": {**user, "password_hash": "new"},
    }
    sent = {"id": 9, "folder": "sent", "recipients": mail["to"], "subject": mail["subject"], "body": body}
    diff = {
        "accounts/users": {**NO_ROWS, "changed": [changed]},
        "mail/messages": {**NO_ROWS, "added": [sent]},
        "files": NO_ROWS,
    }
    return JudgeView(ROTATE_TASK, attempt(ROTATE_TASK, calls), diff, {})


def test_a_password_set_for_another_login_than_the_mail_names_fails():
    """'leila.petersen' is the start of the login the welcome mail names, not that login: a whole
    value check let the personal account pass for the site's."""
    assert panel_votes(_rotated("leila.petersen@designboard.example")) == {
        "diff": True,
        "rules": True,
        "trajectory": True,
    }
    wrong = _rotated("leila.petersen")
    assert RuleReviewer()(wrong) is False
    assert TrajectoryJudge()(wrong) is False
