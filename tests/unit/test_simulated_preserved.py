"""The collateral-damage criterion covers the simulated part of an imported service's state, call
by call, and simulated writes can be what a task asks for.

A simulated tool that writes records its call in the service's store (`mcp_store`); before this
the store was read as one opaque record by a live state and as two by its JSON dump, so every
composed task allowed it to change: a stock order placed after the reference passed every
criterion. Now each recorded call is a record of its own (`rubric.field_records`): a task that asks
for one simulated write allows that call and no other.
"""

from __future__ import annotations

import random

from envpipeline.agents.environment import ComposedEnvironment
from envpipeline.agents.reference import run_reference
from envpipeline.compose.author import ComposeConfig
from envpipeline.compose.pipeline import compose_task
from envpipeline.models.task import TaskRecord
from envpipeline.redteam.compose import stored_states
from envpipeline.rubric import SIMULATED_CALLS, pass_vector, record_map, untouched_digest
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
    for key, records in preserved.allowed.items():
        if key.endswith(".simulated"):  # only the calls the task asks for, never the whole store
            assert all(r.startswith("records/") and r.count("/") == 2 for r in records), records
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


def _task_with_a_simulated_write() -> TaskRecord:
    config = ComposeConfig(library_scope="all")
    for seed in range(20):
        task = compose_task(seed, config, "sim")
        if task.status == "accepted" and any(
            (c.collection or "").startswith(SIMULATED_CALLS) for c in task.criteria
        ):
            return task
    raise AssertionError("no accepted task in seeds 0..19 asks for a simulated write")


def test_a_task_asks_for_one_simulated_write_and_allows_no_second():
    task = _task_with_a_simulated_write()
    wanted = next(c for c in task.criteria if (c.collection or "").startswith(SIMULATED_CALLS))
    step = next(
        s for s in task.reference_solution if s.tool == f"{wanted.service}.{wanted.match['tool'].value}"
    )
    env = ComposedEnvironment.from_initial_state(stored_states(task))
    steps = [s.model_copy(deep=True) for s in task.reference_solution]
    observations, _ = run_reference(env, steps, [], task.reference_output)
    assert all(pass_vector(task.criteria, env.states, task.reference_output))
    resolved = steps[task.reference_solution.index(step)]
    assert env.call(resolved.tool, resolved.arguments)["success"]  # the same write once more
    passes = pass_vector(task.criteria, env.states, task.reference_output)
    assert passes == [c.kind != "state_preserved" for c in task.criteria]


def test_a_simulated_write_with_another_stated_argument_is_not_the_one_asked_for():
    task = _task_with_a_simulated_write()
    wanted = next(c for c in task.criteria if (c.collection or "").startswith(SIMULATED_CALLS))
    assert wanted.match["tool"].value and any(k.startswith("arguments.") for k in wanted.match)
    env = ComposedEnvironment.from_initial_state(stored_states(task))
    steps = [s.model_copy(deep=True) for s in task.reference_solution]
    index = next(i for i, s in enumerate(steps) if s.tool == f"{wanted.service}.{wanted.match['tool'].value}")
    run_reference(env, steps[:index], [], "")
    call = steps[index]
    arguments = dict(call.arguments)
    name = next(k.removeprefix("arguments.") for k in wanted.match if k.startswith("arguments."))
    arguments[name] = f"{arguments[name]}-other" if isinstance(arguments[name], str) else arguments[name]
    env.call(call.tool, arguments)
    checked = wanted.model_copy()
    assert not pass_vector([checked], env.states)[0]


def test_tasks_made_before_the_store_was_kept_per_call_still_verify():
    """Their criterion allowed the store's ``records`` (and ``known``) whole, with a digest of
    what was left: nothing. That still holds after any recorded call."""
    store = get_service("alpaca").generate_state(random.Random(0)).simulated
    legacy = ["", "known", "records"]
    before = untouched_digest(store, legacy, "simulated")
    assert before == untouched_digest({}, [])
    whole = untouched_digest(store, [], "simulated")
    store.records.setdefault("stock_order", []).append(store.records[next(iter(store.records))][0])
    assert untouched_digest(store, legacy, "simulated") == before
    assert untouched_digest(store, [], "simulated") != whole, "a new task sees the new call"
