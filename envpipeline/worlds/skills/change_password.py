"""change_password: the main account password changes (fixed-salt hash) and a security email arrives.

The new password is derivable: `new_password(persona, day)`.
"""

from __future__ import annotations

import random

from envpipeline.models.world import Operation, Persona
from envpipeline.worlds.schema import password_hash, stamp
from envpipeline.worlds.skills.base import Skill, mail, upd
from envpipeline.worlds.skills.registry import register_skill
from envpipeline.worlds.state import WorldReader


def new_password(persona: Persona, day: int) -> str:
    """The password a change on `day` sets."""
    return f"{persona.password}-d{day:02d}"


class ChangePassword(Skill):
    name = "change_password"
    apps = ("accounts", "mail")
    summary = "changes the account password"

    def plan(
        self, persona: Persona, reader: WorldReader, rng: random.Random, day: int, slot: int = 0
    ) -> list[Operation]:
        return [
            upd(
                "accounts",
                "users",
                {"username": persona.username},
                password_hash=password_hash(new_password(persona, day)),
            ),
            mail(
                "inbox",
                "security@accounts.example",
                persona.email,
                "Your password was changed",
                f"The password of {persona.username} was changed on {stamp(day, slot)[:10]}. "
                "If this was not you, contact support.",
                stamp(day, slot, 1),
            ),
        ]


register_skill(ChangePassword())
