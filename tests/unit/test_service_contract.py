"""Generated service tests: every registered tool, normal invocation and error handling."""

from __future__ import annotations

import json
import random

import pytest

from envpipeline.compose.rubric import pass_vector
from envpipeline.services import vocab
from envpipeline.services.links import Action, Hop, execute_planned, read_path
from envpipeline.services.registry import all_services

SERVICES = all_services()
TOOL_CASES = [(s, t) for s, cls in SERVICES.items() for t in cls.tools]
LINK_CASES = [(s, i) for s, cls in SERVICES.items() for i in range(len(cls.links()))]
REQUIRED = {
    "calendar", "mail", "chat", "forum", "lists", "weather", "maps", "crm", "hr", "tickets",
    "banking", "shop", "flights", "notes", "files", "todo",
}


def fresh(service_name: str, seed: int = 7):
    cls = SERVICES[service_name]
    return cls(cls.generate_state(random.Random(seed)))


def state_json(service) -> str:
    return json.dumps(service.state.model_dump(mode="json"), sort_keys=True)


def test_library_covers_the_required_domains_and_size():
    assert REQUIRED <= set(SERVICES), f"missing services: {REQUIRED - set(SERVICES)}"
    assert len(SERVICES) >= 16
    assert sum(len(c.tools) for c in SERVICES.values()) >= 150


@pytest.mark.parametrize("service_name", sorted(SERVICES))
def test_initial_state_is_deterministic_and_examples_cover_every_tool(service_name):
    cls = SERVICES[service_name]
    a = cls.generate_state(random.Random(11)).model_dump(mode="json")
    b = cls.generate_state(random.Random(11)).model_dump(mode="json")
    c = cls.generate_state(random.Random(12)).model_dump(mode="json")
    assert a == b
    assert a != c
    examples = cls.example_arguments(cls.generate_state(random.Random(7)))
    assert set(examples) == set(cls.tools)


@pytest.mark.parametrize(("service_name", "tool_name"), TOOL_CASES)
def test_tool_normal_invocation(service_name, tool_name):
    service = fresh(service_name)
    args = SERVICES[service_name].example_arguments(service.state)[tool_name]
    before = state_json(service)
    obs = service.call(tool_name, args)
    assert obs["success"] is True, obs
    json.dumps(obs)
    changed = state_json(service) != before
    assert changed == service.tools[tool_name].writes, "write tools change state, reads do not"


@pytest.mark.parametrize(("service_name", "tool_name"), TOOL_CASES)
def test_tool_error_handling(service_name, tool_name):
    service = fresh(service_name)
    cls = SERVICES[service_name]
    args = cls.example_arguments(service.state)[tool_name]
    tool_def = cls.tools[tool_name]
    schema = tool_def.json_schema(cls.name)
    assert schema["function"]["name"] == f"{service_name}.{tool_name}"
    assert schema["function"]["description"]
    assert service.call(tool_name, {**args, "no_such_argument": 1})["error"]["code"] == 400
    assert service.call(tool_name, "not an object")["error"]["code"] == 400
    for name, field in tool_def.args_model.model_fields.items():
        if field.is_required():
            broken = {k: v for k, v in args.items() if k != name}
            assert service.call(tool_name, broken)["error"]["code"] == 400, name
            wrong = {**args, name: {"nested": [1, 2]}}
            assert service.call(tool_name, wrong)["error"]["code"] == 400, name
        if name.endswith("Id") and name in args:
            unknown = {**args, name: "does-not-exist"}
            assert service.call(tool_name, unknown)["error"]["code"] == 404, name
    assert service.call("no_such_tool", {})["error"]["code"] == 404


@pytest.mark.parametrize(("service_name", "index"), LINK_CASES)
def test_links_reveal_their_value_and_satisfy_their_criteria(service_name, index):
    cls = SERVICES[service_name]
    link = cls.links()[index]
    rng = random.Random(index)
    service = fresh(service_name, seed=3)
    value = vocab.sample_value(link.consumes, rng)
    plan = link.plant(service.state, rng, value)
    if isinstance(link, Hop):
        assert plan.output and plan.output != value
        observations = execute_planned(service, plan.calls, value)
        assert all(o["success"] for o in observations), observations
        revealed = [read_path(o["data"], c.reveals) for c, o in zip(plan.calls, observations) if c.reveals]
        assert revealed and revealed[-1] == plan.output
    else:
        assert isinstance(link, Action)
        states = {service_name: service.state}
        for c in plan.criteria:
            c.service = service_name
        assert not all(pass_vector(plan.criteria, states)), "criteria must fail before acting"
        observations = execute_planned(service, plan.calls, value)
        assert all(o["success"] for o in observations), observations
        assert all(pass_vector(plan.criteria, states)), plan.criteria
