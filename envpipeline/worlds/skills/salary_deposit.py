"""salary_deposit: the monthly pay lands in the checking account."""

from __future__ import annotations

import random

from envpipeline.models.world import Operation, Persona
from envpipeline.worlds.schema import stamp
from envpipeline.worlds.skills.base import Skill, bank_tx
from envpipeline.worlds.skills.registry import register_skill
from envpipeline.worlds.state import WorldReader


class SalaryDeposit(Skill):
    name = "salary_deposit"
    apps = ("bank",)
    summary = "gets paid"

    def plan(
        self, persona: Persona, reader: WorldReader, rng: random.Random, day: int, slot: int = 0
    ) -> list[Operation]:
        amount = rng.randint(22, 48) * 10000
        return bank_tx(reader, "Checking", amount, f"Salary ({persona.occupation})", stamp(day, 0))


register_skill(SalaryDeposit())
