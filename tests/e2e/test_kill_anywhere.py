"""kill -9 at any point leaves nothing behind once the next run starts.

`bundle verify` killed mid-batch leaves its session (a container or a temp root); the next
command that opens a sandbox reaps it. `compose` killed at any point leaves a lake of whole
partitions, a catalog that opens with every view, and no output file listing tasks the lake lacks.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

REPO = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "envpipeline.cli"]
FAMILIES = ("archive-handling", "config-editing", "cron-scheduling")


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, cwd=REPO, env=env, timeout=900)


def start(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*CLI, *args], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def kill_after(proc: subprocess.Popen[str], seconds: float) -> None:
    time.sleep(seconds)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("bundles")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    made = []
    for family in FAMILIES:
        out = root / family
        done = cli("bundle", "new", family, "--out", str(out), "--home", str(root / "home"), env=env)
        assert done.returncode == 0, done.stderr[-2000:]
        made.append(out)
    return made


def owned_containers(pid: int) -> list[str]:
    owner = f"envpipeline.owner={socket.gethostname()}:{pid}"
    listed = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label={owner}"], capture_output=True, text=True
    )
    return listed.stdout.split()


@pytest.mark.parametrize("backend", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_a_verify_killed_midway_leaves_nothing_after_the_next_run(backend, bundles, tmp_path, request):
    request.getfixturevalue("docker_sandbox" if backend == "docker" else "local_sandbox")
    temp = tmp_path / "temp"
    temp.mkdir()
    env = {**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(temp)}
    killed = []
    for delay in (4.0, 9.0):
        proc = start("bundle", "verify", "--sandbox", backend, *map(str, bundles), env=env)
        kill_after(proc, delay)
        killed.append(proc.pid)
    done = cli("bundle", "verify", "--sandbox", backend, "--json", str(bundles[0]), env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)[0]["verdict"] == "verified"
    leftovers = [p.name for p in temp.iterdir() if p.name.startswith("envpipeline-root-")]
    assert leftovers == [], "temp roots of killed runs were reaped"
    if backend == "docker":
        assert all(owned_containers(pid) == [] for pid in killed), "containers of killed runs were reaped"


def catalog_views(home: Path) -> dict[str, int]:
    con = duckdb.connect(str(home / "catalog.duckdb"), read_only=True)
    try:
        views = [
            r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()
        ]
        return {v: con.execute(f"SELECT count(*) FROM {v}").fetchone()[0] for v in views}
    finally:
        con.close()


def test_a_compose_killed_at_any_point_leaves_a_whole_lake_and_catalog(tmp_path):
    home, out = tmp_path / "home", tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    args = ("compose", "--tasks", "40", "--out", str(out), "--home", str(home))
    for delay in (1.0, 3.0, 6.0, 9.0):
        kill_after(start(*args, env=env), delay)
        if (out / "accepted.jsonl").exists():
            listed = {
                json.loads(line)["task_id"] for line in (out / "accepted.jsonl").read_text().splitlines()
            }
            con = duckdb.connect()
            stored = {
                r[0]
                for r in con.execute(
                    f"SELECT task_id FROM read_parquet('{home}/lake/verified_composed_tasks/*/part.parquet')"
                ).fetchall()
            }
            assert listed <= stored, "accepted.jsonl lists only tasks the lake holds"
        if (home / "catalog.duckdb").exists():
            assert "verified_composed_tasks" in catalog_views(home)
    done = cli(*args, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert not list(home.rglob(".part-*")), "no orphan temp file is left"
    views = catalog_views(home)
    assert {"composed_task_specs", "verified_composed_tasks"} <= set(views)
