"""sign_up_service: create an account on a favourite site (new user row) and get the welcome email."""

from __future__ import annotations

import random

from envpipeline.models.world import Operation, Persona
from envpipeline.worlds.schema import password_hash, stamp
from envpipeline.worlds.skills.base import Skill, ins, mail
from envpipeline.worlds.skills.registry import register_skill
from envpipeline.worlds.state import WorldReader


def site_username(persona: Persona, site: str) -> str:
    """The username used on `site`."""
    return f"{persona.username}@{site}"


class SignUpService(Skill):
    name = "sign_up_service"
    apps = ("accounts", "mail")
    summary = "signs up for a favourite site"

    def _sites(self, persona: Persona, reader: WorldReader) -> list[str]:
        users = {r["username"] for r in reader.query("accounts", "SELECT username FROM users")}
        return [s for s in persona.favourite_sites if site_username(persona, s) not in users]

    def available(self, persona: Persona, reader: WorldReader) -> bool:
        return bool(self._sites(persona, reader))

    def plan(
        self, persona: Persona, reader: WorldReader, rng: random.Random, day: int, slot: int = 0
    ) -> list[Operation]:
        site = rng.choice(self._sites(persona, reader))
        return [
            ins(
                "accounts",
                "users",
                username=site_username(persona, site),
                password_hash=password_hash(f"{persona.password}@{site}"),
            ),
            mail(
                "inbox",
                f"welcome@{site}",
                persona.email,
                f"Welcome to {site}",
                f"Your account {site_username(persona, site)} is ready.",
                stamp(day, slot, 2),
            ),
        ]


register_skill(SignUpService())
