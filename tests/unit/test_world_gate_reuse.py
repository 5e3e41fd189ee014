"""Fast world gating (pooled servers and sandbox sessions, tasks gated ahead of their turn) decides
exactly what gating one task after another with fresh interfaces per rollout decides."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from envpipeline.models.world_task import GatedTask
from envpipeline.processes import process_running
from envpipeline.sandbox.local import LocalSandbox
from envpipeline.worlds.build import build_world
from envpipeline.worlds.gate_processes import MIN_TASKS_FOR_PROCESSES, gate_pool, processes_for
from envpipeline.worlds.gates import GateConfig
from envpipeline.worlds.personas import generate_persona
from envpipeline.worlds.pipeline import gate_all, world_candidates
from envpipeline.worlds.rollout_services import ServicePool
from tests.world_fixture import make_day

REPO = Path(__file__).resolve().parents[2]

#: The slow reference: one task at a time, web/MCP servers and a sandbox session per rollout.
ONE_BY_ONE = GateConfig(task_workers=1, reuse_services=False)


def _decisions(gated: list[GatedTask]) -> list[dict]:
    """Every record as JSON, without the rollouts' wall-clock seconds."""
    rows = []
    for record in gated:
        row = record.model_dump(mode="json")
        for rollout in row["rollouts"]:
            rollout.pop("seconds")
        rows.append(row)
    return rows


def test_pooled_gating_ahead_of_turn_decides_what_one_by_one_gating_decides(tmp_path):
    build = build_world(generate_persona(0, 3), 2, tmp_path / "worlds", live_health=False, replay=False)
    assert build.passed
    candidates = world_candidates(Path(build.root), [1, 2], 1)
    first, day = candidates[0]
    # a near-duplicate of the first task: gated ahead of its turn (nothing is accepted yet when it
    # starts), it must still be rejected by the diversity gate once the first task is accepted
    candidates.append((first.model_copy(update={"task_id": first.task_id + "-again"}), day))
    fast = gate_all(candidates, tmp_path / "fast")
    slow = gate_all(candidates, tmp_path / "slow", config=ONE_BY_ONE)
    assert _decisions(fast) == _decisions(slow)
    assert fast[0].status == "accepted" and len(fast[0].rollouts) == 6
    again = fast[-1]
    assert again.status == "rejected" and [g.name for g in again.gates] == ["diversity"]
    assert not again.rollouts


def test_a_pooled_slot_serves_only_the_day_it_was_last_bound_to(tmp_path):
    first, second = make_day(tmp_path / "a"), make_day(tmp_path / "b")
    (first / "home" / "only-in-a.txt").write_text("a\n")
    with ServicePool() as pool:
        sandboxed = isinstance(pool.sandbox, LocalSandbox)  # else a direct shell: /tmp is the host's
        with pool.lease(first) as slot:
            slot.shell.run(("echo left > /tmp/left-behind; " if sandboxed else "") + "echo stray > stray.txt")
            assert (first / "home" / "stray.txt").read_text() == "stray\n"
        with pool.lease(second) as again:
            assert again is slot  # the idle slot is reused, rebound to the second day
            assert again.store.day_dir == second.resolve()
            listing = again.shell.run("ls -A /app; ls -A /tmp" if sandboxed else "ls -A").stdout.split()
            with pool.lease(first) as other:
                assert other is not again  # a slot in use is never handed out twice
    assert "only-in-a.txt" not in listing and "stray.txt" not in listing
    assert "left-behind" not in listing
    assert not (second / "home" / "stray.txt").exists()


