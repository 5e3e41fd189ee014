"""The service contract, executable: generated checks for every tool, hop and action.

Each check returns a list of failure messages (empty = pass). The pytest contract test and the
`service_library` asset check both run these, so the library in the store is the library tested.
"""

from __future__ import annotations

import json
import random
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from envpipeline.rubric import pass_vector
from envpipeline.services import vocab
from envpipeline.services.base import Service
from envpipeline.services.links import HopPlan, Source, execute_planned, read_path


def _fresh(cls: type[Service], seed: int = 7) -> Service:
    return cls(cls.generate_state(random.Random(seed)))


def _state_json(service: Service) -> str:
    return json.dumps(service.state.model_dump(mode="json"), sort_keys=True)


def check_state_generator(cls: type[Service]) -> list[str]:
    """The initial state is deterministic per seed and varies across seeds; examples cover tools."""
    failures = []
    a = cls.generate_state(random.Random(11)).model_dump(mode="json")
    if a != cls.generate_state(random.Random(11)).model_dump(mode="json"):
        failures.append("generate_state is not deterministic for one seed")
    others = [cls.generate_state(random.Random(seed)).model_dump(mode="json") for seed in (12, 13, 14)]
    # Record collections (the simulated tools' seeded store aside) must vary with the seed: a seeded
    # side table must not hide fixed records (fixed lookup tables beside varying ones are fine).
    collections = [
        name
        for name, records in a.items()
        if name != "simulated"
        and isinstance(records, dict)
        and records
        and all(isinstance(r, dict) for r in records.values())
    ]
    fixed = [name for name in collections if all(other.get(name) == a[name] for other in others)]
    if a == others[0] or (collections and len(fixed) == len(collections)):
        failures.append("generate_state ignores its seed")
    missing = set(cls.tools) - set(cls.example_arguments(cls.generate_state(random.Random(7))))
    if missing:
        failures.append(f"no example arguments for {sorted(missing)}")
    return failures


def check_normal_invocation(cls: type[Service], tool_name: str) -> list[str]:
    """Valid arguments succeed, the observation serializes, and only writes change the state."""
    service = _fresh(cls)
    args = cls.example_arguments(service.state)[tool_name]
    before = _state_json(service)
    obs = service.call(tool_name, args)
    failures = []
    if obs.get("success") is not True:
        failures.append(f"{tool_name}: example call failed: {obs}")
    json.dumps(obs)
    changed = _state_json(service) != before
    if obs.get("success") and changed != cls.tools[tool_name].writes:
        kind = "write" if cls.tools[tool_name].writes else "read"
        failures.append(f"{tool_name}: a {kind} tool {'did not change' if not changed else 'changed'} state")
    return failures


def _expect(failures: list[str], obs: dict[str, Any], code: int, what: str) -> None:
    got = obs.get("error", {}).get("code") if not obs.get("success") else "success"
    if got != code:
        failures.append(f"{what}: expected {code}, got {got}")


def check_error_handling(cls: type[Service], tool_name: str) -> list[str]:
    """Bad calls become 400/404 observations, never exceptions."""
    service = _fresh(cls)
    args = cls.example_arguments(service.state)[tool_name]
    tool_def = cls.tools[tool_name]
    schema = tool_def.json_schema(cls.name)["function"]
    failures: list[str] = []
    if schema["name"] != f"{cls.name}.{tool_name}" or not schema["description"]:
        failures.append(f"{tool_name}: schema needs a namespaced name and a description")
    _expect(
        failures, service.call(tool_name, {**args, "no_such_argument": 1}), 400, f"{tool_name} unknown arg"
    )
    _expect(failures, service.call(tool_name, "not an object"), 400, f"{tool_name} non-object args")  # type: ignore[arg-type]
    for attribute, field in tool_def.args_model.model_fields.items():
        name = field.alias or attribute  # the argument's name on the wire
        if field.is_required():
            broken = {k: v for k, v in args.items() if k != name}
            _expect(failures, service.call(tool_name, broken), 400, f"{tool_name} missing {name}")
            wrong = {**args, name: {"nested": [1, 2]}}
            _expect(failures, service.call(tool_name, wrong), 400, f"{tool_name} wrong type {name}")
        if name.endswith("Id") and name in args and _accepts_string(tool_def.args_model, attribute):
            unknown = {**args, name: "does-not-exist"}
            _expect(failures, service.call(tool_name, unknown), 404, f"{tool_name} unknown {name}")
    _expect(failures, service.call("no_such_tool", {}), 404, "unknown tool")
    return failures


def _accepts_string(model: type[BaseModel], name: str) -> bool:
    """Whether an argument accepts a string (an integer id answers a string id with a 400, not a 404)."""
    try:
        TypeAdapter(model.model_fields[name].annotation or Any).validate_python("does-not-exist")
    except ValidationError:
        return False
    return True


def check_link(cls: type[Service], index: int) -> list[str]:
    """A hop (or a source) reveals its output through its calls; an action's criteria fail before,
    pass after."""
    link = cls.links()[index]
    rng = random.Random(index)
    service = _fresh(cls, seed=3)
    if isinstance(link, Source):  # a source takes no value: what it reveals starts a chain
        value, plan = "", link.plant(service.state, rng)
    else:
        value = vocab.sample_value(link.consumes, rng)
        plan = link.plant(service.state, rng, value)
    planted = service.state.model_copy(deep=True)
    observations = execute_planned(service, plan.calls, value)
    failures = [f"{link.name}: call {i} failed: {o}" for i, o in enumerate(observations) if not o["success"]]
    if isinstance(plan, HopPlan):
        failures += _check_hop_plan(link.name, plan, value, observations)
    else:
        criteria = [c.model_copy(update={"service": cls.name}) for c in plan.criteria]
        if not criteria:
            failures.append(f"{link.name}: an action needs criteria")
        elif all(pass_vector(criteria, {cls.name: planted})):
            failures.append(f"{link.name}: criteria already pass before acting")
        if not all(pass_vector(criteria, {cls.name: service.state})):
            failures.append(f"{link.name}: criteria fail after acting")
    return failures


def _check_hop_plan(name: str, plan: HopPlan, value: str, observations: list[dict[str, Any]]) -> list[str]:
    """A planted hop reveals a new value, at its reveal paths, without quoting the carried one."""
    failures = []
    if not plan.output or plan.output == value:
        failures.append(f"{name}: a hop must reveal a new value")
    revealed = []
    for call, obs in zip(plan.calls, observations):
        if call.reveals and obs["success"]:
            try:
                revealed.append(read_path(obs["data"], call.reveals))
            except KeyError:
                failures.append(f"{name}: reveal path {call.reveals} not in the observation")
    if not revealed or revealed[-1] != plan.output:
        failures.append(f"{name}: revealed {revealed[-1:]} instead of {plan.output!r}")
    if value and value.lower() in plan.phrase.lower():
        failures.append(f"{name}: the phrase quotes the carried value")
    return failures


def check_service(cls: type[Service]) -> list[str]:
    """Every check of one service."""
    failures = check_state_generator(cls)
    for tool_name in cls.tools:
        failures += check_normal_invocation(cls, tool_name)
        failures += check_error_handling(cls, tool_name)
    for index in range(len(cls.links())):
        failures += check_link(cls, index)
    return failures
