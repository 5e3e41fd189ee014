"""The scripted agents' actions on the calendar and bank pages (web) and the flights and accounts tools (MCP).

Same contract as `agent_actions`: each coroutine gets the `Session`, the step's args, the drawn
mistake and the rng. Finding actions (``web.find_event``, ``web.find_transaction``,
``mcp.find_booking``) list the records and keep the one whose fields contain every ``match``
substring; they remember the columns named in ``vars`` ({var: column}). Hinted agents open the
hinted record's page or tool directly when the hint names it; unhinted ones scan every record.
`ACTIONS` is the full table (these plus `agent_actions.ACTIONS`) the agents interpret.
"""

from __future__ import annotations

import random
import re
from html import unescape
from typing import Any

from envpipeline.worlds.agent_actions import ACTIONS as BASE_ACTIONS
from envpipeline.worlds.agent_actions import Action, _file_elsewhere, _send_elsewhere, _store
from envpipeline.worlds.agent_session import Session

_EVENT_ROW = re.compile(
    r'<tr id="event-(\d+)"><td><a [^>]*>([^<]*)</a></td><td class="start">([^<]*)</td><td>([^<]*)</td>'
    r"<td>([^<]*)</td></tr>"
)
_TX_ROW = re.compile(
    r'<tr id="tx-(\d+)"><td class="posted">([^<]*)</td><td class="day">[^<]*</td><td class="memo">([^<]*)</td>'
    r'<td class="amount">([^<]*)</td></tr>'
)


def _matches(record: dict[str, Any], match: dict[str, str]) -> bool:
    return all(str(text) in str(record.get(column) or "") for column, text in match.items())


def with_parts(record: dict[str, Any]) -> dict[str, Any]:
    """`record` plus ``<col>_date`` and ``<col>_time`` for its date-time columns (as a page shows them)."""
    out = dict(record)
    for column in ("start", "depart_at", "posted_at"):
        value = str(record.get(column) or "")
        if len(value) >= 16:
            out.setdefault(f"{column}_date", value[:10])
            out.setdefault(f"{column}_time", value[11:16])
    return out


def _remember(s: Session, a: dict, found: dict[str, Any] | None, mistake: str | None, rng: random.Random):
    found = None if found is None else with_parts(found)
    names: dict[str, str] = a.get("vars") or {}
    values = None if found is None else [str(found.get(column) or "") for column in names.values()]
    _store(s, {**a, "vars": list(names)}, values, mistake, rng)


def _pick(records: list[dict[str, Any]], a: dict) -> dict[str, Any] | None:
    match = a.get("match") or {}
    hits = [r for r in records if _matches(r, match)]
    return hits[-1] if hits else None


# -- MCP: flights and accounts -----------------------------------------------------------------------
async def find_booking(s: Session, a: dict, mistake: str | None, rng: random.Random) -> None:
    found = None
    if s.hinted and a.get("confirmation"):
        ok, data = await s.tool("flights_get", confirmation=a["confirmation"])
        found = data if ok else None
    if found is None:
        ok, data = await s.tool("flights_list")
        found = _pick(data["bookings"] if ok else [], a)
    _remember(s, a, found, mistake, rng)


async def change_booking(s: Session, a: dict, mistake: str | None, rng: random.Random) -> None:
    depart = s.fmt(a["depart_at"], mistake == "wrong_value", rng)
    if mistake == "wrong_interface":
        return await _file_elsewhere(s, f"change {s.fmt(a['confirmation'])} to {depart}")
    await s.tool("flights_change", confirmation=s.fmt(a["confirmation"]), depart_at=depart)


async def cancel_booking(s: Session, a: dict, mistake: str | None, rng: random.Random) -> None:
    confirmation = s.fmt(a["confirmation"], mistake == "wrong_value", rng)
    if mistake == "wrong_interface":
        return await _file_elsewhere(s, f"cancel {confirmation}")
    await s.tool("flights_cancel", confirmation=confirmation)


async def book_flight(s: Session, a: dict, mistake: str | None, rng: random.Random) -> None:
    depart = s.fmt(a["depart_at"], mistake == "wrong_value", rng)
    if mistake == "wrong_interface":
        return await _file_elsewhere(s, f"book {s.fmt(a['destination'])} {depart}")
    ok, data = await s.tool(
        "flights_book", origin=s.fmt(a["origin"]), destination=s.fmt(a["destination"]), depart_at=depart
    )
    if ok and a.get("var"):
        s.vars[a["var"]] = str(data.get("confirmation", ""))


async def set_password(s: Session, a: dict, mistake: str | None, rng: random.Random) -> None:
    password = s.fmt(a["new_password"], mistake == "wrong_value", rng)
    if mistake == "wrong_interface":
        return await _send_elsewhere(s, f"new password for {s.fmt(a['username'])}")
    if not s.hinted:
        await s.tool("accounts_list")
    await s.tool("accounts_set_password", username=s.fmt(a["username"]), new_password=password)


# -- web: calendar and bank ------------------------------------------------------------------------
async def find_event(s: Session, a: dict, mistake: str | None, rng: random.Random) -> None:
    rows = [
        {"id": i, "title": unescape(t), "start": st, "end": en, "location": unescape(loc)}
        for i, t, st, en, loc in _EVENT_ROW.findall(s.web("GET", "/calendar").text)
    ]
    found = _pick(rows, a)
    if found is not None:
        s.web("GET", f"/calendar/{found['id']}")
    _remember(s, a, found, mistake, rng)


