"""The skill plug-in and the small helpers skills build their operations with.

A skill module defines a `Skill` subclass and ends with `register_skill(MySkill())`.
`plan(persona, reader, rng, day, slot)` reads the previous day through the `WorldReader` and
returns operations (data, applied later by `apply_delta`) that touch exactly `apps`, consistently:
e.g. a flight booking, its confirmation email, the calendar event and the travel note agree.
"""

from __future__ import annotations

import json
import random
from abc import ABC, abstractmethod
from datetime import datetime, timedelta
from typing import Any, ClassVar

from envpipeline.models.world import Contact, Operation, Persona
from envpipeline.worlds.schema import FILES_APP, day_date
from envpipeline.worlds.state import WorldReader


class Skill(ABC):
    """One event-creation skill."""

    name: ClassVar[str]
    #: Apps the skill declares it touches (the declaration check compares them with the diff).
    apps: ClassVar[tuple[str, ...]]
    summary: ClassVar[str]
    #: A shared object kind ("order", "booking") that at most one skill per day may act on.
    consumes: ClassVar[str | None] = None
    #: A follow-up of earlier state (the planner prefers one follow-up per day for continuity).
    follow_up: ClassVar[bool] = False
    #: Skills that, applied first to a fresh world, make this one available (contract tests).
    requires: ClassVar[tuple[str, ...]] = ()

    def available(self, persona: Persona, reader: WorldReader) -> bool:
        """Whether the previous world allows this skill today."""
        return True

    @abstractmethod
    def plan(
        self, persona: Persona, reader: WorldReader, rng: random.Random, day: int, slot: int = 0
    ) -> list[Operation]:
        """The operations of this activity (activity `slot` of `day`)."""

    def describe(self, persona: Persona) -> str:
        """One line for the day plan."""
        return f"{persona.name.split()[0]}: {self.summary}"


# --- operation helpers -------------------------------------------------------------------------


def ins(app: str, table: str, **values: Any) -> Operation:
    """Insert one row (id = MAX(id)+1 at apply time)."""
    return Operation(app=app, table=table, op="insert", values=values)


def upd(app: str, table: str, where: dict[str, Any], **values: Any) -> Operation:
    """Update rows matching `where`; a value {"$add": n} adds n."""
    return Operation(app=app, table=table, op="update", where=where, values=values)


def rm(app: str, table: str, where: dict[str, Any]) -> Operation:
    """Delete rows matching `where`."""
    return Operation(app=app, table=table, op="delete", where=where)


def write(path: str, content: str) -> Operation:
    """Write home/<path>."""
    return Operation(app=FILES_APP, op="write_file", path=path, content=content)


def append(reader: WorldReader, path: str, line: str, header: str) -> Operation:
    """Append a line to home/<path>, creating it with `header` when missing."""
    if reader.exists(path):
        return Operation(app=FILES_APP, op="append_file", path=path, content=line)
    return write(path, header + line)


def mail(folder: str, sender: str, recipients: str, subject: str, body: str, at: str) -> Operation:
    """One email (inbox mail arrives unread, sent mail is read)."""
    return ins(
        "mail",
        "messages",
        folder=folder,
        sender=sender,
        recipients=recipients,
        subject=subject,
        body=body,
        sent_at=at,
        is_read=1 if folder == "sent" else 0,
    )


def dm(peer: str, direction: str, body: str, at: str) -> Operation:
    """One direct message."""
    return ins("dm", "messages", peer=peer, direction=direction, body=body, sent_at=at)


def event(title: str, start: str, end: str, location: str, attendees: list[str]) -> Operation:
    """One calendar event."""
    return ins(
        "calendar",
        "events",
        title=title,
        start=start,
        end=end,
        location=location,
        attendees_json=json.dumps(attendees),
    )


def bank_tx(reader: WorldReader, account: str, amount_cents: int, memo: str, at: str) -> list[Operation]:
    """A transaction plus the matching balance change (balances stay equal to their sums)."""
    account_id = reader.query("bank", "SELECT id FROM accounts WHERE name = ?", [account])[0]["id"]
    return [
        ins(
            "bank", "transactions", account_id=account_id, amount_cents=amount_cents, memo=memo, posted_at=at
        ),
        upd("bank", "accounts", {"id": account_id}, balance_cents={"$add": amount_cents}),
    ]


def chat_post(reader: WorldReader, channel: str, author: str, body: str, at: str) -> Operation:
    """A message in an existing chat channel."""
    channel_id = reader.query("chat", "SELECT id FROM channels WHERE name = ?", [channel])[0]["id"]
    return ins("chat", "messages", channel_id=channel_id, author=author, body=body, posted_at=at)


def contact(persona: Persona, rng: random.Random, *relations: str) -> Contact:
    """A contact of one of `relations` (any contact when none match)."""
    pool = [c for c in persona.contacts if not relations or c.relation in relations]
    return rng.choice(pool or persona.contacts)


def at_day(day: int, hour: int, minute: int = 0) -> str:
    """An ISO time on world day `day` (used for future events)."""
    moment = datetime.combine(day_date(day), datetime.min.time()) + timedelta(hours=hour, minutes=minute)
    return moment.isoformat(timespec="seconds")


def plus_minutes(iso: str, minutes: int) -> str:
    """`iso` + `minutes`."""
    return (datetime.fromisoformat(iso) + timedelta(minutes=minutes)).isoformat(timespec="seconds")


def code(rng: random.Random, letters: int, day: int, slot: int) -> str:
    """A unique-per-world code: random letters + day + slot (e.g. KQX071)."""
    return "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ") for _ in range(letters)) + f"{day:02d}{slot}"


def money(cents: int) -> str:
    """12.34 style amount."""
    return f"{cents / 100:.2f}"
