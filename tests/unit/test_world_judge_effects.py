"""The judges hold the calls a trajectory shows against the state they left (`judge_effects`).

Each case is an attempt whose trajectory shows the work done while the final state does not hold
it (what the counterfactual probe builds, and what a write undone later leaves); the same attempt
with the state that matches its calls passes.
"""

from __future__ import annotations

from typing import Any

from envpipeline.worlds.judge_effects import named_mail_calls, sent_as_named, writes_took_effect
from envpipeline.worlds.judge_view import JudgeView
from envpipeline.worlds.judges import stands_in
from tests.judge_attempts import NO_ROWS, attempt, balance_change

AGENDA = "Add a line '- DATE TIME budget' to notes/agenda.md with the shell."
APPEND = "printf '%s' '- 2026-03-10 14:30 budget\n' >> notes/agenda.md"


def view(instruction: str, calls: list[tuple[str, dict, str]], diff: dict[str, Any], files=None) -> JudgeView:
    state = {"files": {"added": [], "removed": [], "changed": []}, **diff}
    return JudgeView(instruction, attempt(instruction, calls), state, files or {})


def test_a_line_the_shell_appended_must_be_in_the_file():
    calls = [("cli.exec", {"command": APPEND}, "exit=0\n")]
    changed = {"files": {"added": [], "removed": [], "changed": ["notes/agenda.md"]}}
    kept = view(AGENDA, calls, changed, {"notes/agenda.md": "# Agenda\n- 2026-03-10 14:30 budget\n"})
    assert writes_took_effect(kept)
    corrupted = view(
        AGENDA, calls, changed, {"notes/agenda.md": "# Agenda\n- 2026-03-10 <corrupted> budget\n"}
    )
    assert not writes_took_effect(corrupted)
    assert not writes_took_effect(view(AGENDA, calls, {}))  # the file never changed
    # rewritten later by a command that replaces the file: the first text need not be there
    rewrite = ("cli.exec", {"command": "echo '- 2026-03-11 09:00 budget' > notes/agenda.md"}, "exit=0\n")
    later = view(AGENDA, [*calls, rewrite], changed, {"notes/agenda.md": "- 2026-03-11 09:00 budget\n"})
    assert writes_took_effect(later)


def test_a_descriptor_redirection_is_no_part_of_the_text_written():
    calls = [
        ("cli.exec", {"command": "echo '- 2026-03-10 budget' 2>/dev/null >> notes/agenda.md"}, "exit=0\n")
    ]
    changed = {"files": {"added": [], "removed": [], "changed": ["notes/agenda.md"]}}
    assert writes_took_effect(view(AGENDA, calls, changed, {"notes/agenda.md": "- 2026-03-10 budget\n"}))
    count = [("cli.exec", {"command": "echo 2 > notes/count.txt"}, "exit=0\n")]
    counted = {"files": {"added": ["notes/count.txt"], "removed": [], "changed": []}}
    assert writes_took_effect(view(AGENDA, count, counted, {"notes/count.txt": "2\n"}))
    assert not writes_took_effect(view(AGENDA, count, counted, {"notes/count.txt": "3\n"}))


def test_a_sed_replacement_must_be_in_the_file_and_a_failed_command_counts_for_nothing():
    command = "sed -i 's|- \\[ \\] Tent (running low)|- [x] Tent (ordered ORD-7)|' notes/restock.md"
    calls = [("cli.exec", {"command": command}, "exit=0\n")]
    changed = {"files": {"added": [], "removed": [], "changed": ["notes/restock.md"]}}
    assert writes_took_effect(
        view("Tick it off.", calls, changed, {"notes/restock.md": "- [x] Tent (ordered ORD-7)\n"})
    )
    assert not writes_took_effect(
        view("Tick it off.", calls, changed, {"notes/restock.md": "- [x] Tent (ordered ORD-8)\n"})
    )
    failed = [("cli.exec", {"command": command}, "exit=2\nsed: no such file")]
    assert writes_took_effect(view("Tick it off.", failed, {}))


