"""Calendar and bank on the web, flights and accounts over MCP, and the history-grounded templates.

The interface tests act on a hand-made day; the template tests build a real five-day world and
check, for every template over calendar, flights, bank or accounts, that its reference solution
passes, that doing nothing fails, and that doing the task on the wrong record (another booking,
event, amount or login than the one the history names) fails its criteria.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client

from envpipeline.models.world_task import WorldTask
from envpipeline.worlds.agent_session import Session
from envpipeline.worlds.agents import ScriptedAgent
from envpipeline.worlds.gates import GUARD_KINDS
from envpipeline.worlds.interfaces.mcp_server import TOOL_NAMES, create_mcp_server
from envpipeline.worlds.interfaces.web import serve_web
from envpipeline.worlds.schema import password_hash
from envpipeline.worlds.state import WorldReader
from envpipeline.worlds.task_meta import depends_on_days
from envpipeline.worlds.tasks import prepare_initial
from envpipeline.worlds.templates import all_templates
from envpipeline.worlds.verifier import evaluate
from tests.world_fixture import find_task, insert, make_day, query

LIFE_TEMPLATES = sorted(
    name
    for name, t in all_templates().items()
    if t.build.__module__.rsplit(".", 1)[-1]
    in ("flight_tasks", "calendar_tasks", "bank_tasks", "account_tasks")
)
DAYS = 5


@pytest.fixture
def day_dir(tmp_path):
    day = make_day(tmp_path, day=3)
    insert(
        day,
        "calendar",
        "INSERT INTO events (title, start, end, location, attendees_json) VALUES (?, ?, ?, ?, ?)",
        [("Budget review", "2026-03-09T14:00:00", "2026-03-09T15:00:00", "Video call", "[]")],
    )
    insert(
        day,
        "flights",
        "INSERT INTO bookings (confirmation, origin, destination, depart_at, passenger, status)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        [
            ("ABC123", "Oslo", "Lisbon", "2026-03-10T09:25:00", "Test Persona", "confirmed"),
            ("OLD999", "Oslo", "Rome", "2026-03-12T07:00:00", "Test Persona", "cancelled"),
        ],
    )
    insert(
        day,
        "bank",
        "INSERT INTO accounts (name, balance_cents) VALUES (?, ?)",
        [("Checking", 100000), ("Savings", 5000)],
    )
    insert(
        day,
        "bank",
        "INSERT INTO transactions (account_id, amount_cents, memo, posted_at) VALUES (?, ?, ?, ?)",
        [
            (1, 100000, "Salary (tester)", "2026-03-04T08:00:00"),
            (2, 5000, "Opening balance", "2026-03-02T08:00:00"),
        ],
    )
    return day


def test_web_calendar_moves_cancels_and_adds_events(day_dir):
    server = serve_web(day_dir)
    try:
        with httpx.Client(base_url=server.url, timeout=10) as web:
            page = web.get("/calendar").text
            assert 'id="event-1"' in page and "Budget review" in page and 'id="nav-calendar"' in page
            moved = web.post("/calendar/1/move", data={"start": "2026-03-10T16:00"})
            assert moved.status_code == 303 and moved.headers["location"] == "/calendar/1"
            assert query(day_dir, "calendar", "SELECT start, end FROM events WHERE id = 1") == [
                ("2026-03-10T16:00:00", "2026-03-10T17:00:00")
            ]
            bad = web.post("/calendar/1/move", data={"start": "next tuesday"})
            assert bad.status_code == 400 and "must be a date-time" in bad.text
            assert web.post("/calendar/1/cancel").status_code == 303
            again = web.post("/calendar/1/cancel")
            assert again.status_code == 409 and "already cancelled" in again.text
            assert web.get("/calendar/99").status_code == 404
            added = web.post(
                "/calendar/add", data={"title": "Dentist", "start": "2026-03-11T08:30", "end": ""}
            )
            assert added.status_code == 303 and added.headers["location"] == "/calendar/2"
    finally:
        server.stop()
    assert query(day_dir, "calendar", "SELECT title FROM events ORDER BY id") == [
        ("Cancelled: Budget review",),
        ("Dentist",),
    ]


def test_web_bank_shows_balances_and_transfers_and_pays(day_dir):
    server = serve_web(day_dir)
    try:
        with httpx.Client(base_url=server.url, timeout=10) as web:
            assert "$1,000.00" in web.get("/bank").text
            checking = web.get("/bank/checking").text
            assert "Salary (tester)" in checking and 'id="balance">$1,000.00' in checking
            done = web.post(
                "/bank/transfer",
                data={"source": "Checking", "target": "Savings", "amount": "120.50", "memo": "x"},
            )
            assert done.status_code == 303 and done.headers["location"] == "/bank/savings"
            too_much = web.post("/bank/pay", data={"account": "Savings", "payee": "Ana", "amount": "5000"})
            assert too_much.status_code == 409 and "holds only" in too_much.text
            assert (
                web.post(
                    "/bank/pay", data={"account": "Checking", "payee": "Ana", "amount": "$1,0"}
                ).status_code
                == 303
            )
            assert web.get("/bank/nope").status_code == 404
            assert (
                web.post(
                    "/bank/transfer", data={"source": "Checking", "target": "Savings", "amount": "ten"}
                ).status_code
                == 400
            )
    finally:
        server.stop()
    assert query(day_dir, "bank", "SELECT name, balance_cents FROM accounts ORDER BY id") == [
        ("Checking", 100000 - 12050 - 1000),
        ("Savings", 5000 + 12050),
    ]
    assert query(day_dir, "bank", "SELECT amount_cents, memo, posted_at FROM transactions WHERE id > 2") == [
        (-12050, "Transfer to savings x", "2026-03-05T17:00:00"),
        (12050, "Transfer from checking x", "2026-03-05T17:00:00"),
        (-1000, "Payment to Ana", "2026-03-05T17:00:00"),
    ]


def test_mcp_flights_and_accounts_tools(day_dir):
    async def scenario():
        async with Client(create_mcp_server(day_dir)) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert names == set(TOOL_NAMES) and {"flights_change", "accounts_set_password"} <= names
            listed = await client.call_tool("flights_list", {})
            assert "ABC123" in listed.content[0].text and "OLD999" in listed.content[0].text
            changed = await client.call_tool(
                "flights_change", {"confirmation": "ABC123", "depart_at": "2026-03-11T09:25"}
            )
            assert not changed.is_error
            cancelled = await client.call_tool(
                "flights_change", {"confirmation": "OLD999", "depart_at": "2026-03-13T07:00"}
            )
            assert cancelled.is_error and "is cancelled, not confirmed" in cancelled.content[0].text
            booked = await client.call_tool(
                "flights_book", {"origin": "Oslo", "destination": "Rome", "depart_at": "2026-03-14T07:00"}
            )
            assert not booked.is_error and "NEW003" in booked.content[0].text
            logins = await client.call_tool("accounts_list", {})
            assert "test.persona" in logins.content[0].text and "password_hash" not in logins.content[0].text
            short = await client.call_tool(
                "accounts_set_password", {"username": "test.persona", "new_password": "abc"}
            )
            assert short.is_error and "at least 8" in short.content[0].text
            unknown = await client.call_tool(
                "accounts_set_password", {"username": "ghost", "new_password": "long-enough"}
            )
            assert unknown.is_error and "no login 'ghost'" in unknown.content[0].text
            ok = await client.call_tool(
                "accounts_set_password", {"username": "test.persona", "new_password": "long-enough"}
            )
            assert not ok.is_error

    anyio.run(scenario)
    assert query(day_dir, "flights", "SELECT confirmation, depart_at, status FROM bookings ORDER BY id") == [
        ("ABC123", "2026-03-11T09:25:00", "confirmed"),
        ("OLD999", "2026-03-12T07:00:00", "cancelled"),
        ("NEW003", "2026-03-14T07:00:00", "confirmed"),
    ]
    assert query(day_dir, "accounts", "SELECT password_hash FROM users") == [(password_hash("long-enough"),)]


# -- templates over the persona's history -------------------------------------------------------------
@pytest.fixture(scope="module")
def world(template_worlds):
    return template_worlds[2]  # persona (0, 1)


def _first_task(name: str, world: Path) -> WorldTask:
    task, _ = find_task(name, [world])
    return task


class WrongRecordAgent(ScriptedAgent):
    """Follows the reference solution, but every record it reads is another one (the distractor)."""

    async def _act(self, task: WorldTask, session: Session, mistakes: list[str]) -> None:
        for step in task.solution:
            from envpipeline.worlds.agent_actions_life import ACTIONS

            await ACTIONS[step.action](session, step.args, None, self.rng)
            for var, options in step.args.get("distractors", {}).items():
                wrong = [o for o in options if o != session.vars.get(var)]
                if wrong:
                    session.vars[var] = wrong[0]


def _run(agent: ScriptedAgent, task: WorldTask, world: Path, tmp: Path):
    w0 = prepare_initial(task, world / f"day-{task.day:02d}", tmp / "w0" / f"day-{task.day:02d}")
    final = tmp / "final" / w0.name
    shutil.copytree(w0, final)
    result = agent.run(task, final)
    return w0, final, result


def test_there_are_at_least_24_templates_and_16_over_the_persona_history():
    assert len(all_templates()) >= 24
    assert len(LIFE_TEMPLATES) >= 16


@pytest.mark.parametrize("name", LIFE_TEMPLATES)
def test_life_template_needs_three_interfaces_and_history_and_refuses_the_wrong_record(
    name, template_worlds, tmp_path
):
    # the first task, over the template worlds, that depends on a day after day 0
    task, day_dir = find_task(name, template_worlds, accept=lambda t: any(d > 0 for d in t.depends_on_days))
    world = day_dir.parent
    assert task.interfaces_needed == ["web", "cli", "mcp"], name
    assert any(d > 0 for d in task.depends_on_days), (name, task.depends_on_days)
    assert task.depends_on_days == depends_on_days(task, WorldReader(world / f"day-{task.day:02d}"))
    w0, final, result = _run(ScriptedAgent(seed="ref", error_rate=0.0), task, world, tmp_path / "ref")
    assert evaluate(task, w0, final, result.trajectory).verdict == 1, name
    nothing = evaluate(task, w0, w0)
    assert nothing.verdict == 0
    assert not any(nothing.criteria[c.id] for c in task.criteria if c.kind not in GUARD_KINDS), name
    w0, final, result = _run(WrongRecordAgent(seed="wrong", error_rate=0.0), task, world, tmp_path / "wrong")
    wrong = evaluate(task, w0, final, result.trajectory)
    assert wrong.verdict == 0, (name, "the wrong record passed")


def test_depends_on_days_follows_the_history_not_the_setup(world):
    task = _first_task("flight_reschedule", world)
    booking = task.facts["confirmation"]
    day = next(
        d for d in range(1, DAYS + 1) if booking in (world / f"day-{d:02d}" / "delta.json").read_text()
    )
    assert day in task.depends_on_days and 0 not in task.depends_on_days
    seeded = _first_task("meeting_reschedule", world)  # its trigger mail is setup, not history
    assert all(d > 0 for d in seeded.depends_on_days)


class TwiceAgent(ScriptedAgent):
    """Runs the reference solution twice (the red team's over-act policy, in miniature)."""

    async def _act(self, task: WorldTask, session: Session, mistakes: list[str]) -> None:
        await super()._act(task, session, mistakes)
        await super()._act(task, session, mistakes)


@pytest.mark.parametrize("name", ["flight_reschedule"])
def test_doing_the_task_twice_fails_where_the_writes_repeat_the_same_values(name, world, tmp_path):
    task = _first_task(name, world)
    w0, final, result = _run(TwiceAgent(seed="twice", error_rate=0.0), task, world, tmp_path / "twice")
    assert evaluate(task, w0, final, result.trajectory).verdict == 0, name
