"""What a task needs, derived from its reference solution and criteria: interfaces and history days.

- ``interfaces_needed``: the interfaces the reference solution's steps act through (sorted);
- ``depends_on_days``: the world days whose events wrote the records the solution reads or the
  criteria change. Each record a step or criterion points at (a booking by its match, a mail by
  its subject, a file by its path, a changed row by its ``where``) is looked up in the day's
  state, then in the history (``delta.json`` of days 1..d): the days whose operations inserted or
  updated it. A record of day 00 that no later day touched counts as day 0; a record that only
  the task's own setup seeds (a trigger) is not history and adds no day.
"""

from __future__ import annotations

import re
from typing import Any

from envpipeline.models.world_task import WorldTask
from envpipeline.worlds.criteria import row_matches
from envpipeline.worlds.state import WorldReader

#: The columns that identify a row across the days (an insert op is matched to a row on these).
IDENTITY: dict[str, tuple[str, ...]] = {
    "shop/products": ("sku",),
    "shop/orders": ("order_number",),
    "mail/messages": ("subject", "sent_at"),
    "chat/messages": ("body", "posted_at"),
    "dm/messages": ("body", "sent_at"),
    "calendar/events": ("title", "start"),
    "flights/bookings": ("confirmation",),
    "bank/accounts": ("name",),
    "bank/transactions": ("memo", "posted_at"),
    "accounts/users": ("username",),
}
ORDER = ("web", "cli", "mcp")


def interfaces_needed(task: WorldTask) -> list[str]:
    """The interfaces the reference solution acts through, in web, cli, mcp order."""
    used = {step.interface for step in task.solution}
    return [i for i in ORDER if i in used]


def _rows(reader: WorldReader, app: str, table: str) -> list[dict[str, Any]]:
    return reader.query(app, f'SELECT * FROM "{table}" ORDER BY id')


def _contains(row: dict[str, Any], match: dict[str, Any]) -> bool:
    return all(str(v) in str(row.get(k) or "") for k, v in match.items())


def records_used(task: WorldTask, reader: WorldReader) -> list[tuple[str, dict[str, Any] | str]]:
    """(``app/table``, row) or (``files``, path) of every existing record the task reads or changes."""
    out: list[tuple[str, dict[str, Any] | str]] = []

    def rows(key: str, keep) -> None:
        app, table = key.split("/")
        out.extend((key, r) for r in _rows(reader, app, table) if keep(r))

    for step in task.solution:
        a, action = step.args, step.action
        if action == "mcp.find_booking":
            rows("flights/bookings", lambda r, a=a: _contains(r, a.get("match") or {}))
        elif action == "web.find_event":
            rows("calendar/events", lambda r, a=a: _contains(r, a.get("match") or {}))
        elif action == "web.find_transaction":
            rows("bank/transactions", lambda r, a=a: _contains(r, a.get("match") or {}))
        elif action == "web.read_balance":
            rows("bank/accounts", lambda r, a=a: r["name"].lower() == a["account"].lower())
        elif action in ("web.read_mail", "mcp.read_mail"):
            rows(
                "mail/messages",
                lambda r, a=a: a["subject"] in (r["subject"] or "") and r["folder"] == "inbox",
            )
        elif action == "mcp.read_dm":  # the agent uses the latest matching message
            hits = [
                r
                for r in _rows(reader, "dm", "messages")
                if r["peer"] == a["peer"]
                and r["direction"] == "in"
                and re.search(a["pattern"], r["body"] or "")
            ]
            out.extend(("dm/messages", r) for r in hits[-1:])
        elif action == "mcp.read_chat":
            hits = [
                r
                for r in _rows(reader, "chat", "messages")
                if (not a.get("author") or r["author"] == a["author"])
                and re.search(a["pattern"], r["body"] or "")
            ]
            out.extend(("chat/messages", r) for r in hits[-1:])
        elif action == "mcp.set_password":
            rows("accounts/users", lambda r, a=a: r["username"] == a["username"])
        elif action == "cli.read_file" and "{" not in a["path"] and reader.exists(a["path"]):
            out.append(("files", a["path"]))
    for criterion in task.criteria:
        if criterion.kind == "row_changed" and criterion.app and criterion.table:
            where = {k: c.model_dump() for k, c in criterion.where.items()}
            rows(f"{criterion.app}/{criterion.table}", lambda r, w=where: row_matches(r, w))
    return out


def _origin_days(key: str, record: dict[str, Any] | str, history: list[dict[str, Any]]) -> set[int]:
    """The days whose operations inserted or updated `record` (empty when none did: day 00)."""
    days: set[int] = set()
    for delta in history:
        for op in delta.get("ops", []):
            if key == "files":
                if op.get("path") == record:
                    days.add(int(delta["day"]))
                continue
            assert isinstance(record, dict)
            if f"{op.get('app')}/{op.get('table')}" != key:
                continue
            values, where = op.get("values") or {}, op.get("where") or {}
            if op.get("op") == "insert":
                ident = [c for c in IDENTITY.get(key, tuple(values)) if c in values]
                if ident and all(values[c] == record.get(c) for c in ident):
                    days.add(int(delta["day"]))
            elif where and all(record.get(k) == v for k, v in where.items()):
                days.add(int(delta["day"]))
    return days


def depends_on_days(task: WorldTask, reader: WorldReader) -> list[int]:
    """The days whose events the task needs (0 for records of day 00 nothing later touched)."""
    history = reader.history()
    days: set[int] = set()
    for key, record in records_used(task, reader):
        days |= _origin_days(key, record, history) or {0}
    return sorted(days)


def with_needs(task: WorldTask, reader: WorldReader) -> WorldTask:
    """`task` with ``interfaces_needed`` and ``depends_on_days`` derived (see the module doc)."""
    return task.model_copy(
        update={
            "interfaces_needed": interfaces_needed(task),
            "depends_on_days": depends_on_days(task, reader),
        }
    )
