"""`envpipeline export` over a store filled by `envpipeline compose`."""

import json
import os
import subprocess
import sys
from pathlib import Path

from datasets import load_dataset

REPO = Path(__file__).resolve().parents[2]


def run_cli(*args):
    result = subprocess.run(
        [sys.executable, "-m", "envpipeline.cli", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=dict(os.environ),
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result


def test_export_every_row_format_loads_with_datasets(tmp_path):
    home = tmp_path / "home"
    run_cli("compose", "--tasks", "8", "--out", str(tmp_path / "c"), "--home", str(home))
    for fmt, split in [
        ("verl", "rl"),
        ("skyrl", "rl"),
        ("trl-rl", "rl"),
        ("verl-sft", "sft"),
        ("trl-sft", "sft"),
    ]:
        out = tmp_path / fmt
        summary = json.loads(
            run_cli("export", "--format", fmt, "--out", str(out), "--home", str(home), "--json").stdout
        )
        files = [f for f in summary["datasets"]["files"][fmt] if f"/{split}." in f]
        assert files, summary
        data = load_dataset("parquet", data_files=str(out / files[0]), split="train")
        assert len(data) >= 1
    harbor = json.loads(
        run_cli(
            "export", "--format", "harbor", "--out", str(tmp_path / "h"), "--home", str(home), "--json"
        ).stdout
    )
    assert harbor["harbor"]["tasks"] == 8
    assert harbor["harbor"]["mode"] == "offline"
    portable = json.loads(
        run_cli(
            "export",
            "--format",
            "harbor",
            "--harbor-mode",
            "portable",
            "--out",
            str(tmp_path / "p"),
            "--home",
            str(home),
            "--json",
        ).stdout
    )
    assert portable["harbor"] == {"tasks": 8, "out": str(tmp_path / "p"), "mode": "portable"}
    dockerfiles = list((tmp_path / "p").glob("*/environment/Dockerfile"))
    assert len(dockerfiles) == 8 and all(
        d.read_text().startswith("FROM python:3.11-slim\n") for d in dockerfiles
    )
    assert not list((tmp_path / "p").rglob("*.so")) and list((tmp_path / "h").rglob("*.so"))
