"""Scripted answers of the WildAWM LLM stages, routed by the stage's system prompt (for the tests).

`StageRouter` is a callable script for `ScriptedLLMServer`: it reads the request's system message,
decides which stage asks, and answers from per-stage queues (falling back to a default answer per
stage), recording every stage it saw. The default answers are valid: a persona bible, an accepting
diversity verdict, a consistent skill, a solvable task and a passing world verdict.
"""

from __future__ import annotations

import json
import re
from collections import Counter, deque
from collections.abc import Callable
from typing import Any

from envpipeline.worlds.schema import day_date

MARKERS = {
    "persona": "You create diverse personas",
    "diversity_judge": "You are the diversity judge",
    "skills": "You write event-creation skills",
    "task": "You synthesize verifiable cross-interface",
    "world_judge": "You are the independent reviewer",
}

PERSONAS = [
    {
        "name": "Ingrid Solberg",
        "occupation": "marine biologist",
        "city": "Tromso",
        "age": 38,
        "description": "Ingrid studies kelp forests along the northern coast, runs field trips with students and "
        "keeps meticulous lab notes; she cycles to work all year.",
        "contacts": [
            {"name": "Maja Kowalski", "relation": "colleague"},
            {"name": "Oskar Lind", "relation": "client"},
            {"name": "Rosa Costa", "relation": "friend"},
        ],
        "favourite_sites": ["oceandata.example", "kelpwatch.example", "bikeshop.example"],
        "core_tools": ["mail", "calendar", "files"],
        "arcs": [
            {
                "name": "field-season",
                "description": "prepares the summer field season",
                "skills": ["schedule_meeting", "share_document", "write_journal"],
            },
            {
                "name": "gym-routine",
                "description": "keeps up a winter gym routine",
                "skills": ["pay_gym_fee", "gym_session"],
            },
        ],
    },
    {
        "name": "Tariq Haddad",
        "occupation": "bicycle mechanic",
        "city": "Marseille",
        "age": 29,
        "description": "Tariq repairs racing bikes in a small workshop near the port, orders spare parts weekly "
        "and plays bass in a weekend band with old school friends.",
        "contacts": [
            {"name": "Lina Berg", "relation": "friend"},
            {"name": "Hugo Moreau", "relation": "client"},
            {"name": "Aisha Rahman", "relation": "family"},
        ],
        "favourite_sites": ["partsdepot.example", "bandcamp.example", "velonews.example"],
        "core_tools": ["shop", "dm", "bank"],
        "arcs": [
            {
                "name": "workshop-restock",
                "description": "restocks the workshop",
                "skills": ["order_product", "track_delivery", "download_receipt"],
            },
            {
                "name": "band-tour",
                "description": "plans a weekend band trip",
                "skills": ["dm_friend_plans", "book_flight", "cancel_flight"],
            },
        ],
    },
]

GYM_SKILL = {
    "name": "pay_gym_fee",
    "summary": "pays the monthly gym fee and files the receipt",
    "apps": ["bank", "mail"],
    "scenarios": [
        {
            "app": "bank",
            "table": "transactions",
            "op": "insert",
            "values": {
                "account_id": 1,
                "amount_cents": "-{amount}",
                "memo": "Gym fee {code}",
                "posted_at": "{at}",
            },
        },
        {
            "app": "bank",
            "table": "accounts",
            "op": "update",
            "where": {"name": "Checking"},
            "values": {"balance_cents": {"$add": "-{amount}"}},
        },
        {
            "app": "mail",
            "table": "messages",
            "op": "insert",
            "values": {
                "folder": "inbox",
                "sender": "billing@gym.example",
                "recipients": "{email}",
                "subject": "Receipt {code}",
                "body": "Hi {first}, we received {amount_text}.",
                "sent_at": "{at}",
                "is_read": 0,
            },
        },
    ],
}


def stage_of(body: dict[str, Any]) -> str:
    """Which stage sent the request (by its system message)."""
    system = next((m["content"] for m in body["messages"] if m["role"] == "system"), "")
    for stage, marker in MARKERS.items():
        if marker in system:
            return stage
    raise AssertionError(f"unknown stage: {system[:120]}")


def first_user(body: dict[str, Any]) -> str:
    """The stage's own prompt (the first user message)."""
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def persona_answer(body: dict[str, Any]) -> str:
    """The persona matching the requested number (cycling)."""
    number = int(re.search(r"persona number (\d+)", first_user(body)).group(1))  # type: ignore[union-attr]
    return json.dumps(PERSONAS[(number - 1) % len(PERSONAS)])


