"""Trainer environments over composed tasks: the TRL environment_factory class and the SkyRL env."""

from __future__ import annotations

import inspect
import json
import uuid
from pathlib import Path

import pytest

from envpipeline.compose.recording import record_verified
from envpipeline.errors import ConfigError, UnknownTaskError
from envpipeline.export.envs import (
    META_TOOLS,
    ComposedSkyRLEnv,
    ComposedTaskEnv,
    bind_environment,
    load_accepted_task,
    parse_tool_call,
    task_id_of,
)
from envpipeline.models.task import TaskRecord
from envpipeline.rubric import TEXT_KINDS
from envpipeline.services.links import read_path
from envpipeline.store.lake import Lake


def solve(task: TaskRecord, call) -> None:
    """Run the reference solution through `call(tool, arguments) -> observation JSON string`."""
    observations: list[dict] = []
    for step in task.reference_solution:
        arguments = dict(step.arguments)
        for name, binding in step.bindings.items():
            value = read_path(observations[binding.step]["data"], binding.path)
            arguments[name] = binding.fill(value)
        observations.append(json.loads(call(step.tool, arguments)))
        assert observations[-1]["success"], observations[-1]


def test_trl_public_methods_are_the_meta_tools() -> None:
    public = {n for n, m in inspect.getmembers(ComposedTaskEnv, inspect.isfunction) if not n.startswith("_")}
    assert public == {*META_TOOLS, "submit_answer", "reset", "get_reward"}
    assert not hasattr(ComposedTaskEnv, "bind"), "TRL would expose a public bind as a tool"
    for name in (*META_TOOLS, "submit_answer"):
        doc = inspect.getdoc(getattr(ComposedTaskEnv, name))
        assert doc and "Returns:" in doc
        params = [p for p in inspect.signature(getattr(ComposedTaskEnv, name)).parameters if p != "self"]
        for param in params:
            assert f"{param}:" in doc.split("Args:")[1]


def test_trl_episode_oracle_and_nop(accepted: list[TaskRecord]) -> None:
    task = accepted[0]
    factory = bind_environment(ComposedTaskEnv, [task])
    env = factory()
    row = {
        "prompt": [{"role": "user", "content": task.instruction}],
        "info": json.dumps({"task_id": task.task_id}),
    }
    assert env.reset(**row) is None
    services = json.loads(env.list_services())["data"]["services"]
    assert {s["name"] for s in services} >= set(task.environment.services)
    first = task.reference_solution[0].tool
    assert json.loads(env.describe_tool(first))["data"]["name"] == first
    assert json.loads(env.call_tool("nosuch.tool", {}))["error"]["code"] == 404
    assert env.get_reward() == 0.0
    solve(task, env.call_tool)
    assert env.get_reward() == 0.0, "the state is right but no answer was submitted"
    assert json.loads(env.submit_answer(task.reference_output))["success"]
    assert env.get_reward() == 1.0  # TRL's call: no arguments
    # a fresh reset starts again from the initial state
    assert factory().reset(task_id=task.task_id) == task.instruction
    again = factory()
    again.reset(task_id=task.task_id)
    again.submit_answer(task.reference_output)
    assert again.get_reward() == 0.0, "the right answer without the state changes"


def test_trl_checklist_mode_gives_partial_credit(accepted: list[TaskRecord]) -> None:
    task = accepted[0]
    env = bind_environment(ComposedTaskEnv, [task], reward_mode="checklist")()
    env.reset(task_id=task.task_id)
    assert env.get_reward() == 0.0  # nothing done: what held at the start earns nothing
    solve(task, env.call_tool)
    output_criteria = sum(c.kind in TEXT_KINDS for c in task.criteria)
    to_achieve = len(task.criteria) - sum(env.episode.held_at_start())
    assert to_achieve < len(task.criteria)  # state_preserved at least held at the start
    assert env.get_reward() == pytest.approx((to_achieve - output_criteria) / to_achieve)
    env.submit_answer(task.reference_output)
    assert env.get_reward() == 1.0


def test_tasks_load_from_the_lake(accepted: list[TaskRecord], tmp_path: Path) -> None:
    lake = Lake(tmp_path)
    record_verified(lake, "p0", accepted[:2], "fp", f"test-{uuid.uuid4().hex[:6]}")
    loaded = load_accepted_task(accepted[1].task_id, tmp_path)
    assert loaded == accepted[1]
    env = bind_environment(ComposedTaskEnv, home=tmp_path)()
    env.reset(extra_info={"task_id": accepted[0].task_id})
    assert json.loads(env.list_tools(accepted[0].environment.services[0]))["success"]
    with pytest.raises(UnknownTaskError):
        load_accepted_task("cw-missing", tmp_path)
    with pytest.raises(UnknownTaskError):
        load_accepted_task("cw-missing", tmp_path / "empty")


def test_row_without_a_task_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="names no task"):
        ComposedTaskEnv().reset(prompt="hello")
    with pytest.raises(ConfigError, match="reset"):
        ComposedTaskEnv().list_services()
    assert task_id_of({"info": '{"task_id": "cw-1"}'}) == "cw-1"
    assert task_id_of({"info": "not json"}) is None


def test_parse_tool_call() -> None:
    tagged = 'I will look.\n<tool_call>{"name": "list_tools", "arguments": {"service": "mail"}}</tool_call>'
    assert parse_tool_call(tagged) == ("list_tools", {"service": "mail"})
    assert parse_tool_call('{"name": "mail.search", "arguments": "{\\"q\\": 1}"}') == (
        "mail.search",
        {"q": 1},
    )
    assert parse_tool_call("All done: the city is Lima.") is None
    assert parse_tool_call("{not json}") is None


def test_skyrl_episode(accepted: list[TaskRecord]) -> None:
    task = accepted[0]
    env = bind_environment(ComposedSkyRLEnv, [task])(
        env_config={}, extras={"extra_info": {"task_id": task.task_id}}
    )
    prompt = [{"role": "user", "content": task.instruction}]
    same, metadata = env.init(prompt)
    assert same == prompt and (metadata["task_id"], metadata["family"]) == (task.task_id, "compose")
    assert [t["function"]["name"] for t in metadata["tools"]] == [*META_TOOLS, "submit_answer"]
    out = env.step('<tool_call>{"name": "list_services", "arguments": {}}</tool_call>')
    assert out["done"] is False and out["reward"] == 0.0
    assert "services" in out["observations"][0]["content"]

    def call(tool: str, arguments: dict) -> str:
        action = json.dumps({"name": tool, "arguments": arguments})  # a namespaced tool called directly
        content = env.step(f"<tool_call>{action}</tool_call>")["observations"][0]["content"]
        return content.removeprefix("<tool_response>\n").removesuffix("\n</tool_response>")

    solve(task, call)
    final = env.step(task.reference_output)
    assert final["done"] is True and final["reward"] == 1.0 and final["observations"] == []
    assert env.get_metrics()["calls"] == len(task.reference_solution) + 1


def test_skyrl_turn_limit_ends_with_reward(accepted: list[TaskRecord]) -> None:
    task = accepted[0]
    env = bind_environment(ComposedSkyRLEnv, [task])(extras={"task_id": task.task_id, "max_turns": 2})
    assert env.step('{"name": "list_services", "arguments": {}}')["done"] is False
    last = env.step('{"name": "list_services", "arguments": {}}')
    assert last["done"] is True and last["reward"] == 0.0
