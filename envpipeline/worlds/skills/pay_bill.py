"""pay_bill: a bill arrives by email and is paid from the checking account (payment receipt mailed)."""

from __future__ import annotations

import random

from envpipeline.models.world import Operation, Persona
from envpipeline.worlds.schema import stamp
from envpipeline.worlds.skills.base import Skill, bank_tx, code, mail, money
from envpipeline.worlds.skills.registry import register_skill
from envpipeline.worlds.state import WorldReader

BILLERS = [
    ("electricity", "billing@power.example"),
    ("internet", "invoices@fibrenet.example"),
    ("phone", "billing@mobile.example"),
    ("water", "accounts@water.example"),
]


class PayBill(Skill):
    name = "pay_bill"
    apps = ("bank", "mail")
    summary = "pays a utility bill"

    def plan(
        self, persona: Persona, reader: WorldReader, rng: random.Random, day: int, slot: int = 0
    ) -> list[Operation]:
        kind, sender = rng.choice(BILLERS)
        amount, ref = rng.randint(25, 140) * 100 + rng.choice([0, 49, 99]), "B" + code(rng, 3, day, slot)
        return [
            mail(
                "inbox",
                sender,
                persona.email,
                f"Your {kind} bill {ref}",
                f"Amount due: {money(amount)}. Reference {ref}.",
                stamp(day, slot),
            ),
            *bank_tx(reader, "Checking", -amount, f"{kind.capitalize()} bill {ref}", stamp(day, slot, 15)),
            mail(
                "inbox",
                sender,
                persona.email,
                f"Payment received {ref}",
                f"We received your payment of {money(amount)}. Thank you.",
                stamp(day, slot, 45),
            ),
        ]


register_skill(PayBill())
