"""Trainer episodes of every family, rebuilt from exported rows alone: tools, calls, answers and rewards.

Each family's episode is built from a real RL row (verl / SkyRL / TRL builders) of the export
fixture, with no lake. The reference (the SFT trajectory, or the bundle's solve.sh) scores 1.0
through the public tools; doing nothing scores 0; the right final answer without the state
changes scores below 1; bad input is an observation, never an exception; nothing but the agent's
tools can be called.
"""

from __future__ import annotations

import inspect
import json
import shlex
from pathlib import Path

import pytest

from envpipeline.errors import ConfigError
from envpipeline.export.rewards import score_group, trl_reward_fn
from envpipeline.export.rows import skyrl_row, trl_rl_row, verl_rl_row
from envpipeline.export.tool_names import VALID_TOOL_NAME
from envpipeline.models.dataset import AcceptedTask
from envpipeline.models.env_spec import EnvSpec
from envpipeline.sandbox.detect import available_backends
from envpipeline.trainers import EPISODES, SUBMIT_ANSWER, Episode, episode_from_row
from envpipeline.trainers.binding import bind_environment
from envpipeline.trainers.replay import replay_messages
from envpipeline.trainers.skyrl_env import EpisodeSkyRLEnv
from envpipeline.trainers.trl_env import ENV_CLASSES, environment_factories
from tests.export_fixture import build_tasks

ROW_BUILDERS = (verl_rl_row, skyrl_row, trl_rl_row)
#: the registry's families: each registered episode plug-in is held to the contract below
FAMILIES = sorted(EPISODES.all())


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, AcceptedTask]:
    built = build_tasks(tmp_path_factory.mktemp("episode-data"))
    return {
        family: next(t for t in built if t.family == family) for family in ("compose", "world", "terminal")
    }


def needs_sandbox(family: str) -> None:
    if family == "terminal" and not available_backends():
        pytest.skip("no sandbox backend on this host: terminal episodes need one")


def solve(episode: Episode, task: AcceptedTask) -> None:
    """The reference through the episode's public tools: the SFT trajectory, or the bundle's solve.sh."""
    if task.family == "terminal":
        solution = Path(json.loads(task.env_spec)["environment"]["bundle_path"]) / "solution" / "solve.sh"
        observation = episode.call("exec", {"command": f"bash -c {shlex.quote(solution.read_text())}"})
        assert observation.startswith("exit=0"), observation
        episode.submit_answer("done")
        return
    messages = task.messages()
    assert messages is not None
    for observation in replay_messages(episode, messages):
        assert '"success":false' not in observation.replace(" ", ""), observation


def test_every_episode_family_is_registered_and_builds_from_every_rl_row(tasks) -> None:
    assert set(EPISODES.all()) == {"compose", "world", "terminal"}
    for family in ("compose", "world"):
        for build in ROW_BUILDERS:
            row = build(tasks[family], "rl", 0)
            if "extra_info" in row:  # verl/SkyRL: the spec travels inside extra_info, TRL: as a column
                assert "env_spec" not in row
            episode = episode_from_row(row)
            try:
                assert (episode.family, episode.task_id) == (family, tasks[family].task_id)
                assert SUBMIT_ANSWER in episode.tools
                for name, schema in episode.tools.items():
                    assert VALID_TOOL_NAME.match(name) and schema["function"]["name"] == name
            finally:
                episode.close()


@pytest.mark.parametrize("family", FAMILIES)
def test_reference_scores_one_and_nop_scores_zero(tasks, family: str) -> None:
    needs_sandbox(family)
    row = verl_rl_row(tasks[family], "rl", 0)
    nop = episode_from_row(row)
    try:
        assert nop.reward() == 0.0 and not all(nop.criteria_passed())
    finally:
        nop.close()
    episode = episode_from_row(row)
    try:
        solve(episode, tasks[family])
        assert all(episode.criteria_passed())
        assert episode.reward("binary") == 1.0 and episode.reward("checklist") == 1.0
    finally:
        episode.close()


