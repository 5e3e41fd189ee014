"""The one registry of services: every service module ends with `register_service(...)`."""

from __future__ import annotations

import importlib
import pkgutil

from envpipeline.errors import ConfigError, ServiceError
from envpipeline.services.base import Service

_SERVICES: dict[str, type[Service]] = {}
_LOADED = False


def register_service(service: type[Service]) -> type[Service]:
    """Add a service class to the registry; duplicate names are an error."""
    existing = _SERVICES.get(service.name)
    if existing is not None and existing is not service:
        raise ServiceError(f"service name '{service.name}' registered twice")
    if not service.tools:
        raise ServiceError(f"service '{service.name}' has no tools")
    _SERVICES[service.name] = service
    return service


def _load_library() -> None:
    global _LOADED
    if _LOADED:
        return
    import envpipeline.services.library as library

    for module in pkgutil.iter_modules(library.__path__):
        importlib.import_module(f"{library.__name__}.{module.name}")
    _LOADED = True


def all_services() -> dict[str, type[Service]]:
    """Every registered service by name, sorted (the built-in library is loaded on first use)."""
    _load_library()
    return dict(sorted(_SERVICES.items()))


def get_service(name: str) -> type[Service]:
    """One service class by name, with a clear error for an unknown name."""
    services = all_services()
    if name not in services:
        raise ConfigError(f"unknown service '{name}'; known: {', '.join(services)}")
    return services[name]
