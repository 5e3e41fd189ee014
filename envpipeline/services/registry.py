"""The one registry of services: every service module ends with `register_service(...)`."""

from __future__ import annotations

from typing import Any, TypeVar

from envpipeline.errors import ServiceError
from envpipeline.plugins import PluginRegistry
from envpipeline.services.base import Service

_REGISTRY: PluginRegistry[type[Service[Any]]] = PluginRegistry(
    "service", "envpipeline.services.library", error=ServiceError
)

ServiceClass = TypeVar("ServiceClass", bound=type[Service[Any]])


def register_service(service: ServiceClass) -> ServiceClass:
    """Add a service class to the registry; duplicate names and tool-less services are errors.

    Args:
        service: the `Service` subclass (with its tools and state model).

    Returns:
        The same class, so a module can write ``X = register_service(...)``.

    Raises:
        ServiceError: the service has no tools or no state model, or its name is taken.
    """
    if not service.tools:
        raise ServiceError(f"service '{service.name}' has no tools")
    if not hasattr(service, "state_model"):
        raise ServiceError(f"service '{service.name}' declares no state model (`Service[State]`)")
    _REGISTRY.register(service.name, service)
    return service


def all_services() -> dict[str, type[Service[Any]]]:
    """Every registered service by name, sorted (the built-in library is loaded on first use)."""
    return _REGISTRY.all()


def get_service(name: str) -> type[Service[Any]]:
    """One service class by name, with a clear error for an unknown name."""
    return _REGISTRY.get(name)
