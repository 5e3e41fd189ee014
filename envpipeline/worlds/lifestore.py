"""The calendar, flights, bank and accounts apps of a world day: the reads and writes their interfaces share.

`LifeStore` extends `WorldStore` (shop, mail, chat, direct messages) with the four apps whose
rows the world's skills write every day (meetings, bookings, salary, transfers, password changes)
so that the web app (calendar and bank pages) and the MCP server (flights and accounts tools) act
on the same state. Standard library only, like `worldstore`, and shipped beside it (byte for byte) in
exported Harbor world tasks, where it imports the ``worldstore.py`` next to it. Bad input raises `WorldInputError`
(400 invalid, 404 unknown, 409 conflict); money is in cents, times are ISO ``YYYY-MM-DDTHH:MM:SS``.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING or __package__:  # inside envpipeline; a Harbor image has worldstore.py beside this file
    from envpipeline.worlds.worldstore import WorldInputError, WorldStore, _next_id, _rows, _text
else:
    from worldstore import WorldInputError, WorldStore, _next_id, _rows, _text

#: The accounts app's fixed salt (same as `envpipeline.worlds.schema.FIXED_SALT`).
FIXED_SALT = "envpipeline-wildawm-salt"
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?")
#: The title prefix a cancelled calendar event carries.
CANCELLED = "Cancelled: "


def _when(value: str, field: str) -> str:
    """An ISO date-time (``YYYY-MM-DDTHH:MM[:SS]``, a space allowed for the T), seconds added."""
    value = (value or "").strip().replace(" ", "T")
    if not _ISO.fullmatch(value):
        raise WorldInputError(f"{field} must be a date-time like 2026-03-09T14:30, not {value!r}")
    return value if len(value) == 19 else value + ":00"


def _shift(start: str, end: str, new_start: str) -> str:
    """The end of an event moved from `start` to `new_start`, keeping its length."""
    from datetime import datetime

    try:
        length = datetime.fromisoformat(end) - datetime.fromisoformat(start)
    except ValueError:
        return new_start
    return (datetime.fromisoformat(new_start) + length).isoformat(timespec="seconds")


def with_day_and_time(row: dict[str, Any], column: str) -> dict[str, Any]:
    """`row` plus ``<column>_date`` and ``<column>_time``: the date and clock time as values of their own."""
    value = str(row.get(column) or "")
    return {**row, f"{column}_date": value[:10], f"{column}_time": value[11:16]}


class LifeStore(WorldStore):
    """`WorldStore` plus calendar events, flight bookings, bank accounts and login accounts."""

    # -- calendar -------------------------------------------------------------------------------
    def events(self) -> list[dict[str, Any]]:
        """Every calendar event, by start time."""
        with self.db("calendar") as db:
            return _rows(db.execute("SELECT * FROM events ORDER BY start, id"))

    def event(self, event_id: int) -> dict[str, Any]:
        """One calendar event (404 when unknown)."""
        with self.db("calendar") as db:
            row = db.execute("SELECT * FROM events WHERE id = ?", (event_id,)).fetchone()
        if row is None:
            raise WorldInputError(f"no calendar event with id {event_id}", 404)
        return dict(row)

    def event_add(
        self, title: str, start: str, end: str, location: str = "", attendees: str = ""
    ) -> dict[str, Any]:
        """A new calendar event; `attendees` is a comma-separated list of addresses."""
        start, end = _when(start, "start"), _when(end or start, "end")
        if end < start:
            raise WorldInputError("end must not be before start")
        people = [a.strip() for a in (attendees or "").split(",") if a.strip()]
        row: dict[str, Any] = {
            "title": _text(title, "title", 300),
            "start": start,
            "end": end,
            "location": (location or "").strip(),
            "attendees_json": json.dumps(people),
        }
        with self.db("calendar") as db:
            row["id"] = _next_id(db, "events")
            db.execute(
                "INSERT INTO events (id, title, start, end, location, attendees_json)"
                " VALUES (:id, :title, :start, :end, :location, :attendees_json)",
                row,
            )
        return row

    def event_move(self, event_id: int, start: str) -> dict[str, Any]:
        """Move an event to `start`, keeping its length."""
        event, start = self.event(event_id), _when(start, "start")
        end = _shift(event["start"], event["end"], start)
        with self.db("calendar") as db:
            db.execute("UPDATE events SET start = ?, end = ? WHERE id = ?", (start, end, event_id))
        return {**event, "start": start, "end": end}

    def event_cancel(self, event_id: int) -> dict[str, Any]:
        """Mark an event cancelled (its title gains the ``Cancelled: `` prefix); 409 when it already is."""
        event = self.event(event_id)
        if str(event["title"]).startswith(CANCELLED):
            raise WorldInputError(f"event {event_id} is already cancelled", 409)
        title = CANCELLED + str(event["title"])
        with self.db("calendar") as db:
            db.execute("UPDATE events SET title = ? WHERE id = ?", (title, event_id))
        return {**event, "title": title}

    # -- flights --------------------------------------------------------------------------------
    def bookings(self) -> list[dict[str, Any]]:
        """Every flight booking, by departure."""
        with self.db("flights") as db:
            rows = _rows(db.execute("SELECT * FROM bookings ORDER BY depart_at, id"))
        return [with_day_and_time(r, "depart_at") for r in rows]

    def booking(self, confirmation: str) -> dict[str, Any]:
        """One booking by confirmation code (404 when unknown)."""
        with self.db("flights") as db:
            row = db.execute(
                "SELECT * FROM bookings WHERE confirmation = ?", ((confirmation or "").strip(),)
            ).fetchone()
        if row is None:
            raise WorldInputError(f"no booking with confirmation {confirmation!r}", 404)
        return with_day_and_time(dict(row), "depart_at")

    def booking_change(self, confirmation: str, depart_at: str) -> dict[str, Any]:
        """Move a confirmed booking to another departure (409 when it is cancelled)."""
        booking, depart_at = self.booking(confirmation), _when(depart_at, "depart_at")
        if booking["status"] != "confirmed":
            raise WorldInputError(f"booking {confirmation} is {booking['status']}, not confirmed", 409)
        with self.db("flights") as db:
            db.execute("UPDATE bookings SET depart_at = ? WHERE id = ?", (depart_at, booking["id"]))
        return {**booking, "depart_at": depart_at}

    def booking_cancel(self, confirmation: str) -> dict[str, Any]:
        """Cancel a confirmed booking (409 when it is not confirmed)."""
        booking = self.booking(confirmation)
        if booking["status"] != "confirmed":
            raise WorldInputError(f"booking {confirmation} is {booking['status']}, not confirmed", 409)
        with self.db("flights") as db:
            db.execute("UPDATE bookings SET status = 'cancelled' WHERE id = ?", (booking["id"],))
        return {**booking, "status": "cancelled"}

    def booking_new(self, origin: str, destination: str, depart_at: str, passenger: str) -> dict[str, Any]:
        """A new confirmed booking; its confirmation code derives from the booking's id."""
        row: dict[str, Any] = {
            "origin": _text(origin, "origin", 100),
            "destination": _text(destination, "destination", 100),
            "depart_at": _when(depart_at, "depart_at"),
            "passenger": _text(passenger, "passenger", 200),
            "status": "confirmed",
        }
        with self.db("flights") as db:
            row["id"] = _next_id(db, "bookings")
            row["confirmation"] = f"NEW{row['id']:03d}"
            db.execute(
                "INSERT INTO bookings (id, confirmation, origin, destination, depart_at, passenger, status)"
                " VALUES (:id, :confirmation, :origin, :destination, :depart_at, :passenger, :status)",
                row,
            )
        return row

    # -- bank -----------------------------------------------------------------------------------
    def bank_accounts(self) -> list[dict[str, Any]]:
        """Every bank account with its balance."""
        with self.db("bank") as db:
            return _rows(db.execute("SELECT * FROM accounts ORDER BY id"))

    def _account(self, name: str) -> dict[str, Any]:
        for account in self.bank_accounts():
            if account["name"].lower() == (name or "").strip().lower():
                return account
        raise WorldInputError(f"no bank account {name!r}", 404)

    def transactions(self, account: str) -> list[dict[str, Any]]:
        """One account's transactions, newest first."""
        found = self._account(account)
        with self.db("bank") as db:
            return _rows(
                db.execute(
                    "SELECT * FROM transactions WHERE account_id = ? ORDER BY posted_at DESC, id DESC",
                    (found["id"],),
                )
            )

    def _post(self, db: Any, account_id: int, amount: int, memo: str) -> None:
        row = {"account_id": account_id, "amount_cents": amount, "memo": memo, "posted_at": self.clock()}
        row["id"] = _next_id(db, "transactions")
        db.execute(
            "INSERT INTO transactions (id, account_id, amount_cents, memo, posted_at)"
            " VALUES (:id, :account_id, :amount_cents, :memo, :posted_at)",
            row,
        )
        db.execute("UPDATE accounts SET balance_cents = balance_cents + ? WHERE id = ?", (amount, account_id))

    def transfer(self, source: str, target: str, amount_cents: int, memo: str = "") -> dict[str, Any]:
        """Move money between two own accounts (two transactions; 409 beyond the balance)."""
        a, b = self._account(source), self._account(target)
        if a["id"] == b["id"]:
            raise WorldInputError("a transfer needs two different accounts")
        if amount_cents <= 0:
            raise WorldInputError("the amount must be positive")
        if amount_cents > a["balance_cents"]:
            raise WorldInputError(f"{a['name']} holds only {a['balance_cents']} cents", 409)
        note = (memo or "").strip()
        with self.db("bank") as db:
            self._post(db, a["id"], -amount_cents, f"Transfer to {b['name'].lower()} {note}".strip())
            self._post(db, b["id"], amount_cents, f"Transfer from {a['name'].lower()} {note}".strip())
        return {"from": a["name"], "to": b["name"], "amount_cents": amount_cents, "memo": note}

    def pay(self, account: str, payee: str, amount_cents: int, memo: str = "") -> dict[str, Any]:
        """A payment to someone else out of `account` (409 beyond the balance)."""
        a = self._account(account)
        if amount_cents <= 0:
            raise WorldInputError("the amount must be positive")
        if amount_cents > a["balance_cents"]:
            raise WorldInputError(f"{a['name']} holds only {a['balance_cents']} cents", 409)
        text = f"Payment to {_text(payee, 'payee', 200)}" + (
            f" {memo.strip()}" if (memo or "").strip() else ""
        )
        with self.db("bank") as db:
            self._post(db, a["id"], -amount_cents, text)
        return {"account": a["name"], "payee": payee, "amount_cents": amount_cents, "memo": text}

    # -- accounts -------------------------------------------------------------------------------
    def logins(self) -> list[dict[str, Any]]:
        """The login accounts (usernames only, never hashes)."""
        with self.db("accounts") as db:
            return _rows(db.execute("SELECT id, username FROM users ORDER BY id"))

    def set_password(self, username: str, new_password: str) -> dict[str, Any]:
        """Set a login's password (stored as sha256(salt + password)); 404 for an unknown username."""
        password = _text(new_password, "new_password", 200)
        if len(password) < 8:
            raise WorldInputError("new_password must have at least 8 characters")
        digest = hashlib.sha256((FIXED_SALT + password).encode()).hexdigest()
        with self.db("accounts") as db:
            done = db.execute(
                "UPDATE users SET password_hash = ? WHERE username = ?", (digest, (username or "").strip())
            ).rowcount
        if not done:
            raise WorldInputError(f"no login {username!r}", 404)
        return {"username": username, "changed": True}
