"""The procedural world judges read an attempt as a person would: found by the disagreements of
`judge_consistency` (verifier against panel) over 8 personas x 5 days, where the judges failed
correct attempts or passed ones that skipped a step (89 of 120 tasks accepted before, 97 after).

Each test builds one attempt by hand: the instruction, the agent's calls and what they showed, the
diff of the world and the changed files' text, exactly what a judge sees (`JudgeView`)."""

from __future__ import annotations

import json

from envpipeline.worlds.agent_session import corrupt_value
from envpipeline.worlds.judge_view import JudgeView, requested_apps
from envpipeline.worlds.judges import DiffJudge, RuleReviewer, TrajectoryJudge
from tests.judge_attempts import NO_ROWS, attempt

ORDER_TASK = (
    "Hi! Your todo.txt asks you to check an order's status. Look the order up in the web shop, tick the "
    "todo line as '- [x] check the status of order NUMBER: STATUS' with the shell, and tell Amara "
    "Kowalski (amara.k) the status by direct message. Thanks!"
)
TODO_BEFORE = (
    "# TODO\n- [x] sort out this week's plans\n- [ ] reply to Noor Yilmaz\n"
    "- [ ] clean the inbox (added day 1)\n- [ ] check the status of order ORD-00302\n"
)
TRANSFER_TASK = (
    "Quick one: Set aside 250.00 for my Warsaw trip: get its confirmation code from the flights tool, "
    "transfer 250.00 from checking to savings in the web bank with the memo 'trip Warsaw <code>', and "
    "append '- set aside 250.00 for Warsaw (<code>)' to notes/budget.md from the shell. Thanks!"
)


def _orderattempt(dm_body: str, page: str = "ORD-00302", status: str = "placed") -> JudgeView:
    """The order follow-up: todo.txt names ORD-00302; the agent reads `page` and ticks `status`."""
    todo_after = TODO_BEFORE.replace(
        "- [ ] check the status of order ORD-00302", f"- [x] check the status of order ORD-00302: {status}"
    )
    calls = [
        ("cli.exec", {"command": "cat todo.txt"}, "exit=0\n" + TODO_BEFORE),
        (f"web.GET /orders/{page}", {}, f"200  Order {page} Status {status} Total $5.99"),
        ("cli.exec", {"command": "sed -i 's|- \\[ \\] check|- [x] check|' todo.txt"}, "exit=0\n"),
        (
            "mcp.dm_send",
            {"peer": "amara.k", "body": dm_body},
            json.dumps({"peer": "amara.k", "body": dm_body}),
        ),
    ]
    row = {"id": 5, "peer": "amara.k", "direction": "out", "body": dm_body, "sent_at": "2026-03-05T17:00:00"}
    diff = {"dm/messages": {**NO_ROWS, "added": [row]}, "files": {**NO_ROWS, "changed": ["todo.txt"]}}
    return JudgeView(ORDER_TASK, attempt(ORDER_TASK, calls), diff, {"todo.txt": todo_after})


def test_a_correct_order_follow_up_passes_every_judge():
    """Before, the rules judge took the order number the agent read in todo.txt and on the order's
    page for an invented one (only numbers of new orders or of the request counted) and the status
    read on that page for a value from elsewhere (a page counted as followed only when the call's
    arguments named a path, not when its address named the order), and the trajectory judge read
    the untouched line "clean the inbox" as "clean the inbo" (a checkbox's `x` stripped off the end
    of a word) and called it copied but cut short."""
    view = _orderattempt("Update: order ORD-00302 is placed.")
    assert [judge(view) for judge in (DiffJudge(), RuleReviewer(), TrajectoryJudge())] == [True, True, True]


def test_an_order_number_nobody_read_is_still_invented_and_another_orders_status_still_wrong():
    view = _orderattempt("Update: order ORD-00999 is placed.")
    assert RuleReviewer()(view) is False
    other = _orderattempt("Update: order ORD-00302 is cancelled.", page="ORD-00303", status="cancelled")
    assert RuleReviewer()(other) is False  # the page of an order the todo list does not name


