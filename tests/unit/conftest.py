"""Shared fixtures of the unit tests: one composer config and a batch of composed tasks."""

from __future__ import annotations

import pytest

from envpipeline.compose.author import ComposeConfig
from envpipeline.compose.pipeline import compose_task
from envpipeline.models.task import TaskRecord
from envpipeline.services.registry import all_services

#: Seeds the composition tests draw from.
SEEDS = range(60)

#: A smaller composition for a library too small for the default 5 services + 5 distractors.
SMALL_CONFIG = ComposeConfig(services=3, distractors=2, min_actions=2, min_action_services=2)


def pick_config() -> ComposeConfig:
    """The default config when the library can supply it, else the small one."""
    default = ComposeConfig()
    if len(all_services()) >= default.services + default.distractors:
        return default
    return SMALL_CONFIG


@pytest.fixture(scope="session")
def compose_config() -> ComposeConfig:
    return pick_config()


@pytest.fixture(scope="session")
def composed(compose_config: ComposeConfig) -> list[TaskRecord]:
    """Every candidate composed from SEEDS, accepted or rejected."""
    return [compose_task(seed, compose_config) for seed in SEEDS]


@pytest.fixture(scope="session")
def accepted(composed: list[TaskRecord]) -> list[TaskRecord]:
    tasks = [r for r in composed if r.status == "accepted"]
    assert tasks, "no seed in 0..59 produced an accepted task"
    return tasks
