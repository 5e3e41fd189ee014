"""Event-creation skills: one module per skill, each registering itself (see registry.py)."""

from envpipeline.worlds.skills.base import Skill
from envpipeline.worlds.skills.registry import all_skills, get_skill, register_skill

__all__ = ["Skill", "all_skills", "get_skill", "register_skill"]
