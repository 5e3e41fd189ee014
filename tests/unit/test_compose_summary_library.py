"""The compose summary against the library a lake stored: the same figures, no library built."""

from __future__ import annotations

from pathlib import Path

import pytest

from envpipeline.compose import recording
from envpipeline.compose.author import ComposeConfig
from envpipeline.compose.pipeline import compose_task
from envpipeline.compose.recording import LibraryShape, record_library, summarize
from envpipeline.store.lake import Lake


def test_the_summary_from_the_stored_library_matches_the_built_one_without_building_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = [compose_task(seed, ComposeConfig(), "summary-test") for seed in range(40)]
    lake = Lake(tmp_path)
    record_library(lake, "run-1")
    built, shape = summarize(records), LibraryShape.built()
    assert built["simulated_tool_share"] > 0 and shape.simulated  # the figures below are not zero

    def no_build() -> None:
        raise AssertionError("the library was built")

    monkeypatch.setattr(recording, "all_services", no_build)
    monkeypatch.setattr(recording, "simulated_tool_names", no_build)
    stored = LibraryShape.stored(lake)
    assert stored == shape
    assert summarize(records, stored) == built


def test_a_lake_without_a_library_has_no_stored_shape(tmp_path: Path) -> None:
    assert LibraryShape.stored(Lake(tmp_path)) is None
