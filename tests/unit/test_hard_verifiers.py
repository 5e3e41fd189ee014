"""Verifiers that are hard to fool: one-value answers, no collateral damage, unique hops, one state."""

from __future__ import annotations

import json

from envpipeline.agents.environment import ComposedEnvironment
from envpipeline.agents.reference import run_reference
from envpipeline.agents.rollouts import sft_trajectory
from envpipeline.compose.gates import unique_hops
from envpipeline.export.envs import ComposedTaskEnv, bind_environment
from envpipeline.models.task import Binding, TaskRecord, ToolCallStep
from envpipeline.redteam.probe import service_ids, write_tools
from envpipeline.rubric import answer_is, evaluate_criterion
from envpipeline.services.base import is_id_field
from envpipeline.services.links import read_path


def test_an_answer_is_one_short_value_of_its_kind():
    assert answer_is("Done. The city I found is lisbon.", "Lisbon", "city", 200)
    assert answer_is("  LISBON!  ", "Lisbon", "city", 200)
    assert not answer_is("Lisbon or Lima", "Lisbon", "city", 200), "two candidates of one kind"
    assert not answer_is("It is Limassol.", "Lima", "city", 200), "only inside a longer word"
    assert not answer_is("Lisbon " + "x" * 300, "Lisbon", "city", 200), "too long"
    assert answer_is("Maya Chen (maya.chen@example.com)", "Maya Chen", "person", 200)
    assert not answer_is("Maya Chen or Jonas Weber", "Maya Chen", "person", 200)


def test_a_reply_listing_every_city_fails(accepted: list[TaskRecord]):
    from envpipeline.models.value_pools import CITIES

    for task in accepted:
        answer = next(c for c in task.criteria if c.kind == "final_answer")
        if answer.value_kind == "city":
            listing = ", ".join(c[0] for c in CITIES)
            assert not evaluate_criterion(answer, {}, listing)
            assert evaluate_criterion(answer, {}, task.reference_output)
            return
    raise AssertionError("no accepted task asks for a city")


def final_env(task: TaskRecord) -> ComposedEnvironment:
    env = ComposedEnvironment.from_task_environment(task.environment)
    run_reference(env, [s.model_copy(deep=True) for s in task.reference_solution], [], "")
    return env


def test_collateral_damage_fails_and_key_order_does_not(accepted: list[TaskRecord]):
    task = accepted[0]
    preserved = next(c for c in task.criteria if c.kind == "state_preserved")
    env = final_env(task)
    assert evaluate_criterion(preserved, env.states)
    shuffled = {
        name: dict(reversed(state.items())) for name, state in json.loads(json.dumps(env.snapshot())).items()
    }
    assert evaluate_criterion(preserved, shuffled), "the digest does not depend on key order"
    mentioned = {v for s in task.reference_solution for v in s.arguments.values() if isinstance(v, str)}
    for service in task.environment.distractors:
        for tool, tool_def in write_tools(env, service):
            if tool.partition(".")[2].startswith("delete"):
                target = next(i for i in service_ids(env, service) if i not in mentioned)
                id_arg = next(f for f in tool_def.args_model.model_fields if is_id_field(f))
                if env.call(tool, {id_arg: target}).get("success"):
                    assert not evaluate_criterion(preserved, env.states), "deleting an unrelated record fails"
                    return
    raise AssertionError("no distractor record could be deleted")


def test_a_hop_with_two_matching_records_is_rejected():
    steps = [
        ToolCallStep(tool="crm.search_contacts", arguments={"query": "Maya"}),
        ToolCallStep(
            tool="mail.send_message",
            arguments={"to": None},
            bindings={"to": Binding(step=0, path=["items", 0, "email"])},
        ),
    ]
    two = {"success": True, "data": {"items": [{"email": "a@x.test"}, {"email": "b@x.test"}]}}
    same = {"success": True, "data": {"items": [{"email": "a@x.test"}, {"email": "a@x.test"}]}}
    assert not unique_hops(steps, [two, {"success": True}]).passed
    assert unique_hops(steps, [same, {"success": True}]).passed


def test_the_reference_replays_through_the_served_environment(accepted: list[TaskRecord]):
    for task in accepted:
        stored = TaskRecord.model_validate_json(task.model_dump_json())
        env = bind_environment(ComposedTaskEnv, [stored])()
        env.reset(task_id=stored.task_id)
        observations: list[dict] = []
        for step in stored.reference_solution:
            arguments = dict(step.arguments)
            for arg, binding in step.bindings.items():
                value = read_path(observations[binding.step]["data"], binding.path)
                arguments[arg] = (
                    value if binding.template == "{value}" else binding.template.format(value=value)
                )
            observations.append(json.loads(env.call_tool(step.tool, arguments)))
        env.submit_answer(stored.reference_output)
        assert env.get_reward() == 1.0, task.task_id


def test_sft_trajectories_use_only_ids_they_have_seen(accepted: list[TaskRecord]):
    for task in accepted:
        messages = sft_trajectory(task)
        assert messages is not None, task.task_id
        seen = messages[1]["content"]
        for message in messages[2:]:
            for call in message.get("tool_calls") or []:
                arguments = json.loads(call["function"]["arguments"]).get("arguments") or {}
                for name, value in arguments.items():
                    if is_id_field(name) and isinstance(value, str):
                        assert value in seen, (task.task_id, call["function"]["arguments"])
                assert message["content"], "each tool call comes with a line of reasoning"
            if message["role"] == "tool":
                seen += message["content"]
        reply = messages[-1]["content"]
        answer = next(c for c in task.criteria if c.kind == "final_answer")
        assert messages[-1]["role"] == "assistant" and evaluate_criterion(answer, {}, reply), reply
