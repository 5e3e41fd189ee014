"""Meta-tools, recorded trajectories and the scripted agent acting in composed environments."""

from __future__ import annotations

import json
import random

import pytest

from envpipeline.agents.environment import ComposedEnvironment
from envpipeline.agents.metatools import META_TOOL_SCHEMAS, MetaToolbox
from envpipeline.agents.scripted import ScriptedAgent
from envpipeline.services.registry import all_services


@pytest.fixture
def env() -> ComposedEnvironment:
    library = all_services()
    names = sorted(library)[:2]
    return ComposedEnvironment(
        {n: library[n](library[n].generate_state(random.Random(f"test:{n}"))) for n in names}
    )


@pytest.fixture
def box(env) -> MetaToolbox:
    return MetaToolbox(env)


def dispatch(box: MetaToolbox, name: str, arguments) -> dict:
    raw = box.dispatch(name, arguments)
    assert isinstance(raw, str)
    return json.loads(raw)


def test_meta_tool_schemas_name_the_four_meta_tools():
    names = [s["function"]["name"] for s in META_TOOL_SCHEMAS]
    assert names == ["list_services", "list_tools", "describe_tool", "call_tool"]


def test_list_services_and_tools(box, env):
    listed = dispatch(box, "list_services", {})
    assert listed["success"] is True
    assert [s["name"] for s in listed["data"]["services"]] == sorted(env.services)
    for entry in listed["data"]["services"]:
        tools = dispatch(box, "list_tools", json.dumps({"service": entry["name"]}))
        assert tools["success"] is True
        assert len(tools["data"]["tools"]) == entry["tools"]
        assert all(t["name"].startswith(entry["name"] + ".") for t in tools["data"]["tools"])


def test_describe_tool_gives_its_argument_schema(box, env):
    name = sorted(env.tool_names())[0]
    described = dispatch(box, "describe_tool", {"tool": name})
    assert described["success"] is True
    assert described["data"]["name"] == name
    assert described["data"]["parameters"]["type"] == "object"


def test_call_tool_runs_a_service_tool(box, env):
    service_name = sorted(env.services)[0]
    service = env.services[service_name]
    examples = type(service).example_arguments(service.state)
    writer = next((t for t, d in service.tools.items() if d.writes), None)
    reader = next(t for t, d in service.tools.items() if not d.writes)
    observation = dispatch(
        box, "call_tool", {"tool": f"{service_name}.{reader}", "arguments": examples[reader]}
    )
    assert observation["success"] is True, observation
    if writer is not None:
        before = env.snapshot()
        observation = dispatch(
            box, "call_tool", {"tool": f"{service_name}.{writer}", "arguments": examples[writer]}
        )
        assert observation["success"] is True, observation
        assert env.snapshot() != before, "a write tool changes the environment"


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("list_tools", {"service": "no_such_service"}),
        ("list_tools", {}),
        ("describe_tool", {"tool": "no_such_service.tool"}),
        ("describe_tool", {"tool": "FIRST.no_such_tool"}),
        ("call_tool", {"tool": "no_such_service.tool", "arguments": {}}),
        ("call_tool", {"tool": "FIRST.no_such_tool", "arguments": {}}),
        ("call_tool", {"tool": "FIRST", "arguments": {}}),
        ("no_such_meta_tool", {}),
    ],
)
def test_unknown_names_are_404_observations(box, env, name, arguments):
    first = sorted(env.services)[0]
    arguments = {k: v.replace("FIRST", first) if isinstance(v, str) else v for k, v in arguments.items()}
    observation = dispatch(box, name, arguments)
    assert observation["success"] is False
    assert observation["error"]["code"] == 404


@pytest.mark.parametrize("arguments", ["{not json", "[1, 2]", "3", '"text"'])
def test_bad_argument_json_is_a_400_observation(box, arguments):
    observation = dispatch(box, "list_tools", arguments)
    assert observation["success"] is False
    assert observation["error"]["code"] == 400


