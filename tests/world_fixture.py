"""A tiny world day folder (spec schema) for the interface tests: a few products, mails, chats, DMs."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from envpipeline.worlds.criteria import render_script
from envpipeline.worlds.schema import create_empty_world

if TYPE_CHECKING:
    from envpipeline.models.world_task import WorldTask

PERSONA = "p01-test-persona"
ME = "test.persona@mail.example"

PRODUCTS = [
    # sku, name, category, price_cents, stock
    ("SKU-KETTLE", "Electric kettle", "kitchen", 3299, 5),
    ("SKU-COFFEE", "Espresso beans 1 kg", "kitchen", 2399, 2),
    ("SKU-TENT", "Two-person tent", "outdoor", 15999, 0),
    ("SKU-NOVEL", "Paperback novel", "books", 1199, 10),
]


def insert(day_dir: Path, app: str, sql: str, rows: list[tuple]) -> None:
    with sqlite3.connect(day_dir / "apps" / f"{app}.sqlite") as db:
        db.executemany(sql, rows)


def query(day_dir: Path, app: str, sql: str, params: tuple = ()) -> list[tuple]:
    db = sqlite3.connect(day_dir / "apps" / f"{app}.sqlite")
    try:
        return db.execute(sql, params).fetchall()
    finally:
        db.close()


def make_day(root: Path, day: int = 1) -> Path:
    """<root>/<PERSONA>/day-<dd> with every app database and a small home/."""
    day_dir = root / PERSONA / f"day-{day:02d}"
    create_empty_world(day_dir)
    stamp = f"2026-03-0{2 + day}T09:00:00"
    insert(
        day_dir,
        "shop",
        "INSERT INTO products (sku, name, category, price_cents, stock, description, image_alt)"
        " VALUES (?, ?, ?, ?, ?, 'A fine thing.', 'Photo')",
        PRODUCTS,
    )
    insert(
        day_dir,
        "shop",
        "INSERT INTO orders (order_number, status, total_cents, placed_at, items_json)"
        " VALUES (?, ?, ?, ?, ?)",
        [("ORD-00001", "delivered", 1199, "2026-03-02T08:00:00", "[]")],
    )
    insert(
        day_dir,
        "mail",
        "INSERT INTO messages (folder, sender, recipients, subject, body, sent_at, is_read)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            ("inbox", "welcome@mail.example", ME, "Welcome to your mailbox", "Hello!", stamp, 0),
            ("inbox", "maja@work.example", ME, "Budget review", "Can you send the numbers?", stamp, 0),
            ("sent", ME, "maja@work.example", "Re: kickoff", "See you there.", stamp, 1),
        ],
    )
    insert(
        day_dir,
        "chat",
        "INSERT INTO channels (name, topic) VALUES (?, ?)",
        [("general", "Everything"), ("team", "Work chat")],
    )
    insert(
        day_dir,
        "chat",
        "INSERT INTO messages (channel_id, author, body, posted_at) VALUES (?, ?, ?, ?)",
        [(1, "maja.k", "Welcome!", stamp), (2, "maja.k", "Standup at ten", stamp)],
    )
    insert(
        day_dir,
        "dm",
        "INSERT INTO messages (peer, direction, body, sent_at) VALUES (?, ?, ?, ?)",
        [("olaf.b", "in", "Long time no see!", stamp)],
    )
    insert(
        day_dir,
        "accounts",
        "INSERT INTO users (username, password_hash) VALUES (?, ?)",
        [("test.persona", "x")],
    )
    (day_dir / "home" / "notes").mkdir(parents=True)
    (day_dir / "home" / "todo.txt").write_text("# TODO\n- [ ] reply to Olaf\n")
    (day_dir / "home" / "notes" / "ideas.md").write_text("# Ideas\n")
    return day_dir


# -- worlds that, together, give every template a task -------------------------------------------------
# Core tools steer each persona's days, so no single 5-day world has every template apply (measured on
# personas (0, 0..7): each misses 2-14). These three together cover all of them.
TEMPLATE_PERSONAS = ((0, 2), (0, 0), (0, 1))
TEMPLATE_DAYS = 5


def build_template_worlds(root: Path) -> list[Path]:
    """The five-day worlds of TEMPLATE_PERSONAS under `root` (the fixture of choice is session-scoped)."""
    from envpipeline.worlds.build import build_world
    from envpipeline.worlds.personas import generate_persona

    worlds = []
    for seed, index in TEMPLATE_PERSONAS:
        build = build_world(
            generate_persona(seed, index),
            TEMPLATE_DAYS,
            root / f"p{seed}-{index}",
            live_health=False,
            replay=False,
        )
        assert build.passed, (seed, index)
        worlds.append(Path(build.root))
    return worlds


def find_task(name: str, worlds: list[Path], accept: Callable[[WorldTask], bool] | None = None):
    """(task, its day folder) of template `name` on the first world day where it applies and `accept`
    agrees; fails the test with the template's name when no day of any world gives one."""
    from envpipeline.worlds.state import WorldReader
    from envpipeline.worlds.tasks import load_persona, task_from_template
    from envpipeline.worlds.templates import all_templates

    template = all_templates()[name]
    for world in worlds:
        persona = load_persona(world / "day-01")
        for day in range(1, TEMPLATE_DAYS + 1):
            day_dir = world / f"day-{day:02d}"
            task = task_from_template(template, WorldReader(day_dir), persona, 0)
            if task is not None and (accept is None or accept(task)):
                return task, day_dir
    raise AssertionError(f"{name} applies on no day of the template worlds {TEMPLATE_PERSONAS}")


def day_pair(root: Path, day: int = 3) -> tuple[Path, Path]:
    """A day folder (`make_day`) and a copy of it for an attempt to change: (initial, final)."""
    initial = make_day(root / "initial", day=day)
    final = root / "final" / initial.name
    shutil.copytree(initial, final)
    return initial, final


def run_criterion_script(
    criterion: dict, initial: Path, final: Path, folder: Path
) -> subprocess.CompletedProcess:
    """Export one criterion as its standalone script (`render_script`) and run it isolated
    (``python -I``) on the two day folders: exit 0 is PASS, 1 is FAIL."""
    script = folder / f"criterion_{criterion['id']}.py"
    script.write_text(render_script(criterion))
    return subprocess.run(
        [sys.executable, "-I", str(script), str(initial), str(final)], capture_output=True, text=True
    )
