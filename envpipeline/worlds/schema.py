"""The exact SQLite schemas of the world apps, frozen time, password hashing and empty worlds.

What a persona's day 00 holds (the "genesis" operations applied to `create_empty_world`) lives in
`envpipeline.worlds.genesis`.
"""

from __future__ import annotations

import hashlib
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path

# the calendar lives in the stdlib store, which Harbor exports ship as-is
from envpipeline.worlds.worldstore import BASE_DATE as BASE_DATE
from envpipeline.worlds.worldstore import day_date as day_date

FIXED_SALT = "envpipeline-wildawm-salt"
APPS: tuple[str, ...] = ("shop", "mail", "chat", "dm", "calendar", "flights", "bank", "accounts")
FILES_APP = "files"
ALL_APPS: tuple[str, ...] = (*APPS, FILES_APP)

#: The exact CREATE TABLE statements of every app (world spec).
CREATE_TABLES: dict[str, list[str]] = {
    "shop": [
        "CREATE TABLE products (id INTEGER PRIMARY KEY, sku TEXT UNIQUE, name TEXT, category TEXT, "
        "price_cents INT, stock INT, description TEXT, image_alt TEXT)",
        "CREATE TABLE cart_items (id INTEGER PRIMARY KEY, product_id INT, quantity INT, added_at TEXT)",
        "CREATE TABLE orders (id INTEGER PRIMARY KEY, order_number TEXT UNIQUE, status TEXT, "
        "total_cents INT, placed_at TEXT, items_json TEXT)",
    ],
    "mail": [
        "CREATE TABLE messages (id INTEGER PRIMARY KEY, folder TEXT, sender TEXT, recipients TEXT, "
        "subject TEXT, body TEXT, sent_at TEXT, is_read INT)",
    ],
    "chat": [
        "CREATE TABLE channels (id INTEGER PRIMARY KEY, name TEXT UNIQUE, topic TEXT)",
        "CREATE TABLE messages (id INTEGER PRIMARY KEY, channel_id INT, author TEXT, body TEXT, posted_at TEXT)",
    ],
    "dm": [
        "CREATE TABLE messages (id INTEGER PRIMARY KEY, peer TEXT, direction TEXT, body TEXT, sent_at TEXT)",
    ],
    "calendar": [
        "CREATE TABLE events (id INTEGER PRIMARY KEY, title TEXT, start TEXT, end TEXT, location TEXT, "
        "attendees_json TEXT)",
    ],
    "flights": [
        "CREATE TABLE bookings (id INTEGER PRIMARY KEY, confirmation TEXT UNIQUE, origin TEXT, "
        "destination TEXT, depart_at TEXT, passenger TEXT, status TEXT)",
    ],
    "bank": [
        "CREATE TABLE accounts (id INTEGER PRIMARY KEY, name TEXT, balance_cents INT)",
        "CREATE TABLE transactions (id INTEGER PRIMARY KEY, account_id INT, amount_cents INT, memo TEXT, "
        "posted_at TEXT)",
    ],
    "accounts": [
        "CREATE TABLE users (id INTEGER PRIMARY KEY, username TEXT UNIQUE, password_hash TEXT)",
    ],
}

#: app -> table -> columns (without id), in schema order.
SCHEMA: dict[str, dict[str, list[str]]] = {
    "shop": {
        "products": ["sku", "name", "category", "price_cents", "stock", "description", "image_alt"],
        "cart_items": ["product_id", "quantity", "added_at"],
        "orders": ["order_number", "status", "total_cents", "placed_at", "items_json"],
    },
    "mail": {"messages": ["folder", "sender", "recipients", "subject", "body", "sent_at", "is_read"]},
    "chat": {"channels": ["name", "topic"], "messages": ["channel_id", "author", "body", "posted_at"]},
    "dm": {"messages": ["peer", "direction", "body", "sent_at"]},
    "calendar": {"events": ["title", "start", "end", "location", "attendees_json"]},
    "flights": {"bookings": ["confirmation", "origin", "destination", "depart_at", "passenger", "status"]},
    "bank": {
        "accounts": ["name", "balance_cents"],
        "transactions": ["account_id", "amount_cents", "memo", "posted_at"],
    },
    "accounts": {"users": ["username", "password_hash"]},
}

#: Columns recording when something happened (must not lie after the day they were written).
RECORD_TIME_COLUMNS: dict[tuple[str, str], str] = {
    ("shop", "cart_items"): "added_at",
    ("shop", "orders"): "placed_at",
    ("mail", "messages"): "sent_at",
    ("chat", "messages"): "posted_at",
    ("dm", "messages"): "sent_at",
    ("bank", "transactions"): "posted_at",
}

#: Columns with a UNIQUE constraint.
UNIQUE_COLUMNS: dict[tuple[str, str], str] = {
    ("shop", "products"): "sku",
    ("shop", "orders"): "order_number",
    ("chat", "channels"): "name",
    ("flights", "bookings"): "confirmation",
    ("accounts", "users"): "username",
}


def password_hash(password: str) -> str:
    """sha256(FIXED_SALT + password), hex."""
    return hashlib.sha256((FIXED_SALT + password).encode()).hexdigest()


def stamp(day: int, slot: int = 0, minute: int = 0) -> str:
    """Frozen time of activity `slot` of `day`: 08:00 + 150 min per slot + `minute`."""
    start = datetime.combine(day_date(day), datetime.min.time()) + timedelta(hours=8)
    return (start + timedelta(minutes=150 * slot + minute)).isoformat(timespec="seconds")


def day_end(day: int) -> str:
    """The last second of `day` (record timestamps must not lie after it)."""
    return f"{day_date(day).isoformat()}T23:59:59"


def create_empty_world(day_dir: Path) -> None:
    """Create home/ and one empty SQLite database per app under `day_dir`."""
    (day_dir / "home").mkdir(parents=True, exist_ok=True)
    apps_dir = day_dir / "apps"
    apps_dir.mkdir(parents=True, exist_ok=True)
    for app, statements in CREATE_TABLES.items():
        conn = sqlite3.connect(apps_dir / f"{app}.sqlite")
        try:
            for statement in statements:
                conn.execute(statement)
            conn.commit()
        finally:
            conn.close()
