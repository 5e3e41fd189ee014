"""skyrl-gym 0.4: ``skyrl_gym.make("envpipeline", ...)`` builds our env for every family; one episode is scored.

The rows are our SkyRL rows (``env_class: "envpipeline"``); SkyRL passes the row as ``extras``.
Each episode replays the reference through ``step`` (JSON tool calls in ``<tool_call>`` tags) and
ends with its final answer: reward 1.0; an episode that answers at once scores 0.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

skyrl_gym = pytest.importorskip("skyrl_gym")

from envpipeline.export.rows import SKYRL_ENV_CLASS, skyrl_row  # noqa: E402
from envpipeline.models.dataset import AcceptedTask  # noqa: E402
from envpipeline.sandbox.detect import available_backends  # noqa: E402
from envpipeline.trainers.replay import episode_call  # noqa: E402
from envpipeline.trainers.skyrl_env import EpisodeSkyRLEnv, register_skyrl_env  # noqa: E402
from tests.export_fixture import build_tasks  # noqa: E402


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, AcceptedTask]:
    built = build_tasks(tmp_path_factory.mktemp("skyrl-data"))
    return {t.family: t for t in built}


def actions(task: AcceptedTask) -> list[str]:
    if task.family == "terminal":
        bundle = Path(json.loads(task.env_spec)["environment"]["bundle_path"])
        command = f"bash -c {shlex.quote((bundle / 'solution' / 'solve.sh').read_text())}"
        calls = [("exec", {"command": command})]
        final = "done"
    else:
        messages = task.messages() or []
        calls = [
            episode_call(c["function"]["name"], json.loads(c["function"]["arguments"] or "{}"))
            for m in messages
            for c in m.get("tool_calls") or []
        ]
        final = next(
            m["content"] for m in reversed(messages) if m["role"] == "assistant" and m.get("content")
        )
    tagged = [f"<tool_call>{json.dumps({'name': n, 'arguments': a})}</tool_call>" for n, a in calls]
    return [*tagged, final]


@pytest.mark.parametrize("family", ["compose", "world", "terminal"])
def test_registry_makes_our_env_for_every_family_and_scores_an_episode(tasks, family: str) -> None:
    if family == "terminal" and not available_backends():
        pytest.skip("no sandbox backend on this host")
    assert register_skyrl_env() and register_skyrl_env()  # idempotent
    row = skyrl_row(tasks[family], "rl", 0)
    assert row["env_class"] == SKYRL_ENV_CLASS
    env = skyrl_gym.make(row["env_class"], env_config={"max_turns": 60}, extras=row)
    assert isinstance(env, EpisodeSkyRLEnv) and isinstance(env, skyrl_gym.Env)
    try:
        prompt, metadata = env.init(row["prompt"])
        assert prompt == row["prompt"] and metadata["family"] == family
        *calls, final = actions(tasks[family])
        for action in calls:
            out = env.step(action)
            assert out["done"] is False and out["reward"] == 0.0
            assert out["observations"][0]["role"] == "user"
        last = env.step(final)
        assert last["done"] is True and last["reward"] == 1.0
    finally:
        env.close()
    nop = skyrl_gym.make(row["env_class"], env_config={}, extras=row)
    try:
        assert nop.step("I am done.")["reward"] == 0.0
    finally:
        nop.close()