@pytest.mark.parametrize("family", ["compose", "world"])
def test_the_right_final_answer_without_the_state_changes_is_not_a_pass(tasks, family: str) -> None:
    messages = tasks[family].messages()
    assert messages is not None
    final = next(m["content"] for m in reversed(messages) if m["role"] == "assistant" and m.get("content"))
    episode = episode_from_row(trl_rl_row(tasks[family], "rl", 0))
    try:
        episode.submit_answer(final)
        assert episode.reward("binary") == 0.0
        assert episode.reward("checklist") < 1.0
    finally:
        episode.close()


@pytest.mark.parametrize("family", FAMILIES)
def test_only_the_agents_tools_can_be_called_and_bad_input_is_an_observation(tasks, family: str) -> None:
    needs_sandbox(family)
    episode = episode_from_row(skyrl_row(tasks[family], "rl", 0))
    try:
        for name in ("reward", "criteria_passed", "run_tool", "_mcp", "close", "__init__", "submit"):
            error = json.loads(episode.call(name, {}))
            assert error["success"] is False and error["error"]["code"] == 404, name
        assert json.loads(episode.call(SUBMIT_ANSWER, {"answer": 3}))["error"]["code"] == 400
        assert (
            json.loads(episode.call(next(iter(episode.agent_tools())), "{not json"))["error"]["code"] == 400
        )
        assert json.loads(episode.call(next(iter(episode.agent_tools())), [1, 2]))["error"]["code"] == 400
        bad = {
            "compose": ("call_tool", {"tool": 7, "arguments": {}}),
            "world": ("mcp__mail_send", {"to": "someone@example.com"}),
            "terminal": ("exec", {"cmd": "ls"}),
        }[family]
        assert json.loads(episode.call(*bad))["error"]["code"] == 400
        assert episode.reward() == 0.0
    finally:
        episode.close()


def test_a_family_cannot_be_registered_twice() -> None:
    from envpipeline.trainers.episode import register_episode
    from envpipeline.trainers.families.composed import ComposedEpisode

    class Impostor(ComposedEpisode):
        pass

    with pytest.raises(ConfigError, match="registered twice"):
        register_episode("compose")(Impostor)
    with pytest.raises(ConfigError, match="unknown episode family"):
        EPISODES.get("spreadsheet")


def test_world_web_and_cli_reject_malformed_requests(tasks) -> None:
    episode = episode_from_row(verl_rl_row(tasks["world"], "rl", 0))
    try:
        assert (
            json.loads(episode.call("web__request", {"method": "DELETE", "path": "/"}))["error"]["code"]
            == 400
        )
        assert (
            json.loads(episode.call("web__request", {"method": "GET", "path": "mail"}))["error"]["code"]
            == 400
        )
        assert json.loads(episode.call("cli__exec", {"command": ""}))["error"]["code"] == 400
        assert episode.call("web__request", {"method": "GET", "path": "/mail?folder=inbox"}).startswith(
            "200 "
        )
    finally:
        episode.close()


def test_world_tools_work_when_called_from_inside_an_event_loop(tasks) -> None:
    import asyncio

    async def agent() -> str:  # SkyRL steps environments from async code
        episode = episode_from_row(verl_rl_row(tasks["world"], "rl", 0))
        try:
            return episode.call("mcp__chat_list_channels", {})
        finally:
            episode.close()

    assert "channels" in json.loads(asyncio.run(agent()))


def test_a_row_without_an_inline_spec_falls_back_to_the_tasks_given_or_fails_clearly(tasks) -> None:
    spec = EnvSpec.model_validate_json(tasks["world"].env_spec)
    no_snapshot = spec.model_copy(update={"world_snapshot": None}).model_dump_json()
    with pytest.raises(ConfigError, match="ENVPIPELINE_WORLDS"):
        episode_from_row({"env_spec": no_snapshot})
    with pytest.raises(ConfigError, match="names no task"):
        episode_from_row({"prompt": "hello"})
    with pytest.raises(ValueError):
        episode_from_row({"env_spec": json.dumps({"version": 2, "family": "compose"})})


