"""One registry shape for every plug-in kind (services, task families, world skills).

Each plug-in package holds one module per plug-in; modules register on import, and the first
lookup imports every module of the package (skipping `base`, `registry` and `_private` ones). A
registry may also name a single module that registers several small plug-ins itself.
A second, different plug-in under a taken name is an error.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from typing import Generic, TypeVar

from envpipeline.errors import ConfigError

T = TypeVar("T")


class PluginRegistry(Generic[T]):
    """Plug-ins of one kind, keyed by name."""

    def __init__(self, kind: str, package: str, error: Callable[[str], Exception] = ConfigError) -> None:
        self.kind = kind
        self.package = package
        self.error = error
        self._items: dict[str, T] = {}
        self._loaded = False
        #: the items sorted by name, kept until the next registration (lookups run per tool call)
        self._sorted: dict[str, T] | None = None

    def register(self, name: str, item: T) -> T:
        """Add a plug-in; a different one under the same name is an error."""
        existing = self._items.get(name)
        if existing is not None and existing is not item:
            raise self.error(f"{self.kind} '{name}' registered twice")
        if existing is None:
            self._items[name] = item
            self._sorted = None
        return item

    def unregister(self, name: str) -> None:
        """Drop a plug-in (a test restoring the registry it found)."""
        self._items.pop(name, None)
        self._sorted = None

    def all(self) -> dict[str, T]:
        """Every plug-in by name, sorted (the package's modules are imported on first use)."""
        if not self._loaded:
            package = importlib.import_module(self.package)
            # a package's plug-in modules register on import; a plain module registers its own
            for module in pkgutil.iter_modules(getattr(package, "__path__", [])):
                if module.name not in ("base", "registry") and not module.name.startswith("_"):
                    importlib.import_module(f"{self.package}.{module.name}")
            self._loaded = True
        if self._sorted is None:
            self._sorted = dict(sorted(self._items.items()))
        return dict(self._sorted)

    def get(self, name: str) -> T:
        """One plug-in by name, with a clear error listing the known ones."""
        item = self._items.get(name) if self._loaded else None
        if item is not None:
            return item
        items = self.all()
        if name not in items:
            raise ConfigError(f"unknown {self.kind} '{name}'; known: {', '.join(items)}")
        return items[name]
