"""deploy/dagster.postgres.yaml: a backfill whose runs write one Postgres instance at once all succeed.

A throwaway PostgreSQL cluster is made with the machine's own server binaries (initdb, pg_ctl) on a
free local port; a fresh DAGSTER_HOME gets the shipped profile as its dagster.yaml; five partitions
of the project's `compose_batch_job` then run from four processes released together, each writing
the same run storage and event log. SQLite would answer some of them "database is locked".
"""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from dagster import AssetKey, DagsterInstance, DagsterRunStatus

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
PROFILE = REPO / "deploy" / "dagster.postgres.yaml"
JOB = "compose_batch_job"
BATCHES = [f"batch-{n:04d}" for n in range(31, 35)]
JOB_ASSETS = ("composed_task_specs", "verified_composed_tasks", "composed_rollouts")
#: the unprivileged account the server runs under when the tests run as root (initdb refuses root);
#: Debian's `postgresql` package creates it
SERVER_ACCOUNT = "postgres"

#: One partition of the job on the instance of $DAGSTER_HOME, started once the file argv[2] exists.
RUN_ONE_PARTITION = """
import sys, time
from pathlib import Path
from dagster import DagsterInstance
from assets.definitions import defs

batch, go = sys.argv[1], Path(sys.argv[2])
job = defs.resolve_job_def("compose_batch_job")
with DagsterInstance.get() as instance:
    print("ready", flush=True)
    while not go.exists():
        time.sleep(0.05)
    result = job.execute_in_process(
        instance=instance,
        partition_key=batch,
        run_config={"resources": {"composer": {"config": {"candidates_per_batch": 3}}}},
        tags={"envpipeline/test": "postgres-backfill"},
        raise_on_error=False,
    )
    print("success" if result.success else "failure", result.run_id, flush=True)
"""


