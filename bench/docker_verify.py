"""Gold verification of default seeds on Docker: processes in the container per bundle, and time.

A seed's gold verification (`verify_bundle`: the oracle twice, nop, the red-team policies) opens
one container per trial and drives it through Engine API execs, each about 50-90 ms of the
engine's time however small the command. This bench counts those execs (`docker_engine.run`
calls) and times each verification, on the default job's procedural seeds
(`default_procedural_keys`), two paths interleaved after one warm-up verification each (image
builds and the first spare excluded):

  old   the planted-files probe as it was: each reward file read on its own (`read_file`, a
        process each), then the listing (reproduced below as `legacy_planted_files`)
  new   `trial.planted_files`: one probe, reward files tested with ``test -f`` inside it

Per path: median seconds per verification, execs per verification, and the ratios. Both paths
must reach the same verdicts and rewards (else the bench says so and exits 1).

Usage: python bench/docker_verify.py [--families 3] [--repeats 3]

Measured 2026-12-05 on a 2-core machine (fuse-overlayfs storage driver), 3 seeds x 3 repeats:
old 10.69 s and 86.0 execs per verification, new 9.39 s and 68.0 execs (1.14x faster, 1.26x
fewer execs), the same verdicts and rewards.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from envpipeline.sandbox import docker_engine
from envpipeline.sandbox.base import SandboxSession
from envpipeline.sandbox.checked import checked_exec
from envpipeline.sandbox.docker import DockerSandbox
from envpipeline.terminal import trial
from envpipeline.terminal.seeds import default_procedural_keys, materialize_seed
from envpipeline.terminal.verify import verify_bundle


def legacy_planted_files(session: SandboxSession) -> list[str]:
    """The planted-files probe before: a read per reward file, then the listing (three processes)."""
    rewards = (trial.REWARD_JSON, trial.REWARD_TXT)
    found = {path for path in rewards if trial._read_reward_file(session, path) != (None, "")}
    listing = checked_exec(session, trial._PLANTED_LISTING, timeout_sec=30)
    found.update(line.strip() for line in listing.stdout.splitlines() if line.strip().startswith("/"))
    return sorted(found)


PATHS: dict[str, Callable[[SandboxSession], list[str]]] = {
    "old": legacy_planted_files,
    "new": trial.planted_files,
}


class ExecCounter:
    """Counts `docker_engine.run` calls (every process the Docker backend starts in a container)."""

    def __init__(self) -> None:
        self.calls = 0
        self._run = docker_engine.run

    def __enter__(self) -> ExecCounter:
        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            return self._run(*args, **kwargs)

        docker_engine.run = counted  # pyright: ignore[reportAttributeAccessIssue]
        return self

    def __exit__(self, *exc: object) -> None:
        docker_engine.run = self._run  # pyright: ignore[reportAttributeAccessIssue]


def verify_with(path: str, bundle: Path, sandbox: DockerSandbox) -> tuple[float, int, tuple[Any, ...]]:
    """(seconds, execs, outcome) of one gold verification with the planted-files probe of `path`."""
    kept = trial.planted_files
    trial.planted_files = PATHS[path]  # pyright: ignore[reportAttributeAccessIssue]
    try:
        with ExecCounter() as counter:
            started = time.perf_counter()
            result = verify_bundle(bundle, sandbox)
            seconds = time.perf_counter() - started
    finally:
        trial.planted_files = kept  # pyright: ignore[reportAttributeAccessIssue]
    outcome = (result.verdict, tuple(result.oracle_rewards), result.nop_reward)
    return seconds, counter.calls, outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--families", type=int, default=3, help="default seeds verified (first N)")
    parser.add_argument("--repeats", type=int, default=3, help="verifications per path and seed")
    args = parser.parse_args()
    if not DockerSandbox.available():
        raise SystemExit("no Docker engine answers: this bench needs one (make base-image)")
    sandbox = DockerSandbox()
    seconds: dict[str, list[float]] = collections.defaultdict(list)
    execs: dict[str, list[int]] = collections.defaultdict(list)
    outcomes: dict[tuple[str, str], set[tuple[Any, ...]]] = collections.defaultdict(set)
    with tempfile.TemporaryDirectory(prefix="bench-docker-verify-") as scratch:
        keys = default_procedural_keys()[: args.families]
        bundles = {key: Path(materialize_seed(key, Path(scratch))["bundle_path"]) for key in keys}
        try:
            for key, bundle in bundles.items():
                for path in PATHS:  # warm-up: image build, first spare
                    verify_with(path, bundle, sandbox)
                for repeat in range(args.repeats):
                    order = list(PATHS) if repeat % 2 == 0 else list(reversed(PATHS))
                    for path in order:
                        took, calls, outcome = verify_with(path, bundle, sandbox)
                        seconds[path].append(took)
                        execs[path].append(calls)
                        outcomes[(key, path)].add(outcome)
                print(f"{key}: {', '.join(f'{p} {sorted(outcomes[(key, p)])}' for p in PATHS)}", flush=True)
        finally:
            sandbox.close()
    print(f"{len(keys)} seeds x {args.repeats} repeats per path, interleaved, after one warm-up each")
    print(f"{'path':6s} {'s/verification':>15s} {'execs/verification':>19s}")
    for path in PATHS:
        print(f"{path:6s} {statistics.median(seconds[path]):15.2f} {statistics.mean(execs[path]):19.1f}")
    old_s, new_s = statistics.median(seconds["old"]), statistics.median(seconds["new"])
    old_x, new_x = statistics.mean(execs["old"]), statistics.mean(execs["new"])
    print(f"new vs old: {old_s / new_s:.2f}x faster (median), {old_x / new_x:.2f}x fewer execs")
    same = all(outcomes[(key, "old")] == outcomes[(key, "new")] for key in keys)
    print(f"same verdicts and rewards on both paths: {same}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