@pytest.mark.skipif(not LocalSandbox.available(), reason="needs the local sandbox")
def test_a_pooled_shell_outlives_the_thread_that_first_used_it(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    day = make_day(tmp_path / "a")
    with ServicePool() as pool:

        def touch(name: str) -> int | None:
            with pool.lease(day) as slot:
                return slot.shell.run(f"touch {name}").exit_code

        for name in ("one", "two"):  # each in a thread that ends before the next lease
            with ThreadPoolExecutor(max_workers=1) as worker:
                assert worker.submit(touch, name).result() == 0
    assert {"one", "two"} <= {p.name for p in (day / "home").iterdir()}


def _processes_mentioning(text: str) -> list[str]:
    """Command lines of live processes (not zombies) that mention `text`."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline and process_running(int(proc.name)):
            found.append(cmdline)
    return found


def test_worker_processes_decide_what_threads_decide_and_leave_nothing_running(tmp_path):
    """Gating in worker processes (one core each) gives the records of gating in threads, and
    every server and sandbox session a worker pooled is gone once `gate_all` returns."""
    build = build_world(generate_persona(1, 5), 3, tmp_path / "worlds", live_health=False, replay=False)
    assert build.passed
    candidates = world_candidates(Path(build.root), [1, 2, 3], 2)
    assert len(candidates) >= MIN_TASKS_FOR_PROCESSES
    config = GateConfig(task_workers=4, task_processes=2)
    assert processes_for(config, len(candidates), portable=True) == 2
    in_processes = gate_all(candidates, tmp_path / "processes", config=config)
    assert not _processes_mentioning(str(tmp_path))
    in_threads = gate_all(
        candidates, tmp_path / "threads", config=GateConfig(task_workers=4, task_processes=1)
    )
    assert _decisions(in_processes) == _decisions(in_threads)
    assert any(g.status == "accepted" for g in in_processes)


_PROBE_IN_A_FRESH_PROCESS = """
import json, pickle, sys
from pathlib import Path
from envpipeline.worlds.gate_processes import gate_pool
from envpipeline.worlds.gates import GateConfig
from tests.gate_worker_probe import gate_and_list_imports
task, day_dir, work = pickle.loads(Path(sys.argv[1]).read_bytes())
with gate_pool(GateConfig(task_workers=2, task_processes=2), 1) as pool:
    print(json.dumps(pool.submit(gate_and_list_imports, task, day_dir, work).result()))
"""


def test_gating_workers_start_with_what_gating_imports(tmp_path):
    """The workers' fork server imports the gates' code once (`gate_worker_preload`), so a worker
    gates its first task without importing any of the project (each worker imported about 250
    modules, a second of CPU, when the fork server preloaded nothing). A fresh interpreter, so
    that its fork server is this pool's."""
    build = build_world(generate_persona(0, 3), 2, tmp_path / "worlds", live_health=False, replay=False)
    assert build.passed
    task, day_dir = world_candidates(Path(build.root), [1], 1)[0]
    job = tmp_path / "job.pickle"
    job.write_bytes(pickle.dumps((task, day_dir, tmp_path / "work")))
    done = subprocess.run(
        [sys.executable, "-c", _PROBE_IN_A_FRESH_PROCESS, str(job)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert "red_team" in found["gates"] or "solvability" in found["gates"]  # it really gated
    assert found["agents_ready"]
    assert [m for m in found["imported"] if m.split(".")[0] == "envpipeline"] == []
    assert len(found["imported"]) <= 5, found["imported"]  # third-party leftovers: add them to the preload


def test_processes_only_where_they_can_help_and_the_work_can_cross():
    config = GateConfig(task_workers=4, task_processes=2)
    assert processes_for(config, 10, portable=True) == 2
    assert processes_for(config, 10, portable=False) == 0  # a judge LLM or a custom policy stays
    assert processes_for(config, MIN_TASKS_FOR_PROCESSES - 1, portable=True) == 0
    assert processes_for(GateConfig(task_processes=1), 10, portable=True) == 0
    assert processes_for(GateConfig(task_workers=1), 10, portable=True) == 0  # never wider than asked


def _worker_environment(name: str) -> str | None:
    return os.environ.get(name)


def test_workers_see_the_environment_of_the_pool_not_of_the_fork_server(monkeypatch):
    """The fork server outlives one pool; a setting changed since it started reaches new workers."""
    config = GateConfig(task_workers=2, task_processes=2)
    monkeypatch.setenv("ENVPIPELINE_TEST_SETTING", "first")
    with gate_pool(config, 1) as pool:
        assert pool.submit(_worker_environment, "ENVPIPELINE_TEST_SETTING").result() == "first"
    monkeypatch.setenv("ENVPIPELINE_TEST_SETTING", "second")
    with gate_pool(config, 1) as pool:
        assert pool.submit(_worker_environment, "ENVPIPELINE_TEST_SETTING").result() == "second"


def _introduction_and_channels(server: object) -> tuple[str | None, list[str]]:
    """What an MCP client is told at initialize, and the channel names it lists, via `server`."""
    import anyio
    from mcp import Client

    async def ask() -> tuple[str | None, list[str]]:
        async with Client(server) as client:  # pyright: ignore[reportArgumentType]
            result = await client.call_tool("chat_list_channels", {})
            channels = (result.structured_content or {}).get("channels", [])
            return client.instructions, [c["name"] for c in channels]

    return anyio.run(ask)


def test_a_pooled_mcp_server_introduces_the_persona_of_the_world_it_is_bound_to(tmp_path):
    """A slot's MCP server is built once; rebound to another persona's world, it introduces that
    persona and acts on that world."""
    import shutil
    import sqlite3

    from tests.world_fixture import PERSONA

    first = make_day(tmp_path / "a")
    second = tmp_path / "b" / "p02-someone-else" / "day-01"
    shutil.copytree(first, second)
    with sqlite3.connect(second / "apps" / "chat.sqlite") as db:
        db.execute("UPDATE channels SET name = 'only-in-b' WHERE id = (SELECT MIN(id) FROM channels)")
    with ServicePool() as pool:
        with pool.lease(first) as slot:
            server = slot.mcp
            introduction, channels = _introduction_and_channels(server)
            assert introduction is not None and PERSONA in introduction
            assert "only-in-b" not in channels
        with pool.lease(second) as again:
            assert again is slot and again.mcp is server
            introduction, channels = _introduction_and_channels(again.mcp)
    assert introduction is not None and "p02-someone-else" in introduction and PERSONA not in introduction
    assert "only-in-b" in channels


def test_a_pooled_slot_keeps_one_mcp_session_per_persona_and_drops_a_broken_one(tmp_path, monkeypatch):
    """Rollouts on one slot share an MCP client session while the slot serves one persona; bound
    to another persona's world it opens a new session (which introduces that persona), and a
    rollout that raises leaves no session behind for the next one."""
    import shutil

    import mcp

    from tests.world_fixture import PERSONA

    first = make_day(tmp_path / "a")
    second = tmp_path / "b" / "p02-someone-else" / "day-01"
    shutil.copytree(first, second)
    opened: list[object] = []
    real_client = mcp.Client

    def counting_client(*args, **kwargs):
        client = real_client(*args, **kwargs)
        opened.append(client)
        return client

    monkeypatch.setattr(mcp, "Client", counting_client)

    async def introduction_and_channels(client):
        result = await client.call_tool("chat_list_channels", {})
        return client.instructions, len((result.structured_content or {}).get("channels", []))

    async def broken(client):
        raise RuntimeError("the scenario failed")

    with ServicePool() as pool:
        for _ in range(3):
            with pool.lease(first) as slot:
                introduction, channels = slot.run_mcp(introduction_and_channels)
        assert len(opened) == 1 and PERSONA in (introduction or "") and channels > 0
        with pool.lease(second) as again:
            assert again is slot
            introduction, _ = again.run_mcp(introduction_and_channels)
        assert len(opened) == 2 and "p02-someone-else" in (introduction or "")
        with pool.lease(second) as again, pytest.raises(RuntimeError, match="scenario failed"):
            again.run_mcp(broken)
        with pool.lease(second) as again:
            assert again.run_mcp(introduction_and_channels)[1] == channels
        assert len(opened) == 3
