"""Print what the main commands produce for fixed seeds, as JSON, so two code versions can be diffed.

Used to show that a behaviour-preserving change is one: run it on both trees and diff the output.

    python scripts/output_fingerprint.py --work /tmp/fp-new compose worlds forge run > new.json

Each section lists ids and counts (timings and run ids are left out, since they differ by run).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

VOLATILE = {"seconds", "_run_id", "_row_hash", "_inputs", "durations", "started_at", "elapsed"}


def cli(*args: str, cwd: Path) -> str:
    """Run the envpipeline CLI of the tree under `cwd` and return its stdout."""
    env = {**os.environ, "PYTHONPATH": str(cwd), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    result = subprocess.run(
        [sys.executable, "-m", "envpipeline.cli", *args], cwd=cwd, env=env, capture_output=True, text=True
    )
    if result.returncode not in (0, 3):
        raise SystemExit(f"{args} exited {result.returncode}: {result.stderr[-3000:]}")
    return result.stdout


def digest(value: Any) -> str:
    """A short content hash of a JSON value."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:16]


def jsonl(path: Path) -> list[dict[str, Any]]:
    """The records of a JSONL file."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def compose(work: Path, tree: Path) -> dict[str, Any]:
    out = work / "compose"
    cli(
        "compose",
        "--tasks",
        "40",
        "--seed",
        "0",
        "--out",
        str(out),
        "--home",
        str(work / "compose-home"),
        cwd=tree,
    )
    accepted, rejected = jsonl(out / "accepted.jsonl"), jsonl(out / "rejected.jsonl")
    return {
        "accepted": [r["task_id"] for r in accepted],
        "rejected": {r["task_id"]: r["reasons"] for r in rejected},
        "accepted_digest": digest(accepted),
        "rejected_digest": digest(rejected),
    }


def worlds(work: Path, tree: Path) -> dict[str, Any]:
    out = work / "worlds"
    args = ("worlds", "build", "--personas", "2", "--days", "3", "--tasks-per-day", "2", "--no-live")
    cli(*args, "--out", str(out), cwd=tree)
    gated = jsonl(out / "tasks.jsonl")
    for record in gated:
        for rollout in record["rollouts"]:
            rollout.pop("seconds", None)
    return {
        "tasks": {g["task"]["task_id"]: [g["status"], g["difficulty"], g["reasons"]] for g in gated},
        "tasks_digest": digest(gated),
    }


def forge(work: Path, tree: Path) -> dict[str, Any]:
    out = work / "forge"
    cli("forge", "--target", "6", "--out", str(out), "--sandbox", "local", "--json", cwd=tree)
    decisions = jsonl(out / "decisions.jsonl")
    bundles = sorted(p.name for p in (out / "bundles").iterdir()) if (out / "bundles").is_dir() else []
    return {"decisions": digest(decisions), "bundles": bundles}


def run(work: Path, tree: Path) -> dict[str, Any]:
    home = work / "run-home"
    env_home = work / "dagster-home"
    env_home.mkdir(parents=True, exist_ok=True)
    os.environ["DAGSTER_HOME"] = str(env_home)
    cli("run", "--home", str(home), cwd=tree)
    sys.path.insert(0, str(tree))
    from envpipeline.store.lake import Lake

    lake = Lake(home)
    assets: dict[str, Any] = {}
    for asset in lake.assets():
        rows = lake.read(asset)
        ids = sorted(str(r.get("task_id") or r.get("seed_key") or r.get("seed_id") or "") for r in rows)
        assets[asset] = {"rows": len(rows), "ids": digest(ids)}
        if "status" in (rows[0] if rows else {}):
            statuses: dict[str, int] = {}
            for r in rows:
                statuses[str(r["status"])] = statuses.get(str(r["status"]), 0) + 1
            assets[asset]["status"] = dict(sorted(statuses.items()))
    return assets


SECTIONS = {"compose": compose, "worlds": worlds, "forge": forge, "run": run}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("sections", nargs="+", choices=sorted(SECTIONS))
    parser.add_argument("--work", type=Path, required=True, help="scratch folder (created)")
    parser.add_argument("--tree", type=Path, default=Path(__file__).resolve().parents[1], help="source tree")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    report = {name: SECTIONS[name](args.work.resolve(), args.tree.resolve()) for name in args.sections}
    print(json.dumps(report, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
