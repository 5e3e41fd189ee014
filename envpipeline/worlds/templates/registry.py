"""The one registry of cross-interface task templates; template modules register on import."""

from __future__ import annotations

from envpipeline.plugins import PluginRegistry
from envpipeline.worlds.templates.base import Template

_REGISTRY: PluginRegistry[Template] = PluginRegistry("task template", "envpipeline.worlds.templates")


def register_template(template: Template) -> Template:
    """Add a template; a second template with the same name is an error."""
    return _REGISTRY.register(template.name, template)


def all_templates() -> dict[str, Template]:
    """Every registered template by name, sorted (built-in modules are imported on first use)."""
    return _REGISTRY.all()


def get_template(name: str) -> Template:
    """One template by name, with a clear error listing the known ones."""
    return _REGISTRY.get(name)
