"""What a world attempt acted on, read off its diff and calls: the events and bookings it added or
changed (named by the instruction or not), the start times and logins it set, the records it wrote
to (opened first or not) and the codes it typed (read first or made up)."""

from __future__ import annotations

import json
import re
from typing import Any

from envpipeline.worlds.judge_view import (
    STAMP,
    JudgeView,
    call_ok,
    instruction_anchors,
    is_write,
    occurs,
    order_numbers,
    row_text,
    tool_calls,
)

#: Tables whose rows an instruction names before it asks to change them (an event by its title, a
#: booking by its destination or confirmation code).
NAMED_ROWS = ("calendar/events", "flights/bookings")


def named_row(view: JudgeView, key: str, row: dict[str, Any]) -> bool:
    """A row of `key` the agent changed (its state before) or added is one the instruction names:
    the event it cancels, the booking it moves, the flight it books to the place the request
    names (any row of another table passes)."""
    if key not in NAMED_ROWS:
        return True
    text = row_text(row)
    codes = CODE.findall(view.instruction)
    if codes and not any(code in text for code in codes):
        return False  # the request names its trip by code: the hotel's event of 'Vienna' is not it
    return any(a in text for a in instruction_anchors(view.instruction))


def unnamed_rows(view: JudgeView) -> bool:
    """Some event or booking the agent added or changed is none the instruction names, a flight it
    booked goes elsewhere than the places named, or a mail it archived is not the one named."""
    for key in NAMED_ROWS:
        entry = view.state_diff.get(key, {})
        rows = [c["before"] for c in entry.get("changed", [])] + list(entry.get("added", []))
        if not all(named_row(view, key, row) for row in rows):
            return True
    if any(
        not route_named(view, row) for row in view.state_diff.get("flights/bookings", {}).get("added", [])
    ):
        return True
    mails = view.state_diff.get("mail/messages", {}).get("changed", [])
    return any(not mail_named(view, c["before"]) for c in mails if "folder" in c["fields"])


def mail_named(view: JudgeView, mail: dict[str, Any]) -> bool:
    """A mail archived (or moved) is one the request names: by a code it gives ('archive the order
    email' of 'File order ORD-00203': not the mail beside it), else by a quoted subject or address."""
    text = f"{mail.get('subject') or ''}\n{mail.get('sender') or ''}"
    codes = CODE.findall(view.instruction)
    if codes:
        return any(code in text for code in codes)
    return any(a in text for a in instruction_anchors(view.instruction))


def route_named(view: JudgeView, booking: dict[str, Any]) -> bool:
    """A flight booked goes between the places the request names, where it names places at all
    ('Book Lyon -> Warsaw': a flight from 'Lyo', or from the other airport the agent read, is not it)."""
    free = view.instruction
    ends = [str(booking.get(end) or "") for end in ("origin", "destination")]
    named = [
        bool(place) and re.search(rf"(?<!\w){re.escape(place)}(?!\w)", free) is not None for place in ends
    ]
    return all(named) or not any(named)


def written_starts(view: JudgeView) -> list[str]:
    """The start stamps the agent set: of calendar events it added or moved, of bookings it made or
    moved (``2026-03-14T06:40:00``)."""
    out = []
    for key, field in (("calendar/events", "start"), ("flights/bookings", "depart_at")):
        entry = view.state_diff.get(key, {})
        out += [str(r.get(field) or "") for r in entry.get("added", [])]
        out += [str(c["after"].get(field) or "") for c in entry.get("changed", []) if field in c["fields"]]
    return [s for s in out if STAMP.fullmatch(s)]


#: A code nobody can work out, only read: a confirmation (AXT042), a bank reference (RNYQT030), an
#: order number or a SKU, standing alone (not the name of a file, trip-VXE020.md).
CODE = re.compile(r"(?<![\w/.-])(?:[A-Z]{3,6}\d{3}|ORD-\w+|SKU-[\w-]+)(?![\w/-]|\.\w)")


def first_written(view: JudgeView, code: str) -> bool:
    """The agent wrote `code` before any read showed it (nor does the instruction name it): a code it
    made up, which a later read of its own write (the savings page listing the memo it just typed)
    does not make seen."""
    if occurs(code, view.instruction) or code in order_numbers(view):
        return False  # dictated, or the number of the order it placed
    for name, arguments, result in tool_calls(view):
        if is_write(name, arguments) and code in json.dumps(arguments, ensure_ascii=False):
            return True
        if call_ok(result) and occurs(code, result):
            return False  # shown by a read, or by what a write answered (a checkout's new order)
    return False


#: A web write on one record (``web.POST /calendar/5/move``): the record's page, ``/calendar/5``.
RECORD_WRITE = re.compile(r"web\.POST (/[a-z]+/\d+)/")
#: The MCP tools whose answers give the ids of the web's records (a mail's ``"id": 11`` is the web
#: mail ``/mail/11``).
RECORD_IDS = {"mcp.mail_": "/mail/"}
_ID = re.compile(r'"id": (\d+)')


def unopened_records(view: JudgeView) -> bool:
    """The agent wrote to a record it never saw the id of (the web shows a record's id only in its
    address; the mail tool in its answers): it moved event 5 having read event 4."""
    opened: set[str] = set()
    for name, _, result in tool_calls(view):
        found = RECORD_WRITE.match(name)
        if found and found.group(1) not in opened:
            return True
        if not call_ok(result):
            continue
        if name.startswith("web.GET "):
            opened.add(name.removeprefix("web.GET ").split("?")[0])
        for tool, page in RECORD_IDS.items():
            if name.startswith(tool):
                opened |= {page + n for n in _ID.findall(result)}
    return False


def named_whole(value: str, text: str) -> bool:
    """`value` is in `text` as a whole name, not the start of a longer one (the login
    'leila.petersen' is not the 'leila.petersen@designboard.example' a mail names)."""
    return re.search(rf"(?<![\w.@+-]){re.escape(value)}(?![\w@+-]|\.\w)", text) is not None


def changed_logins(view: JudgeView) -> list[str]:
    """The logins whose password the agent set."""
    return [
        str(c["before"].get("username")) for c in view.state_diff.get("accounts/users", {}).get("changed", [])
    ]


def clock_of(stamp: str) -> str:
    """The time of day a stamp sets, as a person writes it: ``06:40`` (``06:40:01`` when its seconds
    are not zero, which nobody reads anywhere)."""
    return stamp[11:16] if stamp[17:19] in ("", "00") else stamp[11:19]
