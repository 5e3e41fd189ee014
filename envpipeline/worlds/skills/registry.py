"""The one registry of world-synthesis skills; skill modules register on import."""

from __future__ import annotations

import importlib
import pkgutil

from envpipeline.errors import ConfigError
from envpipeline.worlds.skills.base import Skill

_SKILLS: dict[str, Skill] = {}
_LOADED = False
_NOT_SKILLS = {"base", "registry"}


def register_skill(skill: Skill) -> Skill:
    """Add a skill; a second skill with the same name is an error."""
    if skill.name in _SKILLS and _SKILLS[skill.name] is not skill:
        raise ConfigError(f"world skill '{skill.name}' registered twice")
    _SKILLS[skill.name] = skill
    return skill


def all_skills() -> dict[str, Skill]:
    """Every registered skill by name (built-in modules are imported on first use)."""
    global _LOADED
    if not _LOADED:
        import envpipeline.worlds.skills as package

        for module in pkgutil.iter_modules(package.__path__):
            if module.name not in _NOT_SKILLS and not module.name.startswith("_"):
                importlib.import_module(f"{package.__name__}.{module.name}")
        _LOADED = True
    return dict(sorted(_SKILLS.items()))


def get_skill(name: str) -> Skill:
    """One skill by name, with a clear error listing the known ones."""
    skills = all_skills()
    if name not in skills:
        raise ConfigError(f"unknown world skill '{name}'; known: {', '.join(skills)}")
    return skills[name]