def test_a_world_episode_that_cannot_be_built_leaves_no_copy_behind(tasks, tmp_path, monkeypatch) -> None:
    import envpipeline.scratch

    monkeypatch.setattr(envpipeline.scratch, "scratch_root", lambda: tmp_path)
    monkeypatch.delenv("ENVPIPELINE_WORLDS", raising=False)
    spec = EnvSpec.model_validate_json(tasks["world"].env_spec)
    no_snapshot = spec.model_copy(update={"world_snapshot": None}).model_dump_json()
    with pytest.raises(ConfigError):
        episode_from_row({"env_spec": no_snapshot})
    assert not list(tmp_path.iterdir())


def test_trl_classes_expose_exactly_the_episode_tools(tasks) -> None:
    for family, cls in ENV_CLASSES.items():
        public = {n for n, _ in inspect.getmembers(cls, inspect.isfunction) if not n.startswith("_")}
        if family == "terminal" and not available_backends():
            continue
        episode = episode_from_row(trl_rl_row(tasks[family], "rl", 0))
        try:
            assert public == {*episode.tools, "reset", "get_reward"}, family
        finally:
            episode.close()
    factories = environment_factories(reward_mode="checklist")
    assert set(factories) == {"compose", "world", "terminal"}
    assert all(f.reward_mode == "checklist" for f in factories.values())


def test_a_trl_env_refuses_another_familys_row(tasks) -> None:
    env = ENV_CLASSES["compose"]()
    with pytest.raises(ConfigError, match="world"):
        env.reset(**trl_rl_row(tasks["world"], "rl", 0))


def test_trl_reward_fn_scores_groups_from_the_environments(tasks) -> None:
    task = tasks["world"]
    row = trl_rl_row(task, "rl", 0)
    envs = [ENV_CLASSES["world"]() for _ in range(3)]
    try:
        for env in envs:
            env.reset(**row)
        solve(envs[0].episode, task)
        envs[1].mcp__chat_list_channels()  # looks around, changes nothing
        columns = {k: [row[k]] * 3 for k in ("answer", "task_id", "env_spec")}
        got = trl_reward_fn(
            prompts=[row["prompt"]] * 3,
            completions=[[{"role": "assistant", "content": "Done."}]] * 3,
            environments=envs,
            **columns,
        )
        matrix = [env.episode.criteria_passed() for env in envs]
        held = envs[0].episode.held_at_start()
        assert held == task.rubric().held_at_start() and any(held)
        assert got == pytest.approx(score_group(matrix, task.rubric().weights(), held_at_start=held).rewards)
        # looking around or doing nothing passes what W0 already met (state_preserved): no reward
        assert got == [1.0, 0.0, 0.0]
        assert [env.get_reward() for env in envs] == [1.0, 0.0, 0.0]
    finally:
        for env in envs:
            env.episode.close()


def test_skyrl_env_plays_a_world_episode(tasks) -> None:
    task = tasks["world"]
    env = EpisodeSkyRLEnv(env_config={"max_turns": 50}, extras=skyrl_row(task, "rl", 0))
    try:
        _, metadata = env.init([])
        assert metadata["family"] == "world"
        messages = task.messages()
        assert messages is not None
        for message in messages:
            for call in message.get("tool_calls") or []:
                from envpipeline.trainers.replay import episode_call

                name, arguments = episode_call(
                    call["function"]["name"], json.loads(call["function"]["arguments"])
                )
                out = env.step(f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>")
                assert out["done"] is False
        final = env.step("All done.")
        assert final["done"] is True and final["reward"] == 1.0
    finally:
        env.close()


def test_bound_classes_rebuild_composed_tasks_named_by_id_only(tasks, accepted) -> None:
    record = accepted[0]
    env = bind_environment(ENV_CLASSES["compose"], [record])()
    assert env.reset(task_id=record.task_id) == record.instruction
    assert env.get_reward() == 0.0
