"""`envpipeline worlds build --home` then `envpipeline redteam --family world`, as a user runs them."""

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "envpipeline.cli", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=dict(os.environ),
        timeout=900,
    )


def test_redteam_world_breaks_no_accepted_task_of_a_built_world(tmp_path):
    home = tmp_path / "data"
    built = _cli(
        "worlds", "build", "--personas", "1", "--days", "2", "--home", str(home), "--no-live", "--json"
    )
    assert built.returncode == 0, built.stderr[-2000:]
    summary = json.loads(built.stdout)
    assert (home / "worlds" / "tasks.jsonl").is_file()  # --home puts the worlds under <home>/worlds
    assert summary["tasks"]["accepted"] >= 1, summary["tasks"]["rejections"]
    assert "red_team" in summary["gates"] and "judge_kappas" in summary["metrics"]

    result = _cli("redteam", "--family", "world", "--home", str(home), "--tasks", "2", "--json")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    report = json.loads(result.stdout)
    assert report["accepted_tasks"] >= 1 and report["broken_accepted_tasks"] == []
    assert {"nop", "enumerate", "shotgun", "over-act", "early-stop", "wrong-interface"} <= set(
        report["policies"]
    )
    assert all(entry["broke"] == 0 for entry in report["policies"].values())
    assert report["candidates"]["accepted_hack_passes"] == 0

    table = _cli("redteam", "--family", "world", "--home", str(home), "--tasks", "1")
    assert table.returncode == 0 and "destructive-after-reference" in table.stdout
