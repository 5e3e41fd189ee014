"""The collateral-damage criterion covers the simulated part of an imported service's state.

A simulated tool that writes records its call in the service's store (`mcp_store`); before this
the store was read as one opaque record by a live state and as two by its JSON dump, so every
composed task allowed it to change: a stock order placed after the reference passed every
criterion.
"""

from __future__ import annotations

import random

from envpipeline.agents.environment import ComposedEnvironment
from envpipeline.agents.reference import run_reference
from envpipeline.compose.author import ComposeConfig
from envpipeline.compose.pipeline import compose_task
from envpipeline.redteam.compose import stored_states
from envpipeline.rubric import pass_vector, record_map, untouched_digest
from envpipeline.services.registry import get_service


def test_a_nested_model_reads_the_same_live_and_dumped():
    cls = get_service("alpaca")
    store = cls.generate_state(random.Random(0)).simulated
    assert record_map(store) == record_map(store.model_dump(mode="json"))
    assert set(record_map(store)) == {"known", "records"}
    assert untouched_digest(store) == untouched_digest(store.model_dump(mode="json"))


def test_a_simulated_write_after_the_reference_fails_the_task():
    config = ComposeConfig(library_scope="all")
    task = next(r for r in (compose_task(s, config, "sim") for s in range(10)) if r.status == "accepted")
    preserved = next(c for c in task.criteria if c.kind == "state_preserved")
    assert not any(key.endswith(".simulated") for key in preserved.allowed), preserved.allowed
    env = ComposedEnvironment.from_initial_state(stored_states(task))
    run_reference(env, [s.model_copy(deep=True) for s in task.reference_solution], [], task.reference_output)
    assert all(pass_vector(task.criteria, env.states, task.reference_output))
    name, tool, arguments = _a_simulated_write(env)
    assert env.call(f"{name}.{tool}", arguments)["success"]
    passes = pass_vector(task.criteria, env.states, task.reference_output)
    assert passes == [c.kind != "state_preserved" for c in task.criteria]


def _a_simulated_write(env: ComposedEnvironment) -> tuple[str, str, dict]:
    for name, service in sorted(env.services.items()):
        examples = {}
        for tool, tool_def in sorted(service.tools.items()):
            if tool_def.simulated and tool_def.writes:
                examples = examples or type(service).example_arguments(service.state)
                if tool in examples:
                    return name, tool, examples[tool]
    raise AssertionError("no simulated write among the task's services")
