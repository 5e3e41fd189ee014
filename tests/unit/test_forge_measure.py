"""Rewrites move edge cases on the action's axis; accepted bundles' pass rates are measured and kept."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from envpipeline.forge.ledger import LEDGER_NAME, calibrated_config, read_ledger
from envpipeline.forge.pipeline import forge_run
from envpipeline.forge.policy import ScriptedTerminalPolicy
from envpipeline.forge.variants import write_solution
from envpipeline.models.selection import Decision
from envpipeline.sandbox.base import Limits
from envpipeline.synth.procedural import ProceduralSynthesizer, move_edge_cases
from envpipeline.terminal.bundle import read_bundle
from envpipeline.terminal.families.registry import get_family
from envpipeline.terminal.seeds import materialize_seed
from envpipeline.terminal.trial import run_trial

FAMILY = get_family("json-transform")
AXIS = FAMILY.edge_case_axes
ACTIONS = [
    (p, d)
    for p in ("increase_complexity", "reduce_complexity", "diversify_frontier")
    for d in ("in_depth", "in_breadth")
]


def decision(key, projection, direction):
    return Decision(
        seed_id=key,
        projection=projection,
        direction=direction,
        action_variant=f"{projection}/{direction}",
        pass_rate=0.5,
        reward_band="frontier",
        projected_pass_rate=0.5,
        frontier_score=1.0,
        backend="enumerate",
    )


def edge_cases(bundle_dir: Path) -> set[str]:
    recorded = read_bundle(bundle_dir).config.metadata.envpipeline["edge_cases"]
    return {str(v) for v in recorded} if isinstance(recorded, list) else set()


@pytest.fixture(scope="module")
def seeds(tmp_path_factory):
    root = tmp_path_factory.mktemp("seeds")
    keys = [f"fam-json-transform-medium-{i}" for i in range(6)]
    return {k: Path(materialize_seed(k, root)["bundle_path"]) for k in keys}


def test_rewrites_add_or_remove_one_edge_case_of_the_action_axis(seeds, tmp_path):
    moved = {"added": 0, "removed": 0}
    for key, seed_dir in seeds.items():
        before = edge_cases(seed_dir)
        for projection, direction in ACTIONS:
            axis = "depth" if direction == "in_depth" else "breadth"
            result = ProceduralSynthesizer().synthesize(
                seed_dir,
                decision(key, projection, direction),
                out_dir=tmp_path / f"{key}-{projection}-{direction}",
            )
            assert result.bundle_dir is not None and result.output is not None
            after, meta = edge_cases(result.bundle_dir), result.output.metadata
            assert sorted(after) == meta["edge_cases"]
            if projection == "diversify_frontier":
                assert after == before and meta["edge_case_added"] is meta["edge_case_removed"] is None
            elif projection == "increase_complexity":
                pool = set(FAMILY.variants) - before
                own = {v for v in pool if AXIS[v] == axis}
                assert after - before == {meta["edge_case_added"]} and before <= after
                assert meta["edge_case_added"] in (own or pool)
                moved["added"] += 1
            else:
                own = {v for v in before if AXIS[v] == axis}
                if before:
                    assert before - after == {meta["edge_case_removed"]} and after <= before
                    assert meta["edge_case_removed"] in (own or before)
                    moved["removed"] += 1
                else:
                    assert after == set() and meta["edge_case_removed"] is None
    assert moved["added"] >= 10 and moved["removed"] >= 6


def test_edge_case_moves_fall_back_to_the_other_axis_and_stop_at_the_ends():
    rng = random.Random(0)
    depth = frozenset(v for v in FAMILY.variants if AXIS[v] == "depth")
    added = move_edge_cases(FAMILY, depth, "increase_complexity", "in_depth", rng)[1]
    assert added is not None and AXIS[added] == "breadth"
    removed = move_edge_cases(FAMILY, depth, "reduce_complexity", "in_breadth", rng)[2]
    assert removed in depth
    full = frozenset(FAMILY.variants)
    assert move_edge_cases(FAMILY, full, "increase_complexity", "in_breadth", rng) == (full, None, None)
    assert move_edge_cases(FAMILY, frozenset(), "reduce_complexity", "in_depth", rng) == (
        frozenset(),
        None,
        None,
    )


def test_the_added_edge_case_fails_the_solver_that_misses_it(seeds, tmp_path, local_sandbox):
    key = next(k for k, d in seeds.items() if "top_level_only" not in edge_cases(d))
    result = ProceduralSynthesizer().synthesize(
        seeds[key], decision(key, "increase_complexity", "in_depth"), out_dir=tmp_path / "harder"
    )
    assert result.bundle_dir is not None and result.output is not None
    added = result.output.metadata["edge_case_added"]
    assert AXIS[added] == "depth"
    task = FAMILY.generate(0, FAMILY.knobs_for("medium"), "medium")
    partial = write_solution(task.solution_missing({added}), tmp_path / "partial")
    rewards = [
        run_trial(local_sandbox, read_bundle(d), "partial", Limits(), solution_dir=partial).reward
        for d in (seeds[key], result.bundle_dir)
    ]
    assert rewards == [1.0, 0.0]


def test_forge_measures_accepted_bundles_and_the_next_run_calibrates_on_them(seeds, tmp_path, local_sandbox):
    keys = ["fam-json-transform-medium-0", "fam-json-transform-medium-1"]
    out = tmp_path / "forge"
    policy = ScriptedTerminalPolicy(skill=0.8)
    summary = forge_run(
        keys, out, local_sandbox, ProceduralSynthesizer(), target=2, policy=policy, rollouts=2
    )
    assert summary["accepted"] == 2 and summary["calibration"] == {}
    report = json.loads((out / "report.json").read_text())
    for bundle in report["accepted_bundles"]:
        assert 0.0 <= bundle["measured_pass_rate"] <= 1.0 and bundle["projected_pass_rate"] is not None
    measured = [json.loads(line) for line in (out / "measured_rollouts.jsonl").read_text().splitlines()]
    assert len(measured) == 4  # K = 2 rollouts of each accepted bundle
    ledger = read_ledger(out / LEDGER_NAME)
    assert [o.task_name for o in ledger] == [b["task_name"] for b in report["accepted_bundles"]]
    assert [o.measured_pass_rate for o in ledger] == [
        b["measured_pass_rate"] for b in report["accepted_bundles"]
    ]
    assert {o.family for o in ledger} == {"json-transform"} and all(o.rollouts == 2 for o in ledger)
    assert sum(v["bundles"] for v in summary["difficulty"].values()) == 2
    again = forge_run(
        keys[:1], out, local_sandbox, ProceduralSynthesizer(), target=1, policy=policy, rollouts=1
    )
    fitted = {k: v for k, v in again["calibration"].items() if v["observations"]}
    assert sum(v["observations"] for k, v in fitted.items() if "@" not in k) == 2
    assert calibrated_config(read_ledger(out / LEDGER_NAME)).calibration is not None
    assert len(read_ledger(out / LEDGER_NAME)) == 3