def test_call_tool_with_bad_tool_arguments_is_a_400_observation(box, env):
    service = sorted(env.services)[0]
    tool = sorted(env.services[service].tools)[0]
    for arguments in ({"tool": 7, "arguments": {}}, {"tool": f"{service}.{tool}", "arguments": [1]}):
        observation = dispatch(box, "call_tool", arguments)
        assert observation["success"] is False
        assert observation["error"]["code"] == 400


def _check_openai_format(messages):
    assert messages[0]["role"] == "system" and messages[0]["content"]
    assert messages[1]["role"] == "user" and messages[1]["content"]
    pending: dict[str, str] = {}
    for message in messages[2:-1]:
        if message["role"] == "assistant":
            assert not pending, "every tool call is answered before the next turn"
            assert message["tool_calls"]
            for call in message["tool_calls"]:
                assert call["type"] == "function"
                assert isinstance(call["function"]["arguments"], str)
                assert isinstance(json.loads(call["function"]["arguments"]), dict)
                pending[call["id"]] = call["function"]["name"]
        else:
            assert message["role"] == "tool"
            assert pending.pop(message["tool_call_id"]) == message["name"]
            json.loads(message["content"])
    assert not pending
    final = messages[-1]
    assert final["role"] == "assistant" and "tool_calls" not in final
    assert isinstance(final["content"], str) and final["content"]


def _service_calls(messages):
    for message in messages:
        for call in message.get("tool_calls", []):
            yield call["function"]["name"], json.loads(call["function"]["arguments"])


def test_perfect_agent_passes_every_criterion_in_openai_format(accepted):
    agent = ScriptedAgent(error_rate=0.0)
    for task in accepted[:8]:
        rollout = agent.run(task)
        assert all(rollout.passes), (task.task_id, rollout.passes)
        assert len(rollout.passes) == len(task.criteria)
        assert rollout.mistakes == 0
        _check_openai_format(rollout.messages)
        calls = [a["tool"] for n, a in _service_calls(rollout.messages) if n == "call_tool"]
        assert calls == [s.tool for s in task.reference_solution]
        assert rollout.tool_calls == sum(1 for _ in _service_calls(rollout.messages))


def test_perfect_agent_describes_each_tool_before_first_use(accepted):
    for task in accepted[:8]:
        described: set[str] = set()
        listed: set[str] = set()
        for name, arguments in _service_calls(ScriptedAgent().run(task).messages):
            if name == "describe_tool":
                described.add(arguments["tool"])
            elif name == "list_tools":
                listed.add(arguments["service"])
            elif name == "call_tool":
                assert arguments["tool"] in described, arguments["tool"]
                assert arguments["tool"].split(".", 1)[0] in listed


def test_perfect_agent_does_not_change_the_stored_task(accepted):
    task = accepted[0]
    before = task.model_dump()
    ScriptedAgent().run(task)
    assert task.model_dump() == before


def test_error_prone_agent_fails_some_criteria(accepted):
    agent = ScriptedAgent(error_rate=0.5, seed=3)
    rollouts = [agent.run(task, episode) for task in accepted[:4] for episode in range(6)]
    assert any(not all(r.passes) for r in rollouts)
    assert any(r.mistakes > 0 for r in rollouts)
    for r in rollouts:
        _check_openai_format(r.messages)


def test_agent_is_reproducible_per_episode(accepted):
    agent = ScriptedAgent(error_rate=0.5, seed=1)
    a, b = agent.run(accepted[0], 2), agent.run(accepted[0], 2)
    assert a.messages == b.messages and a.passes == b.passes


@pytest.mark.parametrize("rate", [-0.1, 1.5])
def test_error_rate_outside_unit_interval_is_rejected(rate):
    with pytest.raises(ValueError, match="error_rate"):
        ScriptedAgent(error_rate=rate)
