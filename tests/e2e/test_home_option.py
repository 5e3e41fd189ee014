"""`--home DIR` reaches every command that reads or writes the data folder, as the README says."""

import json
import os
import subprocess
import sys
from pathlib import Path

import click

from envpipeline.cli import main
from envpipeline.store.lake import Lake, Lineage

REPO = Path(__file__).resolve().parents[2]

#: commands that touch only what the user names on the command line, never the data folder
NO_HOME = {"services list", "services import", "families list", "bundle check", "bundle verify"}


def _leaf_commands(group: click.Group, prefix: str = "") -> dict[str, click.Command]:
    leaves: dict[str, click.Command] = {}
    for name, command in group.commands.items():
        path = f"{prefix}{name}"
        if isinstance(command, click.Group):
            leaves |= _leaf_commands(command, path + " ")
        else:
            leaves[path] = command
    return leaves


def _cli(*args: str, home: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "envpipeline.cli", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in os.environ.items() if k != "ENVPIPELINE_HOME"} | {"HOME": str(home)},
    )


def test_every_command_that_uses_the_data_folder_takes_home() -> None:
    leaves = _leaf_commands(main)
    assert set(leaves) >= NO_HOME, "an exempt command was renamed: update NO_HOME and the README"
    missing = [
        path
        for path, command in leaves.items()
        if path not in NO_HOME and "--home" not in {o for p in command.params for o in p.opts}
    ]
    assert missing == []


def test_select_reads_the_pass_rates_stored_under_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    empty = _cli("select", "--home", str(home), home=tmp_path)
    assert empty.returncode == 2 and "no seed pass rates" in empty.stderr
    lake = Lake(home)
    for seed, rate in (("a", 0.2), ("b", 0.9), ("c", None)):
        row = {
            "seed_id": seed,
            "pass_rate": rate,
            "required_skills": json.dumps(["sql"]),
            "optional_skills": "[]",
        }
        lake.write_partition("seed_pass_rates", seed, [row], Lineage("test", "v1"))
    out = _cli("select", "--home", str(home), "--backend", "greedy", "--json", home=tmp_path)
    assert out.returncode == 0, out.stderr
    decided = {d["seed_id"] for d in json.loads(out.stdout)["decisions"]}
    assert decided == {"a", "b"}  # the seed without a pass rate is left out


def test_bundle_new_defaults_into_the_home_bundles_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    out = _cli("bundle", "new", "sqlite-query", "--home", str(home), home=tmp_path)
    assert out.returncode == 0, out.stderr
    written = list((home / "bundles").iterdir())
    assert len(written) == 1 and (written[0] / "task.toml").is_file()
