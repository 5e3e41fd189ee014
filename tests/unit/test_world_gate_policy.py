"""The WildAWM solvability and difficulty gates count the successes of the policy they are given."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envpipeline.errors import ConfigError
from envpipeline.policies.registry import PolicyConfig, build_policy
from envpipeline.worlds.build import build_world
from envpipeline.worlds.gates import GateConfig, gate_task
from envpipeline.worlds.personas import generate_persona
from envpipeline.worlds.tasks import generate_task


@pytest.fixture(scope="module")
def day(tmp_path_factory) -> Path:
    persona = generate_persona(0, 1)
    build = build_world(persona, 3, tmp_path_factory.mktemp("worlds"), live_health=False, replay=False)
    assert build.passed
    return Path(build.root) / "day-02"


def _gates(record) -> dict:
    return {g.name: g for g in record.gates}


def test_a_flawless_policy_makes_the_task_easy_and_a_hopeless_one_unsolvable(day, tmp_path):
    task = generate_task(day, 0)
    config = GateConfig(red_team=False)
    flawless = gate_task(
        task, day, tmp_path / "a", config=config, policy=build_policy(PolicyConfig(error_rate=0.0))
    )
    gates = _gates(flawless)
    assert gates["solvability"].passed and gates["solvability"].evidence["successes"] == 6
    assert gates["difficulty"].evidence == {"unhinted_successes": 3, "label": "easy"}
    assert all(r.criteria and all(r.criteria.values()) for r in flawless.rollouts)
    hopeless = gate_task(
        task, day, tmp_path / "b", config=config, policy=build_policy(PolicyConfig(error_rate=1.0))
    )
    gates = _gates(hopeless)
    assert not gates["solvability"].passed and gates["difficulty"].evidence["label"] == "hard"
    assert hopeless.status == "rejected"


def test_the_gates_refuse_a_policy_that_leaves_no_final_state(day, tmp_path):
    task = generate_task(day, 0)
    table = tmp_path / "t.jsonl"
    table.write_text("".join(json.dumps({"task_id": task.task_id, "reward": 1}) + "\n" for _ in range(6)))
    recorded = build_policy(PolicyConfig(kind="recorded", rollouts_table=str(table)))
    with pytest.raises(ConfigError, match="left no final state"):
        gate_task(task, day, tmp_path / "g", config=GateConfig(red_team=False), policy=recorded)
