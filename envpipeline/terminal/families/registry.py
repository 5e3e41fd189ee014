"""The one registry of task families; modules in this package register on import."""

from __future__ import annotations

import importlib
import pkgutil

from envpipeline.errors import ConfigError
from envpipeline.terminal.families.base import TaskFamily

_FAMILIES: dict[str, TaskFamily] = {}
_LOADED = False
_NOT_FAMILIES = {"base", "registry"}


def register_family(family: TaskFamily) -> TaskFamily:
    """Add a family; duplicate names are an error."""
    if family.name in _FAMILIES and _FAMILIES[family.name] is not family:
        raise ConfigError(f"task family '{family.name}' registered twice")
    _FAMILIES[family.name] = family
    return family


def all_families() -> dict[str, TaskFamily]:
    """Every registered family by name (built-in modules are imported on first use)."""
    global _LOADED
    if not _LOADED:
        import envpipeline.terminal.families as package

        for module in pkgutil.iter_modules(package.__path__):
            if module.name not in _NOT_FAMILIES and not module.name.startswith("_"):
                importlib.import_module(f"{package.__name__}.{module.name}")
        _LOADED = True
    return dict(sorted(_FAMILIES.items()))


def get_family(name: str) -> TaskFamily:
    """One family by name, with a clear error listing the known ones."""
    families = all_families()
    if name not in families:
        raise ConfigError(f"unknown task family '{name}'; known: {', '.join(families)}")
    return families[name]
