"""rent_car: reserve a rental car: pickup event, confirmation email, card charge."""

from __future__ import annotations

import random

from envpipeline.models.world import Operation, Persona
from envpipeline.worlds.schema import stamp
from envpipeline.worlds.skills.base import Skill, at_day, bank_tx, code, event, mail, money, plus_minutes
from envpipeline.worlds.skills.registry import register_skill
from envpipeline.worlds.state import WorldReader

CARS = ["compact hatchback", "electric sedan", "station wagon", "small van"]


class RentCar(Skill):
    name = "rent_car"
    apps = ("calendar", "mail", "bank")
    summary = "rents a car for the weekend"

    def plan(
        self, persona: Persona, reader: WorldReader, rng: random.Random, day: int, slot: int = 0
    ) -> list[Operation]:
        car, ref = rng.choice(CARS), "R" + code(rng, 4, day, slot)
        price = rng.randint(60, 180) * 100
        pickup = at_day(day + rng.randint(2, 6), 10)
        at = stamp(day, slot)
        return [
            event(
                f"Car pickup ({ref})",
                pickup,
                plus_minutes(pickup, 30),
                "Rentio, central station",
                [persona.email],
            ),
            mail(
                "inbox",
                "reservations@rentio.example",
                persona.email,
                f"Your car reservation {ref}",
                f"A {car} is reserved for pickup at {pickup}. Total charged: {money(price)}.",
                plus_minutes(at, 4),
            ),
            *bank_tx(reader, "Checking", -price, f"Rentio car rental {ref}", plus_minutes(at, 5)),
        ]


register_skill(RentCar())
