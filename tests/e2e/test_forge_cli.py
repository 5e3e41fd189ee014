"""`envpipeline forge` and the terminal bundle commands as a user runs them."""

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run_cli(*args, check=True):
    result = subprocess.run(
        [sys.executable, "-m", "envpipeline.cli", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=dict(os.environ),
        timeout=900,
    )
    if check and result.returncode != 0:
        raise AssertionError(f"{args} exited {result.returncode}: {result.stderr[-2000:]}")
    return result


def test_forge_from_a_recorded_rollouts_table_exports_exactly_n_verified_bundles(tmp_path, local_sandbox):
    table = tmp_path / "rollouts.jsonl"
    rows = [("fam-text-parsing-easy-0", 1), ("fam-text-parsing-easy-0", 1), ("fam-log-processing-hard-0", 0)]
    table.write_text("".join(json.dumps({"seed_id": s, "reward": r}) + "\n" for s, r in rows))
    out = tmp_path / "forge"
    summary = json.loads(
        run_cli(
            "forge",
            "--target",
            "3",
            "--out",
            str(out),
            "--rollouts-table",
            str(table),
            "--mode",
            "local",
            "--sandbox",
            "local",
            "--json",
        ).stdout
    )
    assert summary["accepted"] == 3 and summary["selector"]["status"] == "optimal"
    assert summary["attempts_per_accepted"] >= 1.0 and summary["tokens_per_accepted"] == 0.0
    decisions = [json.loads(x) for x in (out / "decisions.jsonl").read_text().splitlines()]
    by_seed = {d["seed_id"]: d for d in decisions}
    assert by_seed["fam-text-parsing-easy-0"]["projection"] == "increase_complexity"
    assert by_seed["fam-log-processing-hard-0"]["projection"] == "reduce_complexity"
    bundles = sorted((out / "bundles").iterdir())
    assert len(bundles) == 3
    verify = json.loads(
        run_cli("bundle", "verify", *map(str, bundles), "--sandbox", "local", "--json").stdout
    )
    assert all(v["oracle_reward"] == 1.0 and v["nop_reward"] == 0.0 for v in verify)
    assert json.loads((out / "trace.json").read_text())["formulation"] == "local"


def test_bundle_new_check_and_verify_report_failures(tmp_path, local_sandbox):
    good, partial = tmp_path / "good", tmp_path / "partial"
    run_cli("bundle", "new", "csv-json-merge", "--seed", "2", "--out", str(good))
    run_cli(
        "bundle",
        "new",
        "csv-json-merge",
        "--seed",
        "2",
        "--variant",
        "csv_always_wins",
        "--out",
        str(partial),
    )
    assert run_cli("bundle", "check", str(good)).returncode == 0
    result = run_cli("bundle", "verify", str(good), str(partial), "--sandbox", "local", "--json", check=False)
    assert result.returncode == 1
    verdicts = {Path(v["path"]).name: v for v in json.loads(result.stdout)}
    assert verdicts["good"]["verdict"] == "verified"
    assert verdicts["partial"]["verdict"] == "oracle_failed" and verdicts["partial"]["reasons"]
    families = json.loads(run_cli("families", "list", "--json").stdout)
    assert len(families) >= 12 and all(len(f["variants"]) >= 3 for f in families)


def test_forge_seeds_dir_uses_its_bundles_and_skips_a_solutionless_one(tmp_path, local_sandbox):
    import shutil

    from envpipeline.terminal.families.base import write_generated
    from envpipeline.terminal.families.registry import get_family

    family = get_family("text-parsing")
    seeds = tmp_path / "seeds"
    write_generated(family.generate(0, family.knobs_for("easy"), "easy"), seeds / "my-harbor-task")
    unsolved = write_generated(family.generate(1, family.knobs_for("easy"), "easy"), seeds / "unsolved")
    shutil.rmtree(unsolved / "solution")
    out = tmp_path / "forge"
    args = ["forge", "--seeds", str(seeds), "--seeds-per-family", "0", "--target", "1", "--rollouts", "2"]
    summary = json.loads(run_cli(*args, "--out", str(out), "--sandbox", "local", "--json").stdout)
    assert summary["seeds"] == 1 and summary["accepted"] == 1
    assert "no solution/solve.sh" in summary["skipped_seeds"]["unsolved"]
    rates = [json.loads(x) for x in (out / "pass_rates.jsonl").read_text().splitlines()]
    assert [r["seed_id"] for r in rates] == ["my-harbor-task"]
    empty = tmp_path / "empty"
    empty.mkdir()
    refused = run_cli(*args, "--seeds", str(empty), "--out", str(out), check=False)
    assert refused.returncode == 2 and "holds no task folder" in refused.stderr


def test_forge_runs_the_recorded_portfolio_configuration_by_default(tmp_path, local_sandbox):
    table = tmp_path / "rollouts.jsonl"
    rows = [
        {
            "seed_id": "fam-text-parsing-easy-0",
            "reward": 1,
            "required_skills": ["text-parsing", "regex", "json"],
        },
        {"seed_id": "fam-git-operations-hard-0", "reward": 0, "required_skills": ["git", "bash", "csv"]},
    ]
    table.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "forge"
    args = ["forge", "--target", "2", "--out", str(out), "--rollouts-table", str(table), "--sandbox", "local"]
    summary = json.loads(run_cli(*args, "--json").stdout)
    assert summary["mode"] == "portfolio" and summary["n_coverage_targets"] == 6
    trace = json.loads((out / "trace.json").read_text())
    assert trace["formulation"] == "portfolio" and trace["target_count"] == 2 and trace["status"] == "optimal"
    assert summary["accepted"] == 2


def test_forge_runs_a_fixed_recipe_baseline_through_the_same_loop(tmp_path, local_sandbox):
    table = tmp_path / "rollouts.jsonl"
    rows = [
        {"seed_id": "fam-csv-json-merge-easy-0", "reward": 1},
        {"seed_id": "fam-json-transform-hard-0", "reward": 0},
    ]
    table.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "forge"
    args = [
        "forge",
        "--recipe",
        "self-instruct",
        "--target",
        "3",
        "--out",
        str(out),
        "--rollouts-table",
        str(table),
    ]
    summary = json.loads(run_cli(*args, "--sandbox", "local", "--json").stdout)
    assert summary["recipe"] == "self-instruct" and summary["accepted"] == 3
    assert summary["actions"] == {
        "diversify_frontier/in_breadth": 2
    }  # the recipe's mask, whatever the pass rate
    decisions = [json.loads(x) for x in (out / "decisions.jsonl").read_text().splitlines()]
    assert {d["recipe"] for d in decisions} == {"self-instruct"}
    report = json.loads((out / "report.json").read_text())
    accepted = report["accepted_bundles"]
    assert report["recipe"] == "self-instruct" and {a["recipe"] for a in accepted} == {"self-instruct"}
    assert accepted[2]["parent"] == accepted[0]["task_name"]  # drawn from the pool of accepted bundles
