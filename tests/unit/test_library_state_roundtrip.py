"""Every library service's generated state survives a dump and reload unchanged.

Composed tasks store the initial state as JSON and rebuild the environment from it; an imported
record with a nested object whose property is not a Python name (``from``) once dumped under its
Python name and failed to reload.
"""

from __future__ import annotations

import pytest

from envpipeline.services import vocab
from envpipeline.services.base import dump_state
from envpipeline.services.registry import all_services


@pytest.mark.parametrize("name", sorted(all_services()))
def test_generated_state_reloads_from_its_dump(name: str) -> None:
    cls = all_services()[name]
    state = cls.generate_state(vocab.seeded(f"roundtrip:{name}"))
    dumped = dump_state(state)
    reloaded = cls.state_model.model_validate(dumped)
    assert dump_state(reloaded) == dumped
