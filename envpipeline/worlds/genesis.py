"""Day 00 of a persona's world: the "genesis" operations that fill the empty app databases.

Day 00 is built like every other day: empty databases from `schema.CREATE_TABLES`, then the
genesis list of operations applied by `delta.apply_ops` (ids MAX(id)+1, frozen timestamps); the
draw is a pure function of the persona (``random.Random("<persona_id>:0:genesis")``).
"""

from __future__ import annotations

import random
from pathlib import Path

from envpipeline.models.world import Operation, Persona
from envpipeline.worlds.delta import apply_ops
from envpipeline.worlds.schema import FILES_APP, create_empty_world, password_hash, stamp

# (sku suffix, name, category, price in cents, description)
PRODUCT_POOL: list[tuple[str, str, str, int, str]] = [
    ("HDMI-2M", "HDMI cable 2 m", "electronics", 1299, "High-speed HDMI 2.1 cable, braided."),
    ("USB-HUB7", "USB-C hub 7-in-1", "electronics", 4599, "Hub with HDMI, SD reader and 100 W pass-through."),
    ("HEADSET", "Wireless headset", "electronics", 8999, "Noise-cancelling over-ear headset."),
    ("PWRBANK", "Power bank 20000 mAh", "electronics", 3499, "Two USB-C ports, airline safe."),
    ("NOTEBK-A5", "A5 dotted notebook", "office", 1499, "192 pages, lay-flat binding."),
    ("PEN-SET", "Gel pen set (10)", "office", 899, "Ten colours, 0.5 mm."),
    ("DESK-LAMP", "LED desk lamp", "office", 3999, "Dimmable, warm to cold white."),
    ("BACKPACK", "Travel backpack 30 l", "travel", 7999, "Cabin-size backpack with laptop sleeve."),
    ("ADAPTER", "Universal travel adapter", "travel", 2499, "EU/UK/US plugs, two USB ports."),
    ("BOTTLE", "Insulated bottle 0.75 l", "outdoor", 2199, "Keeps drinks cold for 24 h."),
    ("TENT-2P", "Two-person tent", "outdoor", 15999, "Lightweight three-season tent."),
    ("COFFEE-1K", "Espresso beans 1 kg", "kitchen", 2399, "Medium roast, single origin."),
    ("KETTLE", "Electric kettle", "kitchen", 3299, "1.7 l, temperature control."),
    ("YOGA-MAT", "Yoga mat", "fitness", 2999, "6 mm, non-slip."),
    ("DUMBBELL", "Adjustable dumbbells", "fitness", 11999, "2 x 2-24 kg, quick dial."),
    ("NOVEL", "Paperback novel", "books", 1199, "Award-winning literary fiction."),
    ("COOKBOOK", "Weeknight cookbook", "books", 2499, "100 recipes under 30 minutes."),
    ("GAFFER", "Gaffer tape 50 m", "supplies", 1899, "Matte black cloth tape, no residue."),
    ("BATT-AA", "AA batteries (24)", "supplies", 1599, "Alkaline, long shelf life."),
    ("LABELS", "Label printer tape", "supplies", 1399, "12 mm white tape, 8 m."),
]


def genesis_ops(persona: Persona) -> list[Operation]:
    """The operations that build a persona's day-00 world on empty databases."""
    rng = random.Random(f"{persona.persona_id}:0:genesis")
    t0 = stamp(0, 0)
    ops: list[Operation] = [
        Operation(
            app="accounts",
            table="users",
            op="insert",
            values={"username": persona.username, "password_hash": password_hash(persona.password)},
        ),
    ]
    products = sorted(rng.sample(range(len(PRODUCT_POOL)), 14))
    for i in products:
        sku, name, category, price, desc = PRODUCT_POOL[i]
        ops.append(
            Operation(
                app="shop",
                table="products",
                op="insert",
                values={
                    "sku": f"SKU-{sku}",
                    "name": name,
                    "category": category,
                    "price_cents": price,
                    "stock": rng.randint(6, 40),
                    "description": desc,
                    "image_alt": f"Photo of {name.lower()}",
                },
            )
        )
    checking, savings = rng.randint(150, 400) * 1000, rng.randint(300, 900) * 1000
    for name, balance in (("Checking", checking), ("Savings", savings)):
        ops.append(
            Operation(
                app="bank", table="accounts", op="insert", values={"name": name, "balance_cents": balance}
            )
        )
    for account_id, balance in ((1, checking), (2, savings)):
        ops.append(
            Operation(
                app="bank",
                table="transactions",
                op="insert",
                values={
                    "account_id": account_id,
                    "amount_cents": balance,
                    "memo": "Opening balance",
                    "posted_at": t0,
                },
            )
        )
    ops.append(
        Operation(
            app="chat",
            table="channels",
            op="insert",
            values={"name": "general", "topic": "Everything and nothing"},
        )
    )
    ops.append(
        Operation(
            app="chat",
            table="channels",
            op="insert",
            values={"name": "team", "topic": f"{persona.occupation} work chat"},
        )
    )
    for contact in persona.contacts:
        ops.append(
            Operation(
                app="chat",
                table="channels",
                op="insert",
                values={"name": contact.handle, "topic": f"Chat with {contact.name}"},
            )
        )
    ops.append(
        Operation(
            app="chat",
            table="messages",
            op="insert",
            values={
                "channel_id": 1,
                "author": persona.contacts[0].handle,
                "body": f"Welcome to the workspace, {persona.name.split()[0]}!",
                "posted_at": t0,
            },
        )
    )
    ops.append(
        Operation(
            app="mail",
            table="messages",
            op="insert",
            values={
                "folder": "inbox",
                "sender": "welcome@mail.example",
                "recipients": persona.email,
                "subject": "Welcome to your mailbox",
                "body": f"Hello {persona.name}, your mailbox is ready.",
                "sent_at": t0,
                "is_read": 0,
            },
        )
    )
    friend = persona.contacts[-1]
    ops.append(
        Operation(
            app="dm",
            table="messages",
            op="insert",
            values={
                "peer": friend.handle,
                "direction": "in",
                "body": "Hey! Long time no see, how are you?",
                "sent_at": stamp(0, 0, 5),
            },
        )
    )
    ops.append(
        Operation(
            app="calendar",
            table="events",
            op="insert",
            values={
                "title": "Weekly planning",
                "start": stamp(0, 1),
                "end": stamp(0, 1, 30),
                "location": "Home office",
                "attendees_json": "[]",
            },
        )
    )
    todo = "# TODO\n- [ ] sort out this week's plans\n- [ ] reply to " + friend.name + "\n"
    files = {
        "todo.txt": todo,
        "notes/ideas.md": f"# Ideas\n\n- things to try as a {persona.occupation}\n",
        "documents/profile.md": f"# {persona.name}\n\n{persona.description}\n",
        "downloads/README.txt": "Downloaded files land here.\n",
    }
    for path, content in files.items():
        ops.append(Operation(app=FILES_APP, op="write_file", path=path, content=content))
    return ops


def create_day0(persona: Persona, day_dir: Path) -> None:
    """Materialize the persona's initial world (day 00) in `day_dir`."""
    create_empty_world(day_dir)
    apply_ops(day_dir, genesis_ops(persona))
