"""Envs-FORGE pass rates, procedural synthesis and the acceptance loop, on real bundles."""

import json
from pathlib import Path

import pytest

from envpipeline.errors import ConfigError
from envpipeline.forge.knobs import difficulty_of, knob_ranges, move_knobs
from envpipeline.forge.loop import ForgeBudget, gold_validator, run_forge
from envpipeline.forge.passrates import estimate_pass_rate, pass_rates_from_rollouts
from envpipeline.forge.policy import ScriptedTerminalPolicy
from envpipeline.models.selection import Decision
from envpipeline.synth.procedural import ProceduralSynthesizer
from envpipeline.terminal.bundle import read_bundle
from envpipeline.terminal.families.registry import get_family
from envpipeline.terminal.seeds import materialize_seed

KEY = "fam-csv-json-merge-medium-0"


@pytest.fixture(scope="module")
def seed_dir(tmp_path_factory):
    return Path(materialize_seed(KEY, tmp_path_factory.mktemp("seeds"))["bundle_path"])


def decision(projection="increase_complexity", direction="in_depth"):
    return Decision(
        seed_id=KEY,
        projection=projection,
        direction=direction,
        action_variant=f"{projection}/{direction}",
        pass_rate=0.8,
        reward_band="easy",
        projected_pass_rate=0.55,
        frontier_score=0.97,
        backend="scip",
    )


def test_knob_moves_follow_the_action_axis_and_stay_in_range():
    family = get_family("log-processing")
    knobs = family.knobs_for("medium").model_dump()
    ranges = knob_ranges(family)
    import random

    harder = move_knobs(family, knobs, "increase_complexity", "in_depth", random.Random(0))
    depth = [n for n, (_, _, axis) in ranges.items() if axis == "depth"]
    breadth = [n for n, (_, _, axis) in ranges.items() if axis == "breadth"]
    assert any(harder[n] > knobs[n] for n in depth) and all(harder[n] == knobs[n] for n in breadth)
    easier = move_knobs(family, knobs, "reduce_complexity", "in_breadth", random.Random(0))
    assert any(easier[n] < knobs[n] for n in breadth) and all(easier[n] == knobs[n] for n in depth)
    assert difficulty_of(family, harder) > difficulty_of(family, knobs) > difficulty_of(family, easier)
    for moved in (harder, easier):
        assert all(ranges[n][0] <= v <= ranges[n][1] for n, v in moved.items())


def test_pass_rate_comes_from_executed_rollouts(seed_dir, local_sandbox):
    strong = ScriptedTerminalPolicy(skill=1.0)
    rate, rows = estimate_pass_rate(KEY, seed_dir, strong, local_sandbox, k=2)
    assert rate.pass_rate == 1.0 and len(rows) == 2 and all(r["submission"] == "oracle" for r in rows)
    weak = ScriptedTerminalPolicy(skill=0.0, give_up=0.0)
    rate, rows = estimate_pass_rate(KEY, seed_dir, weak, local_sandbox, k=3)
    assert rate.pass_rate == 0.0
    assert {r["submission"] for r in rows} <= set(get_family("csv-json-merge").variants)
    assert all(r["verdict"] == "ok" and r["backend"] == "local" for r in rows)
    assert rate.required_skills == sorted(get_family("csv-json-merge").skills)


def test_recorded_rollouts_table(tmp_path):
    table = tmp_path / "rollouts.jsonl"
    table.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {"seed_id": "a", "reward": 1},
                {"seed_id": "a", "reward": 0},
                {"seed_id": "b", "reward": 1},
            ]
        )
    )
    rates = {r.seed_id: r for r in pass_rates_from_rollouts(table)}
    assert rates["a"].pass_rate == 0.5 and rates["a"].rollouts == 2 and rates["b"].pass_rate == 1.0
    table.write_text('{"seed_id": "a"}\n')
    with pytest.raises(ConfigError, match=":1:"):
        pass_rates_from_rollouts(table)


def test_procedural_synthesis_keeps_the_family_and_moves_knobs(seed_dir, tmp_path, local_sandbox):
    result = ProceduralSynthesizer().synthesize(
        seed_dir, decision(), out_dir=tmp_path / "out", validate=gold_validator(local_sandbox)
    )
    assert result.accepted and len(result.attempts) == 1
    meta = read_bundle(result.bundle_dir).config.metadata.envpipeline
    seed_meta = read_bundle(seed_dir).config.metadata.envpipeline
    assert meta["family"] == seed_meta["family"]
    assert meta["knobs"] != seed_meta["knobs"]
    assert set(result.output.files) >= {"environment/Dockerfile", "solution/solve.sh", "tests/test.sh"}
    assert result.output.metadata["solver_payload"]["projection"] == "increase_complexity"


def test_loop_stops_at_exactly_n_accepted_with_accounting(seed_dir, tmp_path, local_sandbox):
    decisions = [decision(), decision("diversify_frontier", "in_breadth")]
    report = run_forge(
        decisions,
        {KEY: seed_dir},
        ProceduralSynthesizer(),
        gold_validator(local_sandbox),
        3,
        tmp_path / "export",
    )
    assert len(report.accepted) == 3 and not report.budget_exhausted
    assert sorted(p.name for p in (tmp_path / "export").iterdir()) == sorted(
        a.task_name for a in report.accepted
    )
    assert report.attempts >= 3 and report.records >= 3 and report.attempts_per_accepted >= 1.0
    assert report.tokens_per_accepted == 0.0


def test_loop_reports_an_exhausted_budget(seed_dir, tmp_path):
    def reject(bundle_dir):
        return ["gold:oracle_failed: oracle rewards [0.0, 0.0], expected 1.0"]

    report = run_forge(
        [decision()],
        {KEY: seed_dir},
        ProceduralSynthesizer(max_attempts=2),
        reject,
        2,
        tmp_path / "export",
        ForgeBudget(max_attempts=4),
    )
    assert report.budget_exhausted and not report.accepted
    assert report.attempts == 4
    assert report.rejection_reasons == {"validate:gold:oracle_failed": 4}
    assert not any((tmp_path / "export").glob("fam-*"))
