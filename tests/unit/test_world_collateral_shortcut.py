"""`collateral` skips app databases whose bytes did not change; a change of any kind is still found.

The shortcut must not become a way around the state_preserved criterion: a value rewritten in
place (same file size), a row written through a write-ahead log that is not checkpointed yet, a
database deleted or added, all still count.
"""

from __future__ import annotations

import shutil
import sqlite3

import pytest

from envpipeline.worlds.criteria import collateral, same_bytes


@pytest.fixture
def days(tmp_path):
    initial = tmp_path / "initial"
    (initial / "apps").mkdir(parents=True)
    (initial / "home").mkdir()
    for app in ("bank", "shop"):
        with sqlite3.connect(initial / "apps" / f"{app}.sqlite") as db:
            db.execute("CREATE TABLE items (id TEXT PRIMARY KEY, name TEXT)")
            db.executemany("INSERT INTO items VALUES (?, ?)", [("a", "alpha"), ("b", "bravo")])
        db.close()
    final = tmp_path / "final"
    shutil.copytree(initial, final)
    return initial, final


def test_untouched_databases_are_not_collateral(days):
    initial, final = days
    assert same_bytes(initial / "apps" / "bank.sqlite", final / "apps" / "bank.sqlite")
    assert collateral({}, initial, final) == []


def test_a_value_rewritten_in_place_is_found(days):
    initial, final = days
    with sqlite3.connect(final / "apps" / "shop.sqlite") as db:
        db.execute("UPDATE items SET name = 'ALPHA' WHERE id = 'a'")  # same length, same file size
    db.close()
    shop = (initial / "apps" / "shop.sqlite", final / "apps" / "shop.sqlite")
    assert shop[0].stat().st_size == shop[1].stat().st_size and not same_bytes(*shop)
    assert collateral({}, initial, final) == ["shop/items: 1 row(s) changed, the task allows 0"]


def test_a_row_in_an_unmerged_write_ahead_log_is_found(days):
    initial, final = days
    db = sqlite3.connect(final / "apps" / "bank.sqlite")
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA wal_autocheckpoint=0")
        db.execute("INSERT INTO items VALUES ('c', 'charlie')")
        db.commit()
        assert (final / "apps" / "bank.sqlite-wal").exists()  # the row is only in the log
        assert collateral({}, initial, final) == ["bank/items: 1 row(s) added, the task allows 0"]
    finally:
        db.close()


def test_a_database_deleted_or_added_is_found(days):
    initial, final = days
    (final / "apps" / "bank.sqlite").unlink()
    assert collateral({}, initial, final) == ["bank/items: 2 row(s) deleted"]
    with sqlite3.connect(final / "apps" / "extra.sqlite") as db:
        db.execute("CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT)")
        db.execute("INSERT INTO notes VALUES ('n', 'new')")
    db.close()
    assert "extra/notes: 1 row(s) added, the task allows 0" in collateral({}, initial, final)
