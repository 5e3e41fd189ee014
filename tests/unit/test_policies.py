"""The scripted and recorded policy kinds, and the users that take a `Policy`."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from envpipeline.agents.rollouts import rollout_group
from envpipeline.agents.scripted import ScriptedAgent
from envpipeline.errors import ConfigError
from envpipeline.forge.passrates import estimate_pass_rate, pass_rates_from_rollouts, seed_skills
from envpipeline.forge.policy import ScriptedTerminalPolicy
from envpipeline.policies.base import ComposedTarget, TerminalTarget
from envpipeline.policies.recorded import read_rollouts_table
from envpipeline.policies.registry import PolicyConfig, build_policy
from envpipeline.terminal.seeds import materialize_seed

KEY = "fam-csv-json-merge-medium-0"


@pytest.fixture(scope="module")
def seed_dir(tmp_path_factory) -> Path:
    return Path(materialize_seed(KEY, tmp_path_factory.mktemp("seeds"))["bundle_path"])


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


# ------------------------------------------------------------------------------------------ scripted


def test_scripted_terminal_rollouts_are_the_old_policys_for_the_same_seeds(seed_dir, local_sandbox):
    old = ScriptedTerminalPolicy(skill=0.5, seed=3)
    new = build_policy(PolicyConfig(skill=0.5, seed=3))
    target = TerminalTarget(bundle_dir=seed_dir, sandbox=local_sandbox, task_id=KEY)
    for index in range(4):
        before = old.rollout(seed_dir, local_sandbox, index)
        record = new.rollout(target, index)
        assert (record.submission, record.reward, record.verdict) == (
            before["submission"],
            before["reward"],
            before["verdict"],
        )
        assert record.detail["difficulty"] == before["difficulty"]


def test_pass_rate_rows_are_rollout_record_dumps_with_the_old_columns(seed_dir, local_sandbox):
    rate, rows = estimate_pass_rate(KEY, seed_dir, build_policy(PolicyConfig(skill=1.0)), local_sandbox, k=2)
    assert rate.pass_rate == 1.0
    for i, row in enumerate(rows):
        assert row["rollout"] == row["index"] == i and row["seed_id"] == row["task_id"] == KEY
        assert {
            "policy",
            "skill",
            "submission",
            "difficulty",
            "reward",
            "verdict",
            "backend",
            "seconds",
        } <= set(row)
        assert row["kind"] == "scripted" and row["family"] == "terminal"


def test_scripted_composed_rollout_groups_match_the_agent_and_record_criteria(accepted):
    task = accepted[0]
    group = rollout_group(task, group_size=4, error_rate=0.5, seed=2)
    agent = ScriptedAgent(error_rate=0.5, seed=2)
    assert json.loads(group["pass_matrix"]) == [agent.run(task, episode=i).passes for i in range(4)]
    record = build_policy(PolicyConfig(error_rate=0.0)).rollout(ComposedTarget(task), 0)
    assert record.reward == 1.0 and record.criteria == {c.id: True for c in task.criteria}
    broken = [build_policy(PolicyConfig(error_rate=1.0)).rollout(ComposedTarget(task), i) for i in range(3)]
    assert all(r.reward == 0.0 and r.criteria and not all(r.criteria.values()) for r in broken)


def test_a_rollout_group_needs_per_criterion_results(accepted, tmp_path):
    task = accepted[0]
    table = write_jsonl(tmp_path / "t.jsonl", [{"task_id": task.task_id, "reward": 1}] * 2)
    recorded = build_policy(PolicyConfig(kind="recorded", rollouts_table=str(table)))
    with pytest.raises(ConfigError, match="per-criterion"):
        rollout_group(task, group_size=2, policy=recorded)
    criteria = {c.id: True for c in task.criteria}
    write_jsonl(table, [{"task_id": task.task_id, "reward": 1, "criteria": criteria}] * 2)
    recorded = build_policy(PolicyConfig(kind="recorded", rollouts_table=str(table)))
    group = rollout_group(task, group_size=2, policy=recorded)
    assert group["full_success_rate"] == 1.0


# ------------------------------------------------------------------------------------------ recorded


def test_recorded_episodes_in_table_order_with_clear_errors(tmp_path, seed_dir, local_sandbox):
    table = write_jsonl(
        tmp_path / "t.jsonl",
        [
            {"task_id": KEY, "policy": "harbor-agent", "reward": 1, "criteria": {"c1": True}},
            {"seed_id": KEY, "policy": "harbor-agent", "reward": "0.5"},
            {"task_id": "other", "policy": "harbor-agent", "reward": 0},
        ],
    )
    policy = build_policy(PolicyConfig(kind="recorded", rollouts_table=str(table)))
    target = TerminalTarget(bundle_dir=seed_dir, sandbox=local_sandbox, task_id=KEY)
    first, second = policy.rollout(target, 0), policy.rollout(target, 1)
    assert (first.reward, first.criteria, second.reward, second.criteria) == (1.0, {"c1": True}, 0.5, None)
    assert first.policy == policy.name == "harbor-agent" and first.kind == "recorded"
    with pytest.raises(ConfigError, match=r"has 2 rollout\(s\) of task .*episode 2"):
        policy.rollout(target, 2)
    with pytest.raises(ConfigError, match="no rollouts of task 'missing'"):
        policy.rollout(TerminalTarget(bundle_dir=seed_dir, sandbox=local_sandbox, task_id="missing"), 0)
    rate, _ = estimate_pass_rate(KEY, seed_dir, policy, local_sandbox, k=2)
    assert rate.pass_rate == 0.75


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ({"task_id": "a", "seed_id": "b", "reward": 1}, "differ"),
        ({"task_id": 7, "reward": 1}, "task_id"),
        ({"task_id": "", "reward": 1}, "task_id"),
        ({"task_id": "a", "reward": 1, "criteria": {"c1": 1}}, "criteria"),
        ({"task_id": "a", "reward": 1, "criteria": ["c1"]}, "criteria"),
        ({"task_id": "a", "reward": 1, "required_skills": "csv"}, "required_skills"),
        ({"task_id": "a", "reward": 1, "policy": 3}, "policy"),
        ({"task_id": "a", "reward": True}, "plain decimal"),
        ([1, 2], "object"),
    ],
)
def test_a_bad_row_is_refused_with_its_line(tmp_path, row, problem):
    table = tmp_path / "t.jsonl"
    table.write_text('{"task_id": "a", "reward": 1}\n\n' + json.dumps(row) + "\n")
    with pytest.raises(ConfigError, match=rf"t\.jsonl:3: .*{problem}"):
        read_rollouts_table(table)


def test_a_table_of_several_policies_needs_a_name(tmp_path):
    rows = [{"task_id": "a", "policy": p, "reward": r} for p, r in (("x", 1), ("y", 0), ("x", 0))]
    table = write_jsonl(tmp_path / "t.jsonl", rows)
    with pytest.raises(ConfigError, match="policies"):
        build_policy(PolicyConfig(kind="recorded", rollouts_table=str(table)))
    with pytest.raises(ConfigError, match="policies"):
        pass_rates_from_rollouts(table)
    with pytest.raises(ConfigError, match="no rollouts of policy 'z'"):
        build_policy(PolicyConfig(kind="recorded", name="z", rollouts_table=str(table)))
    (rate,) = pass_rates_from_rollouts(table, policy="x")
    assert (rate.pass_rate, rate.rollouts) == (0.5, 2)


def test_a_parquet_table_reads_like_jsonl_and_names_the_bad_row(tmp_path):
    rows = {
        "task_id": ["a", "a", "b"],
        "policy": ["p", "p", "p"],
        "reward": [1.0, 0.0, 0.5],
        "criteria": ['{"c1": true}', None, None],
        "required_skills": [None, '["csv"]', None],
    }
    table = tmp_path / "t.parquet"
    pq.write_table(pa.table(rows), table)
    rates = {r.seed_id: r for r in pass_rates_from_rollouts(table)}
    assert (rates["a"].pass_rate, rates["a"].required_skills, rates["b"].pass_rate) == (0.5, ["csv"], 0.5)
    assert read_rollouts_table(table)[0].criteria == {"c1": True}
    pq.write_table(pa.table({**rows, "reward": [1.0, 2.0, 0.5]}), table)
    with pytest.raises(ConfigError, match=r"t\.parquet:row 2: .*plain decimal"):
        read_rollouts_table(table)


def test_forges_own_rollout_rows_read_back_as_a_table(tmp_path, seed_dir, local_sandbox):
    _, rows = estimate_pass_rate(KEY, seed_dir, build_policy(PolicyConfig(skill=1.0)), local_sandbox, k=2)
    table = write_jsonl(tmp_path / "rollouts.jsonl", rows)
    (rate,) = pass_rates_from_rollouts(table)
    assert (rate.seed_id, rate.pass_rate, rate.rollouts) == (KEY, 1.0, 2)


# -------------------------------------------------------------------------------------- seed skills


def _imported(root: Path, toml: str, instruction: str, test: str) -> Path:
    (root / "tests").mkdir(parents=True)
    (root / "task.toml").write_text(toml)
    (root / "instruction.md").write_text(instruction)
    (root / "tests" / "test_outputs.py").write_text(test)
    return root


def test_an_untagged_imported_seed_gets_skills_from_its_instruction_and_tests(tmp_path):
    untagged = _imported(
        tmp_path / "untagged",
        'version = "1.0"\n',
        "Read /app/orders.csv and write the total per customer to /app/out.json.",
        "import sqlite3\n# the database must hold every row\n",
    )
    assert seed_skills(untagged)[0] == ["aggregation", "csv", "json", "sqlite"]
    tagged = _imported(
        tmp_path / "tagged",
        'version = "1.0"\n\n[metadata]\ntags = ["data-processing"]\n',
        "Read /app/orders.csv.",
        "",
    )
    assert seed_skills(tagged)[0] == ["data-processing"]


def test_forge_from_a_table_without_skills_takes_an_imported_seeds_from_its_bundle(tmp_path, local_sandbox):
    from envpipeline.forge.loop import ForgeBudget
    from envpipeline.forge.pipeline import forge_run
    from envpipeline.synth.procedural import ProceduralSynthesizer

    seed = _imported(
        tmp_path / "seeds" / "sum-orders",
        'version = "1.0"\n',
        "Read /app/orders.csv and write the total per customer to /app/out.json.\n",
        "",
    )
    (seed / "environment").mkdir()
    (seed / "environment" / "Dockerfile").write_text("FROM ubuntu:24.04\nWORKDIR /app\n")
    (seed / "solution").mkdir()
    (seed / "solution" / "solve.sh").write_text("#!/bin/bash\necho '{}' > /app/out.json\n")
    (seed / "tests" / "test.sh").write_text("#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n")
    table = write_jsonl(tmp_path / "t.jsonl", [{"task_id": "sum-orders", "reward": r} for r in (1, 0)])
    out = tmp_path / "forge"
    with pytest.raises(ConfigError, match="no family provenance"):  # rates are written before synthesis
        forge_run(
            [],
            out,
            local_sandbox,
            ProceduralSynthesizer(),
            target=1,
            budget=ForgeBudget(max_attempts=1),
            recorded=pass_rates_from_rollouts(table),
            seeds_folder=tmp_path / "seeds",
        )
    [rate] = [json.loads(x) for x in (out / "pass_rates.jsonl").read_text().splitlines()]
    assert (rate["seed_id"], rate["pass_rate"]) == ("sum-orders", 0.5)
    assert rate["required_skills"] == ["aggregation", "csv", "json"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--policy", "recorded"], "--policy recorded needs --rollouts-table"),
        (["--policy", "scripted", "--rollouts-table", "TABLE"], "goes with --policy recorded"),
        (["--policy", "llm"], "--policy llm needs --model"),
    ],
)
def test_forge_refuses_a_policy_without_its_settings_before_any_work(tmp_path, args, message):
    from click.testing import CliRunner

    from envpipeline.commands.terminal import forge_command

    table = write_jsonl(tmp_path / "t.jsonl", [{"task_id": KEY, "reward": 1}])
    args = [str(table) if a == "TABLE" else a for a in args]
    result = CliRunner().invoke(forge_command, [*args, "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and message in result.output, result.output
    assert not (tmp_path / "out" / "seeds").exists()
