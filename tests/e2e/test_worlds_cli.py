"""`envpipeline worlds build` as a user runs it."""

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_worlds_build_json_lists_worlds_tasks_gates_and_metrics(tmp_path, local_sandbox):
    out = tmp_path / "worlds"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "envpipeline.cli",
            "worlds",
            "build",
            "--personas",
            "2",
            "--days",
            "2",
            "--out",
            str(out),
            "--json",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=dict(os.environ),
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    summary = json.loads(result.stdout)
    assert len(summary["worlds"]) == 2 and all(w["passed"] for w in summary["worlds"])
    assert summary["tasks"]["accepted"] > 0
    assert {"initial_unsatisfaction", "solvability", "counterfactual_probe"} <= set(summary["gates"])
    assert {"kappa", "worlds", "tasks"} <= set(summary["metrics"])
    tasks = summary["metrics"]["tasks"]  # entity-masked headline, raw beside it
    assert tasks["masked"] and tasks["vendi_raw"] >= tasks["vendi"] > 0
    assert summary["personas"] == {"requested": 2, "accepted": 2}
    assert (out / "tasks.jsonl").exists() and (out / "summary.json").exists()
    day = sorted((out / summary["worlds"][0]["persona_id"]).glob("day-*"))
    assert [d.name for d in day] == ["day-00", "day-01", "day-02"]
    assert (day[1] / "delta.json").exists() and (day[1] / "apps" / "shop.sqlite").exists()
