"""Partial credit pays for what a rollout brought about: doing nothing passes what the initial state
already met (state_preserved, a kept record) and must earn nothing, in every reward a trainer sees."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from envpipeline.export.rewards import score_group
from envpipeline.export.unified import accepted_task
from envpipeline.export.world_harbor import WORLD_TEST_SH
from envpipeline.models.task import TaskRecord
from envpipeline.rewards.held_at_start import check_held_mode, held_checklist, held_rewards
from envpipeline.rewards.modes import PassMatrix, get_reward_mode, reward_modes


@pytest.mark.parametrize("name", sorted(reward_modes()))
def test_every_reward_mode_pays_nothing_for_what_held_at_the_start(name: str) -> None:
    assert check_held_mode(get_reward_mode(name)) == []


def test_the_contract_rejects_a_mode_that_pays_for_nothing() -> None:
    def flat(matrix: PassMatrix, weights, floor: float, scale: float) -> list[float]:
        return [1.0 if all(row) else 0.5 for row in matrix]

    assert any("scores 0.5, not 0.0" in p for p in check_held_mode(flat))


def test_held_criteria_are_conditions_not_credit() -> None:
    checklist = get_reward_mode("checklist")
    held = [True, False, False, False]
    rows = [
        [True, False, False, False],  # nothing done: only what held at the start
        [True, True, False, False],  # one of three
        [False, True, True, True],  # everything asked, but what had to stay was broken
        [True, True, True, True],
    ]
    assert held_rewards(checklist, rows, None, held, 0.0, 1.0) == pytest.approx([0.0, 1 / 3, 0.0, 1.0])
    before = checklist(rows, None, 0.0, 1.0)
    assert before[0] == 0.25 and before[2] == 0.75  # what a share of all criteria paid
    cfrr = score_group(rows, held_at_start=held).rewards
    assert cfrr[0] == 0.0 and cfrr[2] == 0.0 and cfrr[3] == 1.0 and 0 < cfrr[1] < 1
    with pytest.raises(ValueError, match="one flag per criterion"):
        score_group(rows, held_at_start=[True])


def test_a_world_checklist_counts_the_items_to_bring_about() -> None:
    items = [(2.0, ["c1"]), (1.0, ["c2"]), (1.0, ["c3"])]
    held = ["c3"]
    assert held_checklist(items, {"c1": False, "c2": False, "c3": True}, held) == 0.0
    assert held_checklist(items, {"c1": True, "c2": False, "c3": True}, held) == pytest.approx(0.6667)
    assert held_checklist(items, {"c1": True, "c2": True, "c3": False}, held) == 0.0
    assert held_checklist(items, {"c1": True, "c2": True, "c3": True}, held) == 1.0


def test_doing_nothing_earns_nothing_on_accepted_composed_tasks(accepted: list[TaskRecord]) -> None:
    """Before, the nop policy earned a mean checklist credit of 0.16 (up to 0.29) on every one."""
    for task in accepted:
        gate = next(g for g in task.gates if g.name == "red_team")
        nop = gate.evidence["policies"]["nop"]
        assert nop["checklist"] == 0.0 and nop["cfrr"] == 0.0, task.task_id
        rubric = accepted_task(task).rubric()
        held = {c.kind for c in rubric.criteria if c.held_at_start}
        assert "state_preserved" in held, task.task_id
        assert not any(c.held_at_start for c in rubric.criteria if c.kind == "final_answer")


def test_the_harbor_world_verifier_pays_nothing_for_the_initial_world(tmp_path: Path) -> None:
    """The scoring step of the exported test.sh, on a checklist whose c3 is state_preserved."""
    script = re.search(r"<<'PY'.*?\n(.*?)\nPY\n", WORLD_TEST_SH, re.S)
    assert script is not None
    checklist = tmp_path / "checklist.json"
    checklist.write_text(
        json.dumps(
            {
                "criteria": ["c1", "c2", "c3"],
                "checklist": [
                    {"id": f"k{i}", "weight": w, "criteria": [c]}
                    for i, (c, w) in enumerate([("c1", 2.0), ("c2", 1.0), ("c3", 1.0)])
                ],
                "held_at_start": ["c3"],
            }
        )
    )
    code = script.group(1).replace("/tests/checklist.json", str(checklist))

    def score(passed: str) -> dict:
        run = subprocess.run([sys.executable, "-I", "-", passed], input=code, capture_output=True, text=True)
        return json.loads(run.stdout)

    assert score("c3") == {"reward": 0, "checklist": 0.0}
    assert score("c1 c3") == {"reward": 0, "checklist": 0.6667}
    assert score("c1 c2") == {"reward": 0, "checklist": 0.0}
    assert score("c1 c2 c3") == {"reward": 1, "checklist": 1.0}