def task_draft(
    body: dict[str, Any],
    *,
    leak: bool = False,
    wrong_text: bool = False,
    loose: bool = False,
    spelled_leak: bool = False,
) -> dict[str, Any]:
    """A DM -> shell -> DM task for the persona and day in the prompt (valid unless told otherwise;
    `leak`: the instruction states the date and time the agent must read, `spelled_leak`: states
    them as a person would say them ('March 7 at 2:30 pm'); `loose`: its criteria check the date
    the agent writes but not the time)."""
    prompt = first_user(body)
    day = int(re.search(r"on day (\d+)", prompt).group(1))  # type: ignore[union-attr]
    persona = json.loads(re.search(r"Persona: (\{.*?\})\nWorld day", prompt, re.S).group(1))  # type: ignore[union-attr]
    friend = persona["contacts"][0]
    handle, first = friend["handle"], friend["name"].split()[0]
    when = day_date(day + 3).isoformat()
    told = f" It is on {when} at 14:30." if leak else ""
    if spelled_leak:
        told = f" It is on {day_date(day + 3):%B} {day_date(day + 3).day} at 2:30 pm."
    return {
        "name": "move_rehearsal",
        "instruction": f"{first} asked you by direct message to move the rehearsal. Add a line "
        f"'- DATE TIME rehearsal' to notes/agenda.md with the shell and confirm the new date and time "
        f"to {handle} by DM.{told}",
        "setup": [
            {
                "app": "dm",
                "table": "messages",
                "values": {
                    "peer": handle,
                    "direction": "in",
                    "sent_at": f"{day_date(day).isoformat()}T18:05:00",
                    "body": f"Can we move the rehearsal to {when} at 14:30? Thanks!",
                },
            }
        ],
        "subtasks": [
            {
                "interface": "mcp",
                "description": f"Read the DM from {handle}.",
                "hint": f"dm_read peer '{handle}'",
                "steps": [
                    {
                        "action": "mcp.read_dm",
                        "args": {
                            "peer": handle,
                            "pattern": r"rehearsal to (\d{4}-\d{2}-\d{2}) at (\d{2}:\d{2})",
                            "vars": ["date", "time"],
                            "distractors": {"date": [day_date(day + 4).isoformat()], "time": ["15:30"]},
                        },
                    }
                ],
            },
            {
                "interface": "cli",
                "description": "Add the rehearsal to notes/agenda.md.",
                "hint": "printf '- DATE TIME rehearsal' >> notes/agenda.md",
                "steps": [
                    {
                        "action": "cli.append_file",
                        "args": {"path": "notes/agenda.md", "content": "- {date} {time} rehearsal\n"},
                    }
                ],
                "criteria": [
                    {
                        "kind": "file_contains",
                        "description": f"notes/agenda.md has {when} 14:30",
                        "path": "notes/agenda.md",
                        "text": when if loose else f"{when} 15:30" if wrong_text else f"{when} 14:30",
                    }
                ],
            },
            {
                "interface": "mcp",
                "description": f"Confirm the new time to {handle}.",
                "hint": f"dm_send to '{handle}'",
                "steps": [
                    {
                        "action": "mcp.dm_send",
                        "args": {"peer": handle, "body": "Moved the rehearsal to {date} {time}."},
                    }
                ],
                "criteria": [
                    {
                        "kind": "row_added",
                        "description": f"a DM to {handle} confirms {when} 14:30",
                        "app": "dm",
                        "table": "messages",
                        "where": {
                            "peer": {"op": "eq", "value": handle},
                            "direction": {"op": "eq", "value": "out"},
                            "body": {"op": "contains", "value": when if loose else f"{when} 14:30"},
                        },
                    }
                ],
            },
        ],
        "facts": {"date": when, "time": "14:30"},
    }


DEFAULTS: dict[str, Callable[[dict[str, Any]], str]] = {
    "persona": persona_answer,
    "diversity_judge": lambda body: json.dumps({"accepted": True, "repeats": {}, "feedback": ""}),
    "skills": lambda body: json.dumps({"skills": [GYM_SKILL]}),
    "task": lambda body: json.dumps(task_draft(body)),
    "world_judge": lambda body: json.dumps({"verdict": "pass", "issues": []}),
}


class StageRouter:
    """A `ScriptedLLMServer` script: per-stage queues of answers, then the stage's default."""

    def __init__(self) -> None:
        self.queues: dict[str, deque[str | Callable[[dict[str, Any]], str]]] = {s: deque() for s in MARKERS}
        self.seen: Counter[str] = Counter()
        self.bodies: list[tuple[str, dict[str, Any]]] = []

    def queue(self, stage: str, *answers: str | Callable[[dict[str, Any]], str]) -> StageRouter:
        """Answer the next requests of `stage` with `answers`, in order."""
        self.queues[stage].extend(answers)
        return self

    def __call__(self, body: dict[str, Any]) -> str:
        stage = stage_of(body)
        self.seen[stage] += 1
        self.bodies.append((stage, body))
        answer = self.queues[stage].popleft() if self.queues[stage] else DEFAULTS[stage]
        return answer(body) if callable(answer) else answer
