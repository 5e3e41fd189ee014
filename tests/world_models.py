"""Swapping the world model that answers every imported service's simulated tools, for a test."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from envpipeline.compose.variants import reset_link_caches
from envpipeline.services.llm_worldmodel import install_world_model
from envpipeline.services.mcp_import import ImportedService
from envpipeline.services.registry import all_services
from envpipeline.services.worldmodel import WorldModel


@contextlib.contextmanager
def installed_world_model(model: WorldModel) -> Iterator[None]:
    """Every imported library service answered by `model` inside the block (its links derived
    again with it), then by the model each had before."""
    imported = {n: c for n, c in all_services().items() if issubclass(c, ImportedService)}
    before = {n: c.world_model for n, c in imported.items()}
    install_world_model(model)
    reset_link_caches()
    try:
        yield
    finally:
        for name, cls in imported.items():
            cls.world_model = before[name]
        reset_link_caches()
