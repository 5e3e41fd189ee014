"""The app databases of one world day: the reads and writes the web app, the MCP server and worldtool share.

Standard library only, so this very file is also copied byte for byte into every exported Harbor
world task (``/app/worldstore.py`` beside ``worldtool.py``); a test keeps it that way. It also
holds the world calendar (`BASE_DATE`, `day_date`) that the day's frozen clock needs.

Every operation opens its own SQLite connection (``mode=rw``: a missing database is an error,
never silently created), so the web app's threads and the MCP server can act on the same day
folder at once. New ids are ``MAX(id)+1`` and new timestamps come from the day's frozen clock
(`day_clock`), as the world spec asks. Bad input raises `WorldInputError` with an HTTP-like status
(400 invalid, 404 unknown, 409 conflict); the web app turns it into an error page and the MCP
server into a tool error.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date, timedelta
from pathlib import Path
from typing import Any

#: Day 0 of every world: day d is BASE_DATE + d days.
BASE_DATE = date(2026, 3, 2)
#: Time of day written by actions taken through the interfaces.
ACTION_TIME = "17:00:00"
#: Digits of the order number: ORD-00042.
ORDER_DIGITS = 5
MAIL_FOLDERS = ("inbox", "sent", "archive")


class WorldInputError(Exception):
    """A request the world cannot satisfy; `status` is 400, 404 or 409."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def order_number(sequence: int) -> str:
    """The one order-number format of every order, placed by a skill or the storefront: ORD-00042."""
    return f"ORD-{sequence:0{ORDER_DIGITS}d}"


def order_item(product: dict[str, Any], quantity: int) -> dict[str, Any]:
    """The one shape of an order line in ``orders.items_json`` (skills and the storefront alike)."""
    return {
        "product_id": product["id"],
        "sku": product["sku"],
        "name": product["name"],
        "quantity": quantity,
        "price_cents": product["price_cents"],
    }


def day_date(day: int) -> date:
    """The calendar date of world day `day`."""
    return BASE_DATE + timedelta(days=day)


def day_number(day_dir: Path) -> int:
    """The day of a day folder: manifest.json's "day", else the ``day-<dd>`` name, else 0."""
    manifest = day_dir / "manifest.json"
    if manifest.is_file():
        try:
            return int(json.loads(manifest.read_text())["day"])
        except (ValueError, KeyError, TypeError):
            pass
    match = re.fullmatch(r"day-(\d+)", day_dir.name)
    return int(match.group(1)) if match else 0


def day_clock(day_dir: Path) -> Callable[[], str]:
    """A frozen clock: every action on day d is stamped with the day's date at ACTION_TIME."""
    stamp = f"{day_date(day_number(day_dir)).isoformat()}T{ACTION_TIME}"
    return lambda: stamp


def _rows(cursor: sqlite3.Cursor) -> list[dict[str, Any]]:
    return [dict(row) for row in cursor.fetchall()]


def _next_id(db: sqlite3.Connection, table: str) -> int:
    return int(db.execute(f"SELECT COALESCE(MAX(id), 0) + 1 FROM {table}").fetchone()[0])


def _text(value: str, field: str, limit: int = 20_000) -> str:
    value = (value or "").strip()
    if not value:
        raise WorldInputError(f"{field} must not be empty")
    if len(value) > limit:
        raise WorldInputError(f"{field} is longer than {limit} characters")
    return value