def server_binaries() -> Path | None:
    """The folder holding initdb, pg_ctl and postgres: PATH first, then Debian's versioned folders."""
    on_path = shutil.which("initdb")
    candidates = [Path(on_path).resolve().parent] if on_path else []
    candidates += [Path(p) for p in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)]
    for folder in candidates:
        if all((folder / tool).is_file() for tool in ("initdb", "pg_ctl", "postgres")):
            return folder
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass(frozen=True)
class PostgresServer:
    """A running throwaway cluster: where it listens and the environment the profile reads."""

    port: int
    postmaster_pid: int

    def create_database(self) -> dict[str, str]:
        """A new empty database; the environment deploy/'s instance files read to reach it."""
        import psycopg2

        name = f"dagster_{secrets.token_hex(4)}"
        conn = psycopg2.connect(host="127.0.0.1", port=self.port, user="postgres", dbname="postgres")
        try:
            conn.autocommit = True  # CREATE DATABASE runs outside a transaction
            with conn.cursor() as cur:
                cur.execute(f"CREATE DATABASE {name}")
        finally:
            conn.close()
        return {
            "DAGSTER_PG_HOST": "127.0.0.1",
            "DAGSTER_PG_PORT": str(self.port),
            "DAGSTER_PG_USER": "postgres",
            "DAGSTER_PG_PASSWORD": "",
            "DAGSTER_PG_DB": name,
        }


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _server_command(as_user: dict[str, int]) -> Callable[..., None]:
    """Run a server tool (as the server's account when we are root); a failure shows its output."""

    def run(*cmd: str) -> None:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, **as_user)
        if done.returncode != 0:
            pytest.fail(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")

    return run


@pytest.fixture(scope="module")
def postgres(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresServer]:
    """initdb + pg_ctl start on a free port (socket folder beside the data); stopped and checked gone."""
    binaries = server_binaries()
    if binaries is None:
        pytest.skip("no PostgreSQL server binaries (initdb, pg_ctl): `make system-deps` installs them")
    as_user: dict[str, int] = {}
    root = tmp_path_factory.mktemp("postgres")
    if os.geteuid() == 0:
        try:
            account = pwd.getpwnam(SERVER_ACCOUNT)
        except KeyError:
            pytest.skip(
                f"running as root and no {SERVER_ACCOUNT!r} account for the server (initdb refuses root)"
            )
        as_user = {"user": account.pw_uid, "group": account.pw_gid}
        # pytest's tmp folders are private to root; the server's account needs a folder of its own
        root = Path(tempfile.mkdtemp(prefix="envpipeline-pg-"))
        os.chown(root, account.pw_uid, account.pw_gid)
    run = _server_command(as_user)
    data, sockets = root / "data", root / "sockets"
    pid = None
    try:
        run("mkdir", str(sockets))
        initdb_options = ["-U", "postgres", "--auth=trust", "--encoding=UTF8", "--no-locale"]
        run(str(binaries / "initdb"), "-D", str(data), *initdb_options)
        port = free_port()
        options = f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={sockets}"
        log = str(root / "server.log")
        run(str(binaries / "pg_ctl"), "-D", str(data), "-l", log, "-w", "-t", "60", "-o", options, "start")
        pid = int((data / "postmaster.pid").read_text().split()[0])
        yield PostgresServer(port=port, postmaster_pid=pid)
    finally:
        if pid is not None:
            run(str(binaries / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "-t", "60", "stop")
            deadline = time.monotonic() + 30
            while _alive(pid) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert not _alive(pid), f"the postmaster {pid} outlived pg_ctl stop"
        if as_user:
            shutil.rmtree(root, ignore_errors=True)


def test_a_concurrent_backfill_on_the_postgres_profile_succeeds_without_lock_errors(
    postgres: PostgresServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from dagster_postgres import PostgresEventLogStorage, PostgresRunStorage

    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(PROFILE, home / "dagster.yaml")
    for name, value in postgres.create_database().items():
        monkeypatch.setenv(name, value)
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "DAGSTER_HOME": str(home),
        "ENVPIPELINE_HOME": str(tmp_path / "data"),
        "ENVPIPELINE_DEPLOYMENT": "local",
    }
    go = tmp_path / "go"
    with DagsterInstance.from_config(str(home)) as instance:
        assert isinstance(instance.run_storage, PostgresRunStorage)
        assert isinstance(instance.event_log_storage, PostgresEventLogStorage)
        instance.add_dynamic_partitions("composition_batches", BATCHES)

        procs = [
            subprocess.Popen(
                [sys.executable, "-c", RUN_ONE_PARTITION, batch, str(go)],
                env=env,
                cwd=REPO,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            for batch in BATCHES
        ]
        try:
            for proc in procs:  # every process has loaded the definitions and opened the instance
                assert proc.stdout is not None
                # warnings (Dagster's beta notices) may come first: read up to the marker
                seen = []
                while (line := proc.stdout.readline()) and line.strip() != "ready":
                    seen.append(line)
                assert line.strip() == "ready", f"a run process died before starting: {''.join(seen)[-2000:]}"
            go.touch()
            outputs = [proc.communicate(timeout=600)[0] for proc in procs]
        finally:
            for proc in procs:
                proc.kill()
        for output, proc in zip(outputs, procs, strict=True):
            assert proc.returncode == 0, output[-3000:]
            assert "database is locked" not in output.lower()
            assert output.strip().splitlines()[-1].startswith("success"), output[-3000:]

        runs = instance.get_run_records()
        assert len(runs) == len(BATCHES)
        assert {r.dagster_run.status for r in runs} == {DagsterRunStatus.SUCCESS}
        assert sorted(r.dagster_run.tags["dagster/partition"] for r in runs) == BATCHES
        # the runs were in flight together: the last to start began before the first to finish ended
        starts = [r.start_time for r in runs]
        ends = [r.end_time for r in runs]
        assert all(t is not None for t in starts + ends)
        assert max(s for s in starts if s is not None) < min(e for e in ends if e is not None)

        for name in JOB_ASSETS:
            assert instance.get_materialized_partitions(AssetKey(name)) == set(BATCHES), name
        for run in runs:
            messages = [e.message or "" for e in instance.all_logs(run.dagster_run.run_id)]
            assert not any("database is locked" in m.lower() for m in messages)
            materialized = {
                e.dagster_event.asset_key.to_user_string()
                for e in instance.all_logs(run.dagster_run.run_id)
                if e.dagster_event is not None
                and e.dagster_event.is_step_materialization
                and e.dagster_event.asset_key is not None
            }
            assert materialized == set(JOB_ASSETS)


def test_the_compose_instance_file_loads_on_postgres_with_its_queue_and_docker_launcher(
    postgres: PostgresServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """deploy/dagster.yaml builds a real instance: the schema test cannot see a class path that moved."""
    from dagster._core.run_coordinator import QueuedRunCoordinator
    from dagster_docker import DockerRunLauncher
    from dagster_postgres import PostgresRunStorage

    for name, value in postgres.create_database().items():
        monkeypatch.setenv(name, value)
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(REPO / "deploy" / "dagster.yaml", home / "dagster.yaml")
    with DagsterInstance.from_config(str(home)) as instance:
        assert isinstance(instance.run_storage, PostgresRunStorage)
        assert isinstance(instance.run_coordinator, QueuedRunCoordinator)
        assert isinstance(instance.run_launcher, DockerRunLauncher)
        concurrency = instance.get_concurrency_config()
        assert concurrency.pool_config.default_pool_limit == 1
        assert concurrency.run_queue_config is not None
        assert concurrency.run_queue_config.max_concurrent_runs == 4
        assert instance.get_runs() == []