def test_a_transfer_of_an_amount_asks_the_bank_and_a_skipped_one_fails():
    """ "transfer 250.00 from checking": the amount's full stop ended the clause, so the request
    asked no bank write, and an attempt that skipped the transfer and wrote a wrong code in the log
    passed all three judges."""
    assert requested_apps(TRANSFER_TASK) == {"bank", "files"}
    flight = json.dumps({"confirmation": "UGT052", "destination": "Warsaw"})
    line = "- set aside 250.00 for Warsaw (UGT052)\n"
    calls = [
        ("mcp.flights_get", {"confirmation": "UGT052"}, flight),
        ("cli.exec", {"command": f"printf '%s' '{line}' >> notes/budget.md"}, "exit=0\n"),
    ]
    diff = {"files": {**NO_ROWS, "changed": ["notes/budget.md"]}}
    skipped = JudgeView(TRANSFER_TASK, attempt(TRANSFER_TASK, calls), diff, {"notes/budget.md": line})
    assert DiffJudge()(skipped) is False
    assert TrajectoryJudge()(skipped) is False
    transfer = {"from": "checking", "to": "savings", "amount": "250.00", "memo": "trip Warsaw UGT052"}
    done_calls = [calls[0], ("web.POST /bank/transfer", transfer, "303 /bank/savings"), calls[1]]
    rows = [{"id": 9, "account": "savings", "amount_cents": 25000, "memo": "trip Warsaw UGT052"}]
    done_diff = {**diff, "bank/transactions": {**NO_ROWS, "added": rows}}
    done = JudgeView(TRANSFER_TASK, attempt(TRANSFER_TASK, done_calls), done_diff, {"notes/budget.md": line})
    assert DiffJudge()(done) is True


def test_a_wrong_value_of_the_scripted_agents_is_wrong_not_a_dropped_full_stop():
    """A scripted agent's wrong value dropped the last character: "cleaning up last week's notes."
    lost its full stop, which every judge rightly passed while the verifier failed it, so the task
    was rejected for judges that disagree with the verifier."""
    assert corrupt_value("cleaning up last week's notes.") == "cleaning up last week's note."
    assert corrupt_value("placed") == "place"
    assert corrupt_value("ORD-00302") == "ORD-00303"


FILE_TASK = (
    "For today: Astrid Silva asked by email for one of your files. Read the request with the mail tool, "
    "get the file's content with the shell, send it to astrid.silva@example.org from the webmail with the "
    "subject 'Re: Request: trip-VXE020.md', and log '- sent PATH to astrid.silva@example.org' in "
    "notes/sent-log.md. Thanks!"
)
TRIP_FILE = (
    "# Trip to Prague\n\n- Flight: VXE020 departing 2026-03-12T06:25:00\n- Hotel: Station Hotel, 3 nights\n"
)


def _fileattempt(body: str) -> JudgeView:
    request = {
        "id": 7,
        "sender": "astrid.silva@example.org",
        "subject": "Request: trip-VXE020.md",
        "body": "Hi, could you send me the contents of documents/trip-VXE020.md? Thanks, Astrid Silva",
        "sent_at": "2026-03-05T15:40:00",
    }
    log = "- sent documents/trip-VXE020.md to astrid.silva@example.org\n"
    mail = {"to": "astrid.silva@example.org", "subject": "Re: Request: trip-VXE020.md", "body": body}
    calls = [
        ("mcp.mail_read", {"message_id": 7}, json.dumps(request)),
        ("cli.exec", {"command": "cat documents/trip-VXE020.md"}, "exit=0\n" + TRIP_FILE),
        ("web.POST /mail/send", mail, "303 /mail?folder=sent"),
        ("cli.exec", {"command": f"printf '%s' '{log}' >> notes/sent-log.md"}, "exit=0\n"),
    ]
    row = {"id": 8, "folder": "sent", "recipients": "astrid.silva@example.org", **mail}
    diff = {
        "mail/messages": {**NO_ROWS, "added": [row]},
        "files": {**NO_ROWS, "changed": ["notes/sent-log.md"]},
    }
    return JudgeView(FILE_TASK, attempt(FILE_TASK, calls), diff, {"notes/sent-log.md": log})


def test_a_file_sent_on_whole_keeps_its_date_and_time_stamps():
    """The judges drop the reads' date-time stamps as metadata (when a message was sent) before
    they compare values, so a file sent on whole, "departing 2026-03-12T06:25:00", read as a date
    and a time the agent never saw: both the rules and the trajectory judge failed a correct reply.
    A stamp the agent changed is still one it never saw."""
    view = _fileattempt(TRIP_FILE)
    assert [judge(view) for judge in (DiffJudge(), RuleReviewer(), TrajectoryJudge())] == [True, True, True]
    changed = _fileattempt(TRIP_FILE.replace("06:25", "07:25"))
    assert RuleReviewer()(changed) is False and TrajectoryJudge()(changed) is False
