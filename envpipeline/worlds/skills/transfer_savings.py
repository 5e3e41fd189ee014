"""transfer_savings: move money from checking to savings (two transactions, two balances)."""

from __future__ import annotations

import random

from envpipeline.models.world import Operation, Persona
from envpipeline.worlds.schema import stamp
from envpipeline.worlds.skills.base import Skill, bank_tx
from envpipeline.worlds.skills.registry import register_skill
from envpipeline.worlds.state import WorldReader


class TransferSavings(Skill):
    name = "transfer_savings"
    apps = ("bank",)
    summary = "moves money to savings"

    def available(self, persona: Persona, reader: WorldReader) -> bool:
        rows = reader.query("bank", "SELECT balance_cents FROM accounts WHERE name = 'Checking'")
        return bool(rows) and rows[0]["balance_cents"] > 60000

    def plan(
        self, persona: Persona, reader: WorldReader, rng: random.Random, day: int, slot: int = 0
    ) -> list[Operation]:
        amount = rng.randint(10, 50) * 1000
        at = stamp(day, slot, 30)
        return [
            *bank_tx(reader, "Checking", -amount, "Transfer to savings", at),
            *bank_tx(reader, "Savings", amount, "Transfer from checking", at),
        ]


register_skill(TransferSavings())
