"""Diffs read a folder again only when it changed: a W0 compared by every rollout, probe and judge
view is dumped once, and any write to it afterwards -- even one right after a diff, even one that
keeps the file's size -- shows in the next diff."""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from pathlib import Path

import pytest

from envpipeline.worlds import state
from envpipeline.worlds.judge_panel import judge_probe
from envpipeline.worlds.judges import default_judges
from tests.world_fixture import make_day


def _dumps(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The folders `canonical_dump` reads from now on (the calls are recorded)."""
    read: list[Path] = []
    real = state.canonical_dump

    def recorded(day_dir: Path | str) -> dict:
        read.append(Path(day_dir))
        return real(day_dir)

    monkeypatch.setattr(state, "canonical_dump", recorded)
    return read


def _aged(day_dir: Path) -> Path:
    """`day_dir` with every file and folder dated a minute back (a W0 copied long ago)."""
    past = time.time() - 60
    for path in [day_dir, *day_dir.rglob("*")]:
        os.utime(path, (past, past))
    return day_dir


def _set_price(day_dir: Path, sku: str, cents: int) -> None:
    with sqlite3.connect(day_dir / "apps" / "shop.sqlite") as db:
        db.execute("UPDATE products SET price_cents = ? WHERE sku = ?", (cents, sku))


def _w0_and_final(tmp_path: Path, kettle_cents: int) -> tuple[Path, Path]:
    """An aged W0 and a copy of it where the kettle's price is `kettle_cents`."""
    w0 = _aged(make_day(tmp_path / "w0"))
    final = tmp_path / "final" / w0.name
    shutil.copytree(w0, final)
    _set_price(final, "SKU-KETTLE", kettle_cents)
    return w0, final


def test_an_unchanged_initial_folder_is_read_once_and_every_change_to_it_is_seen(tmp_path, monkeypatch):
    w0, final = _w0_and_final(tmp_path, 3399)
    read = _dumps(monkeypatch)
    first = state.diff(w0, final)
    assert [c["after"]["price_cents"] for c in first["shop/products"]["changed"]] == [3399]
    for _ in range(3):
        assert state.diff(w0, final) == first
    assert read.count(w0) == 1
    # the same size, straight after a diff: the next diff sees it
    _set_price(w0, "SKU-KETTLE", 3399)
    assert "shop/products" not in state.diff(w0, final)
    (w0 / "home" / "notes.txt").write_text("new\n")
    assert state.diff(w0, final)["files"]["removed"] == ["notes.txt"]
    assert read.count(w0) == 3


def test_a_recently_written_folder_is_read_each_time(tmp_path, monkeypatch):
    day = make_day(tmp_path / "day")  # written just now: its file times may not have moved yet
    other = tmp_path / "other" / day.name
    shutil.copytree(day, other)
    read = _dumps(monkeypatch)
    state.diff(day, other)
    state.diff(day, other)
    assert read.count(day) == 2


def test_a_folder_against_itself_is_not_read_and_rows_handed_out_are_copies(tmp_path, monkeypatch):
    w0, final = _w0_and_final(tmp_path, 1)
    read = _dumps(monkeypatch)
    assert state.diff(w0, w0) == {"files": {"added": [], "removed": [], "changed": []}}
    assert read == []
    changed = state.diff(w0, final)["shop/products"]["changed"][0]
    changed["before"]["price_cents"] = changed["after"]["price_cents"] = -5
    again = state.diff(w0, final)["shop/products"]["changed"][0]
    assert (again["before"]["price_cents"], again["after"]["price_cents"]) == (3299, 1)


def test_the_judge_probe_reads_each_folder_once(tmp_path, monkeypatch):
    w0, final = _w0_and_final(tmp_path, 1)
    read = _dumps(monkeypatch)
    trajectory = [
        {"role": "user", "content": "cut the kettle's price"},
        {"role": "assistant", "content": "Done."},
    ]
    report = judge_probe(default_judges(None), "Cut the kettle's price.", w0, (trajectory, final))
    assert report and all("success_claiming_failure" in entry for entry in report.values())
    assert sorted(map(str, read)) == sorted([str(w0), str(final)])
