"""invoice_client: write an invoice file, email it to a client, and book the client's payment."""

from __future__ import annotations

import random

from envpipeline.models.world import Operation, Persona
from envpipeline.worlds.schema import stamp
from envpipeline.worlds.skills.base import Skill, bank_tx, contact, mail, money, write
from envpipeline.worlds.skills.registry import register_skill
from envpipeline.worlds.state import WorldReader


class InvoiceClient(Skill):
    name = "invoice_client"
    apps = ("mail", "files", "bank")
    summary = "invoices a client and gets paid"

    def plan(
        self, persona: Persona, reader: WorldReader, rng: random.Random, day: int, slot: int = 0
    ) -> list[Operation]:
        client = contact(persona, rng, "client")
        number = f"INV-{day:02d}{slot}{rng.randint(10, 99)}"
        hours, rate = rng.randint(4, 30), rng.choice([45, 60, 75, 90])
        total = hours * rate * 100
        text = (
            f"# Invoice {number}\n\nFrom: {persona.name} ({persona.occupation})\nTo: {client.name}\n"
            f"Date: {stamp(day, slot)[:10]}\n\n{hours} h x {rate}.00 = {money(total)}\n"
        )
        return [
            write(f"documents/invoices/{number}.md", text),
            mail(
                "sent",
                persona.email,
                client.email,
                f"Invoice {number}",
                f"Hi {client.name.split()[0]}, please find invoice {number} over {money(total)} attached.",
                stamp(day, slot, 5),
            ),
            *bank_tx(reader, "Checking", total, f"Payment {number} from {client.name}", stamp(day, slot, 50)),
        ]


register_skill(InvoiceClient())
