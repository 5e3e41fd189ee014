"""update_todo: tick off the first open item of todo.txt and add a new one."""

from __future__ import annotations

import random

from envpipeline.models.world import Operation, Persona
from envpipeline.worlds.skills.base import Skill, write
from envpipeline.worlds.skills.registry import register_skill
from envpipeline.worlds.state import WorldReader

ITEMS = [
    "call the bank",
    "renew the insurance",
    "back up the laptop",
    "buy a birthday gift",
    "book a dentist appointment",
    "clean the inbox",
    "update the CV",
    "water the plants",
]


class UpdateTodo(Skill):
    name = "update_todo"
    apps = ("files",)
    summary = "updates the to-do list"

    def plan(
        self, persona: Persona, reader: WorldReader, rng: random.Random, day: int, slot: int = 0
    ) -> list[Operation]:
        lines = reader.read_file("todo.txt").splitlines() if reader.exists("todo.txt") else ["# TODO"]
        for i, line in enumerate(lines):
            if line.startswith("- [ ]"):
                lines[i] = "- [x]" + line[5:]
                break
        lines.append(f"- [ ] {rng.choice(ITEMS)} (added day {day})")
        return [write("todo.txt", "\n".join(lines) + "\n")]


register_skill(UpdateTodo())
