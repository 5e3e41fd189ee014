"""The one registry of services: every service module ends with `register_service(...)`."""

from __future__ import annotations

from envpipeline.errors import ServiceError
from envpipeline.plugins import PluginRegistry
from envpipeline.services.base import Service

_REGISTRY: PluginRegistry[type[Service]] = PluginRegistry(
    "service", "envpipeline.services.library", error=ServiceError
)


def register_service(service: type[Service]) -> type[Service]:
    """Add a service class to the registry; duplicate names and tool-less services are errors."""
    if not service.tools:
        raise ServiceError(f"service '{service.name}' has no tools")
    return _REGISTRY.register(service.name, service)


def all_services() -> dict[str, type[Service]]:
    """Every registered service by name, sorted (the built-in library is loaded on first use)."""
    return _REGISTRY.all()


def get_service(name: str) -> type[Service]:
    """One service class by name, with a clear error for an unknown name."""
    return _REGISTRY.get(name)
