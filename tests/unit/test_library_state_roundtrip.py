"""Every library service's generated state survives a dump and reload unchanged, and a copy.

Composed tasks store the initial state as JSON and rebuild the environment from it; an imported
record with a nested object whose property is not a Python name (``from``) once dumped under its
Python name and failed to reload.
"""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from envpipeline.services import vocab
from envpipeline.services.base import copy_state, dump_state
from envpipeline.services.registry import all_services


@pytest.mark.parametrize("name", sorted(all_services()))
def test_generated_state_reloads_from_its_dump(name: str) -> None:
    cls = all_services()[name]
    state = cls.generate_state(vocab.seeded(f"roundtrip:{name}"))
    dumped = dump_state(state)
    reloaded = cls.state_model.model_validate(dumped)
    assert dump_state(reloaded) == dumped


@pytest.mark.parametrize("name", sorted(all_services()))
def test_a_copied_state_equals_a_deep_copy_and_shares_nothing_mutable(name: str) -> None:
    # composing copies a service's state before each planting it may take back (`copy_state`)
    state = all_services()[name].generate_state(vocab.seeded(f"copy:{name}"))
    before = dump_state(state)
    copied = copy_state(state)
    deep = state.model_copy(deep=True)
    assert copied == deep and copied.model_fields_set == deep.model_fields_set
    assert dump_state(copied) == before
    for collection in copied.__dict__.values():
        if not isinstance(collection, dict):
            continue
        for record in collection.values():
            for value in getattr(record, "__dict__", {}).values():
                if isinstance(value, list):
                    value.append("changed")
                elif isinstance(value, dict):
                    value["changed"] = 1
        collection["changed"] = None
    assert dump_state(state) == before  # the original is untouched


def test_copy_state_deep_copies_what_is_not_flat() -> None:
    class Tag(BaseModel):
        labels: list[str]

    class Note(BaseModel):
        tag: Tag  # a nested model: not a flat record

    class Notes(BaseModel):
        notes: dict[str, Note]

    state = Notes(notes={"n1": Note(tag=Tag(labels=["a"]))})
    copied = copy_state(state)
    copied.notes["n1"].tag.labels.append("b")
    assert state.notes["n1"].tag.labels == ["a"]
