#!/usr/bin/env python3
"""Verifier of an exported CompoWorld task: replay the agent's calls, score the criteria.

The final joint state is rebuilt by replaying ``/app/calls.jsonl`` (written by envtool) on the
task's initial state from ``task.json`` beside this script, exactly as envtool applied them (a
failed call changes nothing), so editing ``/app/state.json`` by hand earns nothing. The criteria
are evaluated with envpipeline's own rubric from the verifier's copy of the runtime
(``vendor.tar.gz`` beside this script, unpacked into a fresh folder; never ``/app/vendor``, which
the agent can edit) on that state and on the final answer in ``/app/answer.txt``. Run it as
``python3 -I`` so nothing in the current folder or the environment is imported. Writes ``/logs/verifier/reward.json``
``{"reward": 0|1, "criteria_passed": k, "criteria_total": n}`` and ``reward-details.json``.
Paths can be moved with $ENVTOOL_APP, $ENVTOOL_LOGS (for tests outside a container) and
$ENVTOOL_CALLS (portable exports: the log the tools container wrote, collected by Harbor).
"""

from __future__ import annotations

import json
import os
import sys
import tarfile
import tempfile
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
APP = os.environ.get("ENVTOOL_APP", "/app")
LOGS = os.environ.get("ENVTOOL_LOGS", "/logs/verifier")
CALLS = os.environ.get("ENVTOOL_CALLS", os.path.join(APP, "calls.jsonl"))


def unpack_runtime() -> str:
    """Unpack the verifier's own runtime (``vendor.tar.gz`` beside this script) into a new folder."""
    folder = tempfile.mkdtemp(prefix="evaluate-runtime-")
    with tarfile.open(os.path.join(HERE, "vendor.tar.gz")) as archive:
        # the archive is the verifier's own; "data" filtering exists from Python 3.11.4 on
        if hasattr(tarfile, "data_filter"):
            archive.extractall(folder, filter="data")
        else:
            archive.extractall(folder)
    return folder


sys.path.insert(0, unpack_runtime())


def read_calls(path: str) -> list[dict[str, Any]]:
    """The logged calls; unreadable lines are skipped (counted in the details)."""
    calls: list[dict[str, Any]] = []
    if not os.path.isfile(path):
        return calls
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            try:
                item = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(item, dict) and isinstance(item.get("tool"), str):
                calls.append(item)
    return calls


def replay(initial: dict[str, Any], calls: list[dict[str, Any]]) -> tuple[dict[str, Any], int]:
    """The joint state after the calls, applied one by one as envtool does; and the failures."""
    from envpipeline.agents.environment import ComposedEnvironment

    state, failed = initial, 0
    for item in calls:
        env = ComposedEnvironment.from_initial_state(state)
        observation = env.call(item["tool"], item.get("arguments"))
        if observation.get("success"):
            state = env.snapshot()
        else:
            failed += 1
    return state, failed


def main() -> int:
    from envpipeline.agents.environment import ComposedEnvironment
    from envpipeline.models.task import Criterion
    from envpipeline.rubric import pass_vector

    with open(os.path.join(HERE, "task.json"), encoding="utf-8") as handle:
        task = json.load(handle)
    criteria = [Criterion.model_validate(c) for c in task["criteria"]]
    calls = read_calls(CALLS)
    state, failed = replay(task["initial_state"], calls)
    answer_path = os.path.join(APP, "answer.txt")
    answer = ""
    if os.path.isfile(answer_path):
        with open(answer_path, encoding="utf-8", errors="replace") as handle:
            answer = handle.read()
    vector = pass_vector(criteria, ComposedEnvironment.from_initial_state(state).states, answer)
    passed = sum(vector)
    reward = {
        "reward": int(bool(vector) and all(vector)),
        "criteria_passed": passed,
        "criteria_total": len(vector),
    }
    state_file = os.path.join(APP, "state.json")
    consistent = None
    if os.path.isfile(state_file):
        with open(state_file, encoding="utf-8") as handle:
            try:
                consistent = json.load(handle) == json.loads(json.dumps(state, sort_keys=True))
            except json.JSONDecodeError:
                consistent = False
    details = {
        "task_id": task.get("task_id"),
        "criteria": {c.id: ok for c, ok in zip(criteria, vector)},
        "descriptions": {c.id: c.description for c in criteria},
        "calls": len(calls),
        "failed_calls": failed,
        "answer_chars": len(answer),
        "state_file_consistent": consistent,
        **reward,
    }
    os.makedirs(LOGS, exist_ok=True)
    with open(os.path.join(LOGS, "reward-details.json"), "w", encoding="utf-8") as handle:
        json.dump(details, handle, indent=1, sort_keys=True)
    with open(os.path.join(LOGS, "reward.json"), "w", encoding="utf-8") as handle:
        json.dump(reward, handle, sort_keys=True)
    print(json.dumps(details, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