def test_a_mail_sent_a_transfer_posted_and_an_event_moved_show_in_the_diff():
    sent = [("mcp.mail_send", {"to": "a@b.example", "subject": "Hi", "body": "x"}, '{"id": 9}')]
    mail = {"mail/messages": {**NO_ROWS, "added": [{"id": 9, "folder": "sent", "recipients": "a@b.example"}]}}
    assert writes_took_effect(view("Email a@b.example.", sent, mail))
    assert not writes_took_effect(view("Email a@b.example.", sent, {}))  # the sent mail deleted

    transfer = [
        (
            "web.POST /bank/transfer",
            {"source": "checking", "target": "savings", "amount": "50.00"},
            "303 /bank/2",
        )
    ]
    accounts = {"changed": [balance_change(1, 10000, 5000), balance_change(2, 0, 5000)]}
    both = [
        {"id": 7, "account_id": 1, "amount_cents": -5000},
        {"id": 8, "account_id": 2, "amount_cents": 5000},
    ]
    posted = {"bank/accounts": {**NO_ROWS, **accounts}, "bank/transactions": {**NO_ROWS, "added": both}}
    assert writes_took_effect(view("Transfer 50.00 to savings.", transfer, posted))
    one_side = {**posted, "bank/transactions": {**NO_ROWS, "added": both[:1]}}
    assert not writes_took_effect(
        view("Transfer 50.00 to savings.", transfer, one_side)
    )  # savings moved unposted

    move = [("web.POST /calendar/5/move", {"start": "2026-03-12T10:00"}, "303 /calendar/5")]
    before = {"id": 5, "start": "2026-03-11T09:00", "end": "2026-03-11T10:00"}
    moved = {**before, "start": "2026-03-12T10:00", "end": "2026-03-12T11:00"}
    event = {"id": 5, "fields": ["end", "start"], "before": before, "after": moved}
    assert writes_took_effect(view("Move it.", move, {"calendar/events": {**NO_ROWS, "changed": [event]}}))
    half = {**event, "fields": ["start"], "after": {**moved, "end": before["end"]}}  # its end reverted
    assert not writes_took_effect(view("Move it.", move, {"calendar/events": {**NO_ROWS, "changed": [half]}}))
    other = {**event, "id": 6}  # another event moved than the one the call named
    assert not writes_took_effect(
        view("Move it.", move, {"calendar/events": {**NO_ROWS, "changed": [other]}})
    )


def test_the_interface_named_for_a_mail_is_the_one_of_the_clause_that_addresses_it():
    expense = (
        "File order ORD-1 as an expense: find the email 'Receipt for order ORD-1' in the webmail, write the "
        "total into downloads/x.txt with the shell, email the total to Rosa <rosa@example.org> through the "
        "mail tool with the subject 'Expense ORD-1', then archive the order email in the webmail."
    )
    assert named_mail_calls(expense) == ("mcp.mail_send",)  # the last mention reads or archives
    nested = (
        "Drop the meeting 'Sync' I set up: cancel the event on the web calendar, send Joon (joon@x.example) "
        "the email 'Sorry, I have to cancel 'Sync' on 2026-03-12. Let's find another slot.' through the mail "
        "tool, and note it in notes/agenda.md with the shell."
    )
    assert named_mail_calls(nested) == ("mcp.mail_send",)  # a quote within a quote hid the clause
    assert named_mail_calls("Send it to a@b.example.") == ("mcp.mail_send", "web.POST /mail/send")
    through_web = [("web.POST /mail/send", {"to": "rosa@example.org"}, "303 /mail")]
    assert not sent_as_named(view(expense, through_web, {}))
    assert sent_as_named(view(expense, [("mcp.mail_send", {"to": "rosa@example.org"}, '{"id": 3}')], {}))


def test_a_stand_in_is_a_word_anywhere_or_a_whole_piece_but_no_token_of_the_harness():
    assert stands_in("Meeting on unknown at 14:00")
    assert stands_in("- 2026-03-10: TBD")
    assert stands_in("Amount: ???")
    assert not stands_in("Attendees: none")
    assert not stands_in("- 2026-03-10 <corrupted> budget")  # the probe's marker is no judge's business
