"""The one registry of task families; modules in this package register on import."""

from __future__ import annotations

from typing import Any

from envpipeline.plugins import PluginRegistry
from envpipeline.terminal.families.base import TaskFamily

_REGISTRY: PluginRegistry[TaskFamily[Any]] = PluginRegistry("task family", "envpipeline.terminal.families")


def register_family(family: TaskFamily[Any]) -> TaskFamily[Any]:
    """Add a family; duplicate names are an error."""
    return _REGISTRY.register(family.name, family)


def all_families() -> dict[str, TaskFamily[Any]]:
    """Every registered family by name (built-in modules are imported on first use)."""
    return _REGISTRY.all()


def get_family(name: str) -> TaskFamily[Any]:
    """One family by name, with a clear error listing the known ones."""
    return _REGISTRY.get(name)