class WorldStore:
    """The app databases of one day folder (``apps/<app>.sqlite``)."""

    def __init__(self, day_dir: str | Path, clock: Callable[[], str] | None = None) -> None:
        self.day_dir = Path(day_dir).resolve()
        if not (self.day_dir / "apps").is_dir():
            raise FileNotFoundError(f"{self.day_dir}: not a world day folder (no apps/)")
        self.clock = clock or day_clock(self.day_dir)
        self._address: str | None = None
        self._author: str | None = None

    def rebind(self, day_dir: str | Path, clock: Callable[[], str] | None = None) -> None:
        """Act on another day folder from now on (the servers built over this store follow it)."""
        WorldStore.__init__(self, day_dir, clock)

    # -- plumbing -------------------------------------------------------------------------------
    @contextmanager
    def db(self, app: str) -> Iterator[sqlite3.Connection]:
        """A connection to ``apps/<app>.sqlite`` that commits on success and always closes."""
        path = self.day_dir / "apps" / f"{app}.sqlite"
        if not path.is_file():
            raise WorldInputError(f"this world has no {app} app ({path.name} is missing)", 404)
        db = sqlite3.connect(f"file:{path}?mode=rw", uri=True, timeout=10, isolation_level=None)
        db.row_factory = sqlite3.Row
        try:
            db.execute("BEGIN IMMEDIATE")
            yield db
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        finally:
            db.close()

    @property
    def persona_id(self) -> str:
        """manifest.json's persona_id, else the persona folder's name."""
        manifest = self.day_dir / "manifest.json"
        if manifest.is_file():
            try:
                return str(json.loads(manifest.read_text())["persona_id"])
            except (ValueError, KeyError, TypeError):
                pass
        return self.day_dir.parent.name

    @property
    def author(self) -> str:
        """The persona's chat name: its login (first user of accounts.sqlite), else the persona id."""
        if self._author is None:
            author = self.persona_id
            if (self.day_dir / "apps" / "accounts.sqlite").is_file():
                with self.db("accounts") as db:
                    row = db.execute("SELECT username FROM users ORDER BY id LIMIT 1").fetchone()
                if row and row[0]:
                    author = str(row[0])
            self._author = author
        return self._author

    @property
    def address(self) -> str:
        """The persona's mail address: the usual sender of 'sent' mail, else the usual inbox recipient."""
        if self._address is None:
            with self.db("mail") as db:
                sent = [r[0] for r in db.execute("SELECT sender FROM messages WHERE folder = 'sent'")]
                got = [r[0] for r in db.execute("SELECT recipients FROM messages WHERE folder != 'sent'")]
            senders = Counter(s.strip() for s in sent if s and s.strip())
            recipients = Counter(a.strip() for r in got if r for a in r.split(",") if a.strip())
            best = senders or recipients
            address = str(best.most_common(1)[0][0]) if best else f"{self.persona_id}@mail.local"
            self._address = address
        return self._address

    # -- shop -----------------------------------------------------------------------------------
    def categories(self) -> list[str]:
        with self.db("shop") as db:
            return [r[0] for r in db.execute("SELECT DISTINCT category FROM products ORDER BY category")]

    def products(self, query: str = "", category: str = "") -> list[dict[str, Any]]:
        sql, params = "SELECT * FROM products WHERE 1=1", []
        if query.strip():
            sql += " AND (name LIKE ? OR description LIKE ? OR sku LIKE ?)"
            params += [f"%{query.strip()}%"] * 3
        if category:
            sql += " AND category = ?"
            params.append(category)
        with self.db("shop") as db:
            return _rows(db.execute(sql + " ORDER BY category, name, id", params))

    def product(self, sku: str) -> dict[str, Any]:
        with self.db("shop") as db:
            row = db.execute("SELECT * FROM products WHERE sku = ?", (sku,)).fetchone()
        if row is None:
            raise WorldInputError(f"no product with sku {sku!r}", 404)
        return dict(row)

    def cart(self) -> list[dict[str, Any]]:
        """Cart lines with their product (sku, name, price, stock) and line total."""
        with self.db("shop") as db:
            return _rows(
                db.execute(
                    "SELECT c.id, c.product_id, c.quantity, c.added_at, p.sku, p.name, p.price_cents,"
                    " p.stock, c.quantity * p.price_cents AS line_cents"
                    " FROM cart_items c JOIN products p ON p.id = c.product_id ORDER BY c.id"
                )
            )

    def add_to_cart(self, sku: str, quantity: int = 1) -> dict[str, Any]:
        """Add `quantity` of a product (merged with its existing line); 409 beyond the stock."""
        if quantity < 1:
            raise WorldInputError("quantity must be at least 1")
        with self.db("shop") as db:
            product = db.execute("SELECT * FROM products WHERE sku = ?", (sku,)).fetchone()
            if product is None:
                raise WorldInputError(f"no product with sku {sku!r}", 404)
            line = db.execute("SELECT * FROM cart_items WHERE product_id = ?", (product["id"],)).fetchone()
            wanted = quantity + (line["quantity"] if line else 0)
            if wanted > product["stock"]:
                raise WorldInputError(
                    f"{product['name']} ({sku}) is out of stock: {product['stock']} left, {wanted} wanted",
                    409,
                )
            if line:
                db.execute("UPDATE cart_items SET quantity = ? WHERE id = ?", (wanted, line["id"]))
            else:
                db.execute(
                    "INSERT INTO cart_items (id, product_id, quantity, added_at) VALUES (?, ?, ?, ?)",
                    (_next_id(db, "cart_items"), product["id"], quantity, self.clock()),
                )
        return {"sku": sku, "quantity": wanted}

    def remove_from_cart(self, sku: str) -> None:
        with self.db("shop") as db:
            gone = db.execute(
                "DELETE FROM cart_items WHERE product_id IN (SELECT id FROM products WHERE sku = ?)", (sku,)
            ).rowcount
        if not gone:
            raise WorldInputError(f"{sku!r} is not in the cart", 404)

    def checkout(self) -> dict[str, Any]:
        """Turn the cart into a 'placed' order, decrement stock and empty the cart (all or nothing)."""
        with self.db("shop") as db:
            lines = _rows(
                db.execute(
                    "SELECT c.quantity, p.id AS product_id, p.sku, p.name, p.price_cents, p.stock"
                    " FROM cart_items c JOIN products p ON p.id = c.product_id ORDER BY c.id"
                )
            )
            if not lines:
                raise WorldInputError("the cart is empty", 409)
            short = [
                f"{x['name']} ({x['sku']}): {x['stock']} left" for x in lines if x["quantity"] > x["stock"]
            ]
            if short:
                raise WorldInputError("out of stock: " + "; ".join(short), 409)
            order_id = _next_id(db, "orders")
            items = [order_item({**x, "id": x["product_id"]}, x["quantity"]) for x in lines]
            number, sequence = order_number(order_id), order_id
            while db.execute("SELECT 1 FROM orders WHERE order_number = ?", (number,)).fetchone():
                sequence += 1  # a skill's order may hold the id-based number already
                number = order_number(sequence)
            order = {
                "id": order_id,
                "order_number": number,
                "status": "placed",
                "total_cents": sum(x["quantity"] * x["price_cents"] for x in lines),
                "placed_at": self.clock(),
                "items_json": json.dumps(items, sort_keys=True),
            }
            db.execute(
                "INSERT INTO orders (id, order_number, status, total_cents, placed_at, items_json)"
                " VALUES (:id, :order_number, :status, :total_cents, :placed_at, :items_json)",
                order,
            )
            for x in lines:
                db.execute(
                    "UPDATE products SET stock = stock - ? WHERE id = ?", (x["quantity"], x["product_id"])
                )
            db.execute("DELETE FROM cart_items")
        return order

    def orders(self) -> list[dict[str, Any]]:
        with self.db("shop") as db:
            return _rows(db.execute("SELECT * FROM orders ORDER BY id DESC"))

    def order(self, order_number: str) -> dict[str, Any]:
        with self.db("shop") as db:
            row = db.execute("SELECT * FROM orders WHERE order_number = ?", (order_number,)).fetchone()
        if row is None:
            raise WorldInputError(f"no order {order_number!r}", 404)
        return dict(row)

    # -- mail -----------------------------------------------------------------------------------
    def mail_list(self, folder: str = "inbox") -> list[dict[str, Any]]:
        if folder not in MAIL_FOLDERS:
            raise WorldInputError(f"unknown folder {folder!r}; choose one of {', '.join(MAIL_FOLDERS)}")
        with self.db("mail") as db:
            return _rows(
                db.execute(
                    "SELECT id, folder, sender, recipients, subject, sent_at, is_read FROM messages"
                    " WHERE folder = ? ORDER BY sent_at DESC, id DESC",
                    (folder,),
                )
            )

    def mail_read(self, message_id: int, mark_read: bool = True) -> dict[str, Any]:
        with self.db("mail") as db:
            row = db.execute("SELECT * FROM messages WHERE id = ?", (message_id,)).fetchone()
            if row is None:
                raise WorldInputError(f"no message with id {message_id}", 404)
            if mark_read and not row["is_read"]:
                db.execute("UPDATE messages SET is_read = 1 WHERE id = ?", (message_id,))
        return {**dict(row), "is_read": 1 if mark_read else row["is_read"]}

    def mail_send(self, to: str, subject: str, body: str) -> dict[str, Any]:
        recipients = [a.strip() for a in (to or "").replace(";", ",").split(",") if a.strip()]
        if not recipients:
            raise WorldInputError("to must name at least one recipient")
        bad = [a for a in recipients if not re.fullmatch(r"[^@\s,]+@[^@\s,]+", a)]
        if bad:
            raise WorldInputError(f"not an email address: {', '.join(bad)}")
        row = {
            "folder": "sent",
            "sender": self.address,
            "recipients": ", ".join(recipients),
            "subject": _text(subject, "subject", 500),
            "body": _text(body, "body"),
            "sent_at": self.clock(),
            "is_read": 1,
        }
        with self.db("mail") as db:
            row["id"] = _next_id(db, "messages")
            db.execute(
                "INSERT INTO messages (id, folder, sender, recipients, subject, body, sent_at, is_read)"
                " VALUES (:id, :folder, :sender, :recipients, :subject, :body, :sent_at, :is_read)",
                row,
            )
        return row

    def mail_archive(self, message_id: int) -> None:
        with self.db("mail") as db:
            if not db.execute("UPDATE messages SET folder = 'archive' WHERE id = ?", (message_id,)).rowcount:
                raise WorldInputError(f"no message with id {message_id}", 404)

    # -- chat -----------------------------------------------------------------------------------
    def channels(self) -> list[dict[str, Any]]:
        with self.db("chat") as db:
            return _rows(
                db.execute(
                    "SELECT c.name, c.topic, COUNT(m.id) AS messages FROM channels c"
                    " LEFT JOIN messages m ON m.channel_id = c.id GROUP BY c.id ORDER BY c.name"
                )
            )

    def _channel_id(self, db: sqlite3.Connection, channel: str) -> int:
        name = channel.strip().lstrip("#")
        row = db.execute("SELECT id FROM channels WHERE name = ?", (name,)).fetchone()
        if row is None:
            known = ", ".join(r[0] for r in db.execute("SELECT name FROM channels ORDER BY name"))
            raise WorldInputError(f"unknown channel {channel!r}; channels: {known or 'none'}", 404)
        return int(row[0])

    def channel_messages(self, channel: str, limit: int = 20) -> list[dict[str, Any]]:
        """The last `limit` messages of a channel, oldest first."""
        if limit < 1:
            raise WorldInputError("limit must be at least 1")
        with self.db("chat") as db:
            channel_id = self._channel_id(db, channel)
            rows = _rows(
                db.execute(
                    "SELECT id, author, body, posted_at FROM messages WHERE channel_id = ?"
                    " ORDER BY posted_at DESC, id DESC LIMIT ?",
                    (channel_id, limit),
                )
            )
        return rows[::-1]

    def chat_post(self, channel: str, body: str) -> dict[str, Any]:
        with self.db("chat") as db:
            row = {
                "channel_id": self._channel_id(db, channel),
                "author": self.author,
                "body": _text(body, "body"),
                "posted_at": self.clock(),
            }
            row["id"] = _next_id(db, "messages")
            db.execute(
                "INSERT INTO messages (id, channel_id, author, body, posted_at)"
                " VALUES (:id, :channel_id, :author, :body, :posted_at)",
                row,
            )
        return {**row, "channel": channel.strip().lstrip("#")}

    # -- direct messages ------------------------------------------------------------------------
    def dm_threads(self) -> list[dict[str, Any]]:
        with self.db("dm") as db:
            return _rows(
                db.execute(
                    "SELECT peer, COUNT(*) AS messages, MAX(sent_at) AS last_at FROM messages"
                    " GROUP BY peer ORDER BY last_at DESC, peer"
                )
            )

    def dm_read(self, peer: str) -> list[dict[str, Any]]:
        with self.db("dm") as db:
            rows = _rows(
                db.execute(
                    "SELECT id, peer, direction, body, sent_at FROM messages WHERE peer = ?"
                    " ORDER BY sent_at, id",
                    (peer.strip(),),
                )
            )
            if not rows:
                known = ", ".join(
                    r[0] for r in db.execute("SELECT DISTINCT peer FROM messages ORDER BY peer")
                )
                raise WorldInputError(f"no conversation with {peer!r}; peers: {known or 'none'}", 404)
        return rows

    def dm_send(self, peer: str, body: str) -> dict[str, Any]:
        row: dict[str, Any] = {
            "peer": _text(peer, "peer", 200),
            "direction": "out",
            "body": _text(body, "body"),
            "sent_at": self.clock(),
        }
        with self.db("dm") as db:
            row["id"] = _next_id(db, "messages")
            db.execute(
                "INSERT INTO messages (id, peer, direction, body, sent_at)"
                " VALUES (:id, :peer, :direction, :body, :sent_at)",
                row,
            )
        return row
