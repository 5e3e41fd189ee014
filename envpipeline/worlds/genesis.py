"""Day 00 of a persona's world: the "genesis" operations that fill the empty app databases.

Day 00 is built like every other day: empty databases from `schema.CREATE_TABLES`, then the
genesis list of operations applied by `delta.apply_ops` (ids MAX(id)+1, frozen timestamps); the
draw is a pure function of the persona (``random.Random("<persona_id>:0:genesis")``). The shop
holds the persona's own catalogue (`catalogues.catalogue_for`), drawn from its trade's shop domains.
"""

from __future__ import annotations

import random
from pathlib import Path

from envpipeline.models.world import Operation, Persona
from envpipeline.worlds.catalogues import DOMAINS, Product, catalogue_for
from envpipeline.worlds.delta import apply_ops
from envpipeline.worlds.persona_pools import TRADES
from envpipeline.worlds.personas import trade_of
from envpipeline.worlds.schema import FILES_APP, create_empty_world, password_hash, stamp


def persona_catalogue(persona: Persona) -> list[Product]:
    """The persona's shop catalogue: its trade's shop domains, or two domains drawn from the
    occupation for an occupation outside the trade pools (e.g. an LLM-written persona)."""
    trade = trade_of(persona.occupation)
    if trade is not None:
        return catalogue_for(persona, list(TRADES[trade].shop))
    rng = random.Random(f"{persona.occupation}:shop-domains")
    return catalogue_for(persona, rng.sample(sorted(DOMAINS), 2))


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
    for item in persona_catalogue(persona):
        ops.append(
            Operation(
                app="shop",
                table="products",
                op="insert",
                values={
                    "sku": item.sku,
                    "name": item.name,
                    "category": item.category,
                    "price_cents": item.price_cents,
                    "stock": rng.randint(6, 40),
                    "description": item.description,
                    "image_alt": f"Photo of {item.name.lower()}",
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
