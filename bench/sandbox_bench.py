"""Per-bundle verification time of the sandbox backends.

One verification = open a session for the bundle, upload ``solution/`` and run ``solve.sh``,
upload ``tests/`` and run ``test.sh``, read ``/logs/verifier/reward.txt``, close the session.
The bundle is generated here: the standard Dockerfile, a tiny ``app/`` fixture, a python
``solve.sh`` and the standard ``test.sh`` (python checks writing the reward file).

Figures printed (medians over --runs):
  docker cold   first verification of a never-built environment (image build included)
  docker warm   verification with the cached image                     goal <= 2 s
  local         LocalSandbox verification (if envpipeline.sandbox.local exists and is usable)
  bare          the same scripts as plain subprocesses on the host, no isolation
  local / bare  the local sandbox overhead                             goal <= 1.3x

Usage: python bench/sandbox_bench.py [--runs 5] [--backend all|docker|local]
"""

from __future__ import annotations

import argparse
import importlib
import shutil
import statistics
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from envpipeline.models.bundle import Bundle
from envpipeline.sandbox.base import Limits, Sandbox
from envpipeline.terminal.bundle import read_bundle, write_files
from envpipeline.terminal.families.base import STANDARD_DOCKERFILE, STANDARD_TEST_SH

SOLVE_SH = """#!/bin/bash
python3 - <<'EOF'
import json
rows = [line.split(",") for line in open("{root}/app/data.csv").read().split()]
total = sum(int(v) for _, v in rows[1:])
json.dump({{"total": total}}, open("{root}/app/answer.json", "w"))
EOF
"""

TEST_OUTPUTS = """import json
rows = [line.split(",") for line in open("{root}/app/data.csv").read().split()]
expected = sum(int(v) for _, v in rows[1:])
assert json.load(open("{root}/app/answer.json")) == {{"total": expected}}
print("ok")
"""

DATA = "name,value\n" + "".join(f"item{i},{i}\n" for i in range(200))


def make_bundle(root: Path, marker: str = "") -> Bundle:
    """A STANDARD_DOCKERFILE bundle; `marker` changes the environment hash (forces a cold build)."""
    files: dict[str, str | bytes] = {
        "task.toml": 'version = "1.0"\n\n[verifier]\ntimeout_sec = 60.0\n',
        "instruction.md": "Write the sum of the value column of /app/data.csv to /app/answer.json.\n",
        "environment/Dockerfile": STANDARD_DOCKERFILE,
        "environment/app/data.csv": DATA,
        "solution/solve.sh": SOLVE_SH.format(root=""),
        "tests/test.sh": STANDARD_TEST_SH,
        "tests/test_outputs.py": TEST_OUTPUTS.format(root=""),
    }
    if marker:
        files["environment/app/.marker"] = marker
    write_files(root, files)
    return read_bundle(root)


def verify(sandbox: Sandbox, bundle: Bundle) -> tuple[float, bytes | None]:
    """One full verification; returns (seconds, reward bytes)."""
    started = time.perf_counter()
    with sandbox.open(bundle, Limits()) as session:
        session.upload(bundle.paths.solution, "/solution")
        session.exec("bash /solution/solve.sh", 60)
        session.upload(bundle.paths.tests, "/tests")
        session.exec("bash /tests/test.sh", 60)
        reward = session.read_file("/logs/verifier/reward.txt")
    return time.perf_counter() - started, reward


