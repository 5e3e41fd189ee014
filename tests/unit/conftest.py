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


@pytest.fixture(scope="session")
def whole_library() -> list[TaskRecord]:
    """Accepted whole-library tasks of seeds 0..23 (imported services, simulated tools among them)."""
    config = ComposeConfig(library_scope="all")
    records = [compose_task(seed, config, "scope-all") for seed in range(24)]
    tasks = [r for r in records if r.status == "accepted"]
    assert tasks, "no whole-library seed in 0..23 produced an accepted task"
    return tasks


@pytest.fixture(scope="session")
def scanned(whole_library: list[TaskRecord]) -> list[TaskRecord]:
    """Accepted whole-library tasks whose reference picks a record out of a scanned listing (a
    listing call not given the value that selects the record: `mcp_list_links`)."""
    tasks = [r for r in whole_library if scanned_selectors(r)]
    assert tasks, "no accepted whole-library task in seeds 0..23 scans a listing"
    return tasks


def scanned_selectors(task: TaskRecord) -> list[tuple[int, list]]:
    """(listing step, binding path) of each selector whose value the listing call was not given."""
    paths = [(b.step, b.path) for s in task.reference_solution for b in s.bindings.values()]
    final = task.metadata.get("final_reveal")
    if final:
        paths.append((final["step"], final["path"]))
    found = []
    for step, path in paths:
        given = {str(v) for v in task.reference_solution[step].arguments.values()}
        keys = [k for k in path if isinstance(k, dict)]
        if any(str(v) not in given for key in keys for v in key.values()) and (step, path) not in found:
            found.append((step, path))
    return found
