"""The one row codec: records survive the lake round trip, and a row that cannot be decoded says so."""

from __future__ import annotations

import json
from typing import Literal

import pytest
from pydantic import BaseModel

from envpipeline.compose.author import ComposeConfig
from envpipeline.compose.pipeline import compose_task
from envpipeline.errors import StoreError
from envpipeline.models.selection import Decision
from envpipeline.store.lake import Lake, Lineage
from envpipeline.store.rows import RowCodec
from envpipeline.store.tables import COMPOSED_TASKS, SELECTOR_DECISIONS


class Sample(BaseModel):
    name: str
    kind: Literal["a", "b"]
    count: int | None
    tags: list[str]
    meta: dict[str, int]


def test_scalars_become_columns_and_nested_values_json():
    codec = RowCodec(Sample)
    row = codec.encode(Sample(name="x", kind="a", count=None, tags=["t"], meta={"k": 1}))
    assert row == {"name": "x", "kind": "a", "count": None, "tags": '["t"]', "meta": '{"k":1}'}
    assert codec.decode({**row, "_run_id": "r", "derived": 3}) == codec.decode(row)


def test_a_composed_task_survives_a_real_lake_round_trip(tmp_path):
    record = compose_task(3, ComposeConfig(), seed_key="batch-0001")
    lake = Lake(tmp_path)
    lake.write_partition(
        "verified_composed_tasks", "batch-0001", [COMPOSED_TASKS.encode(record)], Lineage("r", "v")
    )
    [row] = lake.read("verified_composed_tasks", "batch-0001")
    assert row["n_criteria"] == len(record.criteria) and row["rng_seed"] == 3
    assert COMPOSED_TASKS.decode(row) == record
    assert json.loads(row["environment"])["kind"] == "compose"


def test_a_decision_round_trips_and_a_broken_row_is_a_store_error():
    decision = Decision(
        seed_id="s", projection="increase_complexity", direction="in_depth", action_variant="increase-depth",
        pass_rate=0.75, reward_band="high", projected_pass_rate=0.5, frontier_score=1.0, backend="scip",
        required_skills=["json"],
    )  # fmt: skip
    row = SELECTOR_DECISIONS.encode(decision)
    assert SELECTOR_DECISIONS.decode(row) == decision
    with pytest.raises(StoreError, match="Decision row cannot be decoded"):
        SELECTOR_DECISIONS.decode({**row, "required_skills": "not json"})
    with pytest.raises(StoreError, match="cannot be decoded"):
        RowCodec(Sample, embed="record").decode({"name": "x"})