def bare(bundle: Bundle) -> tuple[float, bytes | None]:
    """The same work as plain host subprocesses under a temp root (no isolation at all)."""
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        shutil.copytree(bundle.paths.environment / "app", root / "app")
        (root / "logs" / "verifier").mkdir(parents=True)
        (root / "solution").mkdir()
        (root / "solution" / "solve.sh").write_text(SOLVE_SH.format(root=root))
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": tmp, "LANG": "C.UTF-8"}  # as in the sandbox
        subprocess.run(["bash", str(root / "solution/solve.sh")], cwd=root / "app", check=True, env=env)
        (root / "tests").mkdir()
        (root / "tests" / "test_outputs.py").write_text(TEST_OUTPUTS.format(root=root))
        test_sh = STANDARD_TEST_SH.replace("/tests", f"{root}/tests").replace("/logs", f"{root}/logs")
        (root / "tests" / "test.sh").write_text(test_sh)
        subprocess.run(["bash", str(root / "tests/test.sh")], cwd=root / "app", check=True, env=env)
        reward = (root / "logs" / "verifier" / "reward.txt").read_bytes()
    return time.perf_counter() - started, reward


def median_of(runs: int, once: Callable[[], tuple[float, bytes | None]]) -> tuple[float, set[bytes | None]]:
    """Median seconds over `runs` calls and the set of rewards seen."""
    results = [once() for _ in range(runs)]
    return statistics.median(t for t, _ in results), {r for _, r in results}


def line(label: str, seconds: float, note: str = "") -> None:
    print(f"  {label:<34} {seconds * 1000:9.1f} ms  {note}")


def load_sandbox(module: str, name: str) -> Sandbox | None:
    """An instance of a backend class, or None (with the reason printed) if it cannot run here."""
    try:
        cls = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as e:
        print(f"  {name}: not available ({e})")
        return None
    if not cls.available():
        print(f"  {name}: not available on this machine ({name}.available() is False)")
        return None
    return cls()


def bench_docker(runs: int, work: Path) -> None:
    print("docker backend")
    sandbox = load_sandbox("envpipeline.sandbox.docker", "DockerSandbox")
    if sandbox is None:
        return
    from envpipeline.sandbox.base import BASE_IMAGE
    from envpipeline.sandbox.docker import docker, image_exists, image_tag

    if not image_exists(BASE_IMAGE):
        print(f"  base image {BASE_IMAGE} missing: run `make base-image`")
        return
    cold_bundle = make_bundle(work / "cold", marker=uuid.uuid4().hex)
    try:
        cold, reward = verify(sandbox, cold_bundle)
        line("cold image (build + verify)", cold, f"reward={reward!r}")
    finally:
        docker(["rmi", "-f", image_tag(cold_bundle.paths.environment)], check=False)
    warm_bundle = make_bundle(work / "warm")
    verify(sandbox, warm_bundle)  # make sure the image is cached
    warm, rewards = median_of(runs, lambda: verify(sandbox, warm_bundle))
    verdict = "OK" if warm <= 2.0 else "ABOVE GOAL"
    line("warm image (cached), median", warm, f"rewards={sorted(map(repr, rewards))} goal <= 2 s: {verdict}")


def bench_local(runs: int, work: Path) -> None:
    print("local backend")
    bundle = make_bundle(work / "local")
    base, rewards = median_of(runs, lambda: bare(bundle))
    line("bare subprocess, median", base, f"rewards={sorted(map(repr, rewards))}")
    sandbox = load_sandbox("envpipeline.sandbox.local", "LocalSandbox")
    if sandbox is None:
        return
    verify(sandbox, bundle)  # warm up (page cache, any per-host preparation)
    local, rewards = median_of(runs, lambda: verify(sandbox, bundle))
    line("LocalSandbox verification, median", local, f"rewards={sorted(map(repr, rewards))}")
    ratio = local / base
    verdict = "OK" if ratio <= 1.3 else "ABOVE GOAL"
    print(f"  {'local overhead vs bare subprocess':<34} {ratio:9.2f} x   goal <= 1.3x: {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="verifications per median")
    parser.add_argument("--backend", choices=["all", "docker", "local"], default="all")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sandbox-bench-") as tmp:
        work = Path(tmp)
        if args.backend in ("all", "docker"):
            bench_docker(args.runs, work)
        if args.backend in ("all", "local"):
            bench_local(args.runs, work)


if __name__ == "__main__":
    main()
