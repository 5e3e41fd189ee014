"""The one registry of world-synthesis skills; skill modules register on import."""

from __future__ import annotations

from envpipeline.plugins import PluginRegistry
from envpipeline.worlds.skills.base import Skill

_REGISTRY: PluginRegistry[Skill] = PluginRegistry("world skill", "envpipeline.worlds.skills")


def register_skill(skill: Skill) -> Skill:
    """Add a skill; a second skill with the same name is an error."""
    return _REGISTRY.register(skill.name, skill)


def all_skills() -> dict[str, Skill]:
    """Every registered skill by name (built-in modules are imported on first use)."""
    return _REGISTRY.all()


def get_skill(name: str) -> Skill:
    """One skill by name, with a clear error listing the known ones."""
    return _REGISTRY.get(name)