async def move_event(s: Session, a: dict, mistake: str | None, rng: random.Random) -> None:
    start = s.fmt(a["start"], mistake == "wrong_value", rng)
    if mistake == "wrong_interface":
        return await _send_elsewhere(s, f"move {s.fmt(a['event'])} to {start}")
    s.web("POST", f"/calendar/{s.fmt(a['event'])}/move", data={"start": start})


async def cancel_event(s: Session, a: dict, mistake: str | None, rng: random.Random) -> None:
    event = s.fmt(a["event"])
    if mistake == "wrong_interface":
        return await _send_elsewhere(s, f"cancel event {event}")
    if mistake == "wrong_value":
        event = str(max(1, int(event) - 1)) if event.isdigit() else event
    s.web("POST", f"/calendar/{event}/cancel")


def _shifted(iso: str, days: int) -> str:
    """`iso` moved by `days` (unchanged when it is not a date-time)."""
    from datetime import datetime, timedelta

    try:
        return (datetime.fromisoformat(iso) + timedelta(days=days)).isoformat(timespec="seconds")
    except ValueError:
        return iso


async def add_event(s: Session, a: dict, mistake: str | None, rng: random.Random) -> None:
    start = _shifted(s.fmt(a["start"], mistake == "wrong_value", rng), int(a.get("shift_days", 0)))
    if a.get("var"):
        s.vars[a["var"]] = start
    if mistake == "wrong_interface":
        return await _send_elsewhere(s, f"{s.fmt(a['title'])} {start}")
    s.web("GET", "/calendar/new")
    form = {k: s.fmt(a.get(k, "")) for k in ("title", "end", "location", "attendees")}
    end = _shifted(form["end"], int(a.get("shift_days", 0))) if form["end"] else start
    s.web("POST", "/calendar/add", data={**form, "start": start, "end": end})


async def find_transaction(s: Session, a: dict, mistake: str | None, rng: random.Random) -> None:
    accounts = [a["account"]] if s.hinted else ["checking", "savings"]
    found = None
    for account in accounts:
        rows = [
            {"id": i, "posted_at": p, "memo": unescape(m), "amount": amt.replace("$", "").replace(",", "")}
            for i, p, m, amt in _TX_ROW.findall(s.web("GET", f"/bank/{account}").text)
        ]
        found = _pick(list(reversed(rows)), a) or found
        if found is not None:
            break
    if found is not None and found["amount"].startswith("-"):
        found["amount"] = found["amount"][1:]
    _remember(s, a, found, mistake, rng)


async def read_balance(s: Session, a: dict, mistake: str | None, rng: random.Random) -> None:
    if not s.hinted:
        s.web("GET", "/bank")
    page = s.web("GET", f"/bank/{a['account']}").text
    found = re.search(r'id="balance">\$?([^<]+)<', page)
    value = found.group(1) if found else None  # as the page shows it: 1,234.56
    _store(s, {**a, "vars": [a["var"]]}, [value] if value else None, mistake, rng)


def _cents_text(value: str, percent: int | None) -> str:
    """`value` (dollars, e.g. 3400.00) or `percent` of it, as a plain amount with cents."""
    try:
        cents = round(float(value.replace(",", "")) * 100)
    except ValueError:
        return value
    if percent is not None:
        cents = cents * percent // 100
    return f"{cents / 100:.2f}"


async def transfer(s: Session, a: dict, mistake: str | None, rng: random.Random) -> None:
    amount = _cents_text(s.fmt(a["amount"], mistake == "wrong_value", rng), a.get("percent"))
    memo = s.fmt(a.get("memo", ""))
    if mistake == "wrong_interface":
        return await _send_elsewhere(s, f"transfer {amount} {memo}")
    s.web("GET", "/bank/transfer")
    data = {"source": a["source"], "target": a["target"], "amount": amount, "memo": memo}
    if s.web("POST", "/bank/transfer", data=data).status_code == 303:
        s.web("GET", f"/bank/{a['target'].lower()}")  # check the posting
    if a.get("var"):
        s.vars[a["var"]] = amount


async def pay(s: Session, a: dict, mistake: str | None, rng: random.Random) -> None:
    amount = _cents_text(s.fmt(a["amount"], mistake == "wrong_value", rng), a.get("percent"))
    memo = s.fmt(a.get("memo", ""))
    if mistake == "wrong_interface":
        return await _send_elsewhere(s, f"pay {s.fmt(a['payee'])} {amount}")
    s.web("GET", "/bank/transfer")
    data = {"account": a["account"], "payee": s.fmt(a["payee"]), "amount": amount, "memo": memo}
    if s.web("POST", "/bank/pay", data=data).status_code == 303:
        s.web("GET", f"/bank/{a['account'].lower()}")
    if a.get("var"):
        s.vars[a["var"]] = amount


LIFE_ACTIONS: dict[str, Action] = {
    "mcp.find_booking": find_booking,
    "mcp.change_booking": change_booking,
    "mcp.cancel_booking": cancel_booking,
    "mcp.book_flight": book_flight,
    "mcp.set_password": set_password,
    "web.find_event": find_event,
    "web.move_event": move_event,
    "web.cancel_event": cancel_event,
    "web.add_event": add_event,
    "web.find_transaction": find_transaction,
    "web.read_balance": read_balance,
    "web.transfer": transfer,
    "web.pay": pay,
}
#: Every action the scripted agents interpret, by ``interface.verb``.
ACTIONS: dict[str, Action] = {**BASE_ACTIONS, **LIFE_ACTIONS}
