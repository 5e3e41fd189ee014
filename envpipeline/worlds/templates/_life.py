"""Helpers of the templates over the persona's history (calendar, flights, bank, accounts).

`history_rows` lists a table's rows with the day whose operations wrote them (via
`task_meta`), so a template can prefer records of earlier days (the trip booked on day 2);
`phrase` draws one of many phrasings with a seeded opener, so instructions rarely repeat.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from envpipeline.worlds.schema import day_end
from envpipeline.worlds.task_builder import Context
from envpipeline.worlds.task_meta import _origin_days

OPENERS = (
    "",
    "Quick one: ",
    "When you have a moment: ",
    "Could you sort this out? ",
    "Small favour: ",
    "Before the day ends: ",
    "Heads-up: ",
    "For today: ",
    "Hi! ",
)
CLOSERS = ("", " Thanks!", " Thank you.", " Cheers.", " Much appreciated.")


def history_rows(ctx: Context, app: str, table: str, where: str = "1", params: tuple = ()) -> list[dict]:
    """Rows of app/table matching the SQL `where`, each with ``_day``: the first day that wrote it (0: day 00)."""
    history = ctx.reader.history()
    rows = ctx.reader.query(app, f'SELECT * FROM "{table}" WHERE {where} ORDER BY id', list(params))
    out = []
    for row in rows:
        days = _origin_days(f"{app}/{table}", row, history)
        out.append({**row, "_day": min(days) if days else 0})
    return out


def prefer_history(ctx: Context, rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """A row written on a day after day 00 when there is one, else any row (None when empty)."""
    later = [r for r in rows if r["_day"] > 0]
    pool = later or rows
    return ctx.rng.choice(pool) if pool else None


def phrase(ctx: Context, variants: list[str], **values: Any) -> str:
    """One of `variants` (format strings over `values`), dressed with a seeded opener and closer."""
    return dress(ctx, ctx.rng.choice(variants).format(**values))


def dress(ctx: Context, text: str) -> str:
    """`text` with a seeded opener and closer (the request itself is unchanged)."""
    return ctx.rng.choice(OPENERS) + text + ctx.rng.choice(CLOSERS)


def shift(iso: str, days: int = 0, minutes: int = 0) -> str:
    """`iso` moved by `days` and `minutes`."""
    moved = datetime.fromisoformat(iso) + timedelta(days=days, minutes=minutes)
    return moved.isoformat(timespec="seconds")


def said(iso: str) -> str:
    """How texts write a date-time: ``2026-03-09 at 14:30`` (the date and the time as values of their own)."""
    return f"{iso[:10]} at {iso[11:16]}"


def minutes_between(start: str, end: str) -> int:
    """Whole minutes from `start` to `end`."""
    return int((datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds() // 60)


def upcoming_after(ctx: Context) -> str:
    """The last second of the task's day: records after it are still ahead."""
    return day_end(ctx.day)


def day_word(day: int) -> str:
    """How an instruction names a history day ('on day 2', 'when the world began')."""
    return f"on day {day}" if day else "at the start"


def human_date(iso: str) -> str:
    """``2026-03-09`` as ``Mon 9 Mar``."""
    moment = datetime.fromisoformat(iso[:10])
    return f"{moment:%a} {moment.day} {moment:%b}"
