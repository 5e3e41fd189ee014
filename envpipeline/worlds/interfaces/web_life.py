"""The calendar and bank pages of the world's web app (server-rendered HTML, real forms, stable ids).

Routes (mounted by `interfaces.web.create_web_app` on the same `LifeStore` as the shop and mail):

    GET  /calendar                   every event: id, title, start, end, location
    GET  /calendar/<id>              one event with a move form and a cancel button
    POST /calendar/<id>/move         form: start        -> 303 /calendar/<id>
    POST /calendar/<id>/cancel       -> 303 /calendar/<id> (title gains 'Cancelled: ')
    GET  /calendar/new               form: title, start, end, location, attendees
    POST /calendar/add               -> 303 /calendar/<new id>
    GET  /bank                       accounts with balances
    GET  /bank/<account>             the account's transactions, newest first
    GET  /bank/transfer              forms: transfer between own accounts, pay someone
    POST /bank/transfer              form: source, target, amount, memo -> 303 /bank/<target>
    POST /bank/pay                   form: account, payee, amount, memo -> 303 /bank/<account>
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from urllib.parse import quote

from envpipeline.errors import MissingExtraError
from envpipeline.worlds.lifestore import LifeStore
from envpipeline.worlds.worldstore import WorldInputError

try:
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, RedirectResponse, Response
    from starlette.routing import Route
except ImportError as missing:
    raise MissingExtraError("worlds", missing, needed_by=__name__) from missing

Page = Callable[[str, str], HTMLResponse]


def _money(cents: int) -> str:
    sign = "-" if cents < 0 else ""
    return f"{sign}${abs(cents) / 100:,.2f}"


def parse_amount(text: str) -> int:
    """Cents of a form amount such as ``120``, ``120.50`` or ``$1,200.00``."""
    cleaned = (text or "").replace("$", "").replace(",", "").strip()
    try:
        cents = round(float(cleaned) * 100)
    except ValueError as e:
        raise WorldInputError(f"amount must be a number like 120.50, not {text!r}") from e
    return cents


def life_routes(store: LifeStore, page: Page, handled: Callable[[Callable], Callable]) -> list[Route]:
    """The calendar and bank routes over `store`, rendered with the web app's `page`."""

    async def calendar(request: Request) -> Response:
        rows = "".join(
            f'<tr id="event-{e["id"]}"><td><a id="event-link-{e["id"]}" href="/calendar/{e["id"]}">'
            f'{escape(e["title"] or "")}</a></td><td class="start">{escape(e["start"] or "")}</td>'
            f"<td>{escape(e['end'] or '')}</td><td>{escape(e['location'] or '')}</td></tr>"
            for e in store.events()
        )
        table = (
            '<table id="events"><thead><tr><th>Event</th><th>Start</th><th>End</th><th>Where</th></tr>'
            f"</thead><tbody>{rows}</tbody></table>"
            if rows
            else '<p id="no-events">No events.</p>'
        )
        return page("Calendar", table + '<p><a id="new-event" href="/calendar/new">New event</a></p>')

    async def event(request: Request) -> Response:
        e = store.event(int(request.path_params["id"]))
        start = str(e["start"] or "")
        body = (
            f'<p>Date <span id="event-date">{escape(start[:10])}</span> at '
            f'<span id="event-time">{escape(start[11:16])}</span></p>'
            f'<p>Start <span id="event-start">{escape(start)}</span></p>'
            f'<p>End <span id="event-end">{escape(e["end"] or "")}</span></p>'
            f'<p>Where <span id="event-location">{escape(e["location"] or "")}</span></p>'
            f'<p>Attendees <span id="event-attendees">{escape(e["attendees_json"] or "[]")}</span></p>'
            f'<form method="post" action="/calendar/{e["id"]}/move" id="move-form">'
            '<label for="start">New start</label>'
            f'<input id="start" name="start" type="datetime-local" value="{escape(e["start"] or "")}">'
            '<button type="submit" id="move">Move</button></form>'
            f'<form method="post" action="/calendar/{e["id"]}/cancel" id="cancel-form">'
            '<button type="submit" id="cancel">Cancel event</button></form>'
        )
        return page(e["title"] or "(untitled)", body)

    async def move(request: Request) -> Response:
        event_id = int(request.path_params["id"])
        store.event_move(event_id, str((await request.form()).get("start", "")))
        return RedirectResponse(f"/calendar/{event_id}", status_code=303)

    async def cancel(request: Request) -> Response:
        event_id = int(request.path_params["id"])
        store.event_cancel(event_id)
        return RedirectResponse(f"/calendar/{event_id}", status_code=303)

    async def new_event(request: Request) -> Response:
        fields = "".join(
            f'<label for="{name}">{label}</label><input id="{name}" name="{name}" type="{kind}">'
            for name, label, kind in (
                ("title", "Title", "text"),
                ("start", "Start", "datetime-local"),
                ("end", "End", "datetime-local"),
                ("location", "Where", "text"),
                ("attendees", "Attendees (comma-separated emails)", "text"),
            )
        )
        form = f'<form method="post" action="/calendar/add" id="event-form">{fields}'
        return page("New event", form + '<button type="submit" id="save-event">Save</button></form>')

    async def add_event(request: Request) -> Response:
        form = {k: str(v) for k, v in (await request.form()).items()}
        e = store.event_add(
            form.get("title", ""),
            form.get("start", ""),
            form.get("end", ""),
            form.get("location", ""),
            form.get("attendees", ""),
        )
        return RedirectResponse(f"/calendar/{e['id']}", status_code=303)

    async def bank(request: Request) -> Response:
        rows = "".join(
            f'<tr id="account-{escape(a["name"].lower())}"><td><a href="/bank/{quote(a["name"].lower())}">'
            f'{escape(a["name"])}</a></td><td class="balance">{_money(a["balance_cents"])}</td></tr>'
            for a in store.bank_accounts()
        )
        return page(
            "Bank",
            f'<table id="accounts"><tbody>{rows}</tbody></table>'
            '<p><a id="transfer-link" href="/bank/transfer">Transfer or pay</a></p>',
        )

    async def account(request: Request) -> Response:
        name = request.path_params["name"]
        rows = "".join(
            f'<tr id="tx-{t["id"]}"><td class="posted">{escape(t["posted_at"] or "")}</td>'
            f'<td class="day">{escape((t["posted_at"] or "")[:10])}</td>'
            f'<td class="memo">{escape(t["memo"] or "")}</td><td class="amount">{_money(t["amount_cents"])}</td></tr>'
            for t in store.transactions(name)
        )
        found = next(a for a in store.bank_accounts() if a["name"].lower() == name.lower())
        body = (
            f'<p>Balance <span id="balance">{_money(found["balance_cents"])}</span></p>'
            f'<table id="transactions"><tbody>{rows}</tbody></table>'
        )
        return page(found["name"], body)

    async def transfer_form(request: Request) -> Response:
        names = [a["name"] for a in store.bank_accounts()]
        options = "".join(f'<option value="{escape(n)}">{escape(n)}</option>' for n in names)
        body = (
            '<form method="post" action="/bank/transfer" id="transfer-form">'
            f'<label for="source">From</label><select id="source" name="source">{options}</select>'
            f'<label for="target">To</label><select id="target" name="target">{options}</select>'
            '<label for="amount">Amount</label><input id="amount" name="amount" type="text">'
            '<label for="memo">Memo</label><input id="memo" name="memo" type="text">'
            '<button type="submit" id="transfer">Transfer</button></form>'
            '<form method="post" action="/bank/pay" id="pay-form">'
            f'<label for="account">From</label><select id="account" name="account">{options}</select>'
            '<label for="payee">Payee</label><input id="payee" name="payee" type="text">'
            '<label for="pay-amount">Amount</label><input id="pay-amount" name="amount" type="text">'
            '<label for="pay-memo">Memo</label><input id="pay-memo" name="memo" type="text">'
            '<button type="submit" id="pay">Pay</button></form>'
        )
        return page("Transfer or pay", body)

    async def transfer(request: Request) -> Response:
        form = {k: str(v) for k, v in (await request.form()).items()}
        done = store.transfer(
            form.get("source", ""),
            form.get("target", ""),
            parse_amount(form.get("amount", "")),
            form.get("memo", ""),
        )
        return RedirectResponse(f"/bank/{quote(done['to'].lower())}", status_code=303)

    async def pay(request: Request) -> Response:
        form = {k: str(v) for k, v in (await request.form()).items()}
        done = store.pay(
            form.get("account", ""),
            form.get("payee", ""),
            parse_amount(form.get("amount", "")),
            form.get("memo", ""),
        )
        return RedirectResponse(f"/bank/{quote(done['account'].lower())}", status_code=303)

    return [
        Route("/calendar", handled(calendar)),
        Route("/calendar/new", handled(new_event)),
        Route("/calendar/add", handled(add_event), methods=["POST"]),
        Route("/calendar/{id:int}", handled(event)),
        Route("/calendar/{id:int}/move", handled(move), methods=["POST"]),
        Route("/calendar/{id:int}/cancel", handled(cancel), methods=["POST"]),
        Route("/bank", handled(bank)),
        Route("/bank/transfer", handled(transfer_form)),
        Route("/bank/transfer", handled(transfer), methods=["POST"]),
        Route("/bank/pay", handled(pay), methods=["POST"]),
        Route("/bank/{name}", handled(account)),
    ]
