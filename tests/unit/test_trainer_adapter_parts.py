"""The trainer adapters' pure parts, in the main venv (no verl / verifiers / OpenRLHF installed)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import yaml

from envpipeline.agents.metatools import META_TOOL_SCHEMAS
from envpipeline.errors import ConfigError
from envpipeline.models.dataset import Rubric, RubricCriterion
from envpipeline.trainers.adapter_common import final_reply, parse_kwargs, score_completion
from envpipeline.trainers.verl_config import schema_problems, tool_config, tool_loop_kwargs, write_tool_config
from envpipeline.trainers.verl_tool import TOOL_CLASS, create_kwargs_for


def test_parse_kwargs_accepts_dicts_and_json_strings_and_rejects_the_rest() -> None:
    assert parse_kwargs({"task_id": "t1"}) == {"task_id": "t1"}
    assert parse_kwargs('{"task_id": "t1"}') == {"task_id": "t1"}
    assert parse_kwargs(b'{"task_id": "t1"}') == {"task_id": "t1"}
    assert parse_kwargs(None) == parse_kwargs("") == {}
    with pytest.raises(ConfigError, match="not JSON"):
        parse_kwargs("{task_id: t1}")
    with pytest.raises(ConfigError, match="JSON object"):
        parse_kwargs("[1, 2]")


def test_create_kwargs_are_found_whether_each_level_is_a_dict_or_a_json_string() -> None:
    inner = {"task_id": "t1"}
    forms = [
        {"call_tool": {"create_kwargs": inner}},
        {"call_tool": {"create_kwargs": json.dumps(inner)}},
        json.dumps({"call_tool": {"create_kwargs": inner}}),
        {"call_tool": json.dumps({"create_kwargs": json.dumps(inner)})},
    ]
    for form in forms:
        assert create_kwargs_for(form, "call_tool") == inner
    assert create_kwargs_for(forms[0], "list_tools") == {}


def test_tool_config_has_one_entry_per_tool_with_submit_answer_and_loads_as_yaml(tmp_path: Path) -> None:
    path = write_tool_config(tmp_path, META_TOOL_SCHEMAS + META_TOOL_SCHEMAS[:1], [tmp_path / "rl.parquet"])
    config = yaml.safe_load(path.read_text())
    names = [entry["tool_schema"]["function"]["name"] for entry in config["tools"]]
    assert sorted(names) == ["call_tool", "describe_tool", "list_services", "list_tools", "submit_answer"]
    for entry in config["tools"]:
        assert entry["class_name"] == TOOL_CLASS
        assert entry["config"]["type"] == "native"
        assert entry["config"]["data_files"] == [str((tmp_path / "rl.parquet").resolve())]


def test_tool_config_refuses_schemas_verl_would_reject() -> None:
    untyped = {
        "type": "function",
        "function": {
            "name": "cli.exec",
            "description": "run",
            "parameters": {"type": "object", "properties": {"cmd": {"anyOf": [{"type": "string"}]}}},
        },
    }
    problems = schema_problems(untyped)
    assert any("cli.exec" in p and "name" in p for p in problems)
    assert any("cmd" in p and "type" in p for p in problems)
    assert schema_problems(META_TOOL_SCHEMAS[3]) == []
    with pytest.raises(ConfigError, match="verl would reject"):
        tool_config([untyped])


def test_tool_loop_kwargs_name_every_tool_with_a_json_create_kwargs() -> None:
    kwargs = tool_loop_kwargs("t1", ["b", "a", "a"])
    assert list(kwargs) == ["a", "b"]
    assert all(json.loads(v["create_kwargs"]) == {"task_id": "t1"} for v in kwargs.values())


def test_final_reply_is_the_text_after_the_last_turn_marker() -> None:
    transcript = (
        '<tool_call>{"name": "call_tool"}</tool_call><tool_response>{"data": "Alice Bob"}</tool_response>'
        "<|im_start|>assistant The owner is Alice.<|im_end|>"
    )
    assert final_reply(transcript) == "The owner is Alice."
    assert final_reply("plain answer") == "plain answer"


def _rubric() -> str:
    criteria = [
        RubricCriterion(id="c1", description="state", kind="record_exists", check="state"),
        RubricCriterion(
            id="c2", description="text", kind="output_contains", check="text", expected_text="Alice"
        ),
    ]
    return Rubric(task_id="t1", family="world", criteria=criteria).model_dump_json()


def test_score_completion_counts_environment_evidence_and_is_text_only_without() -> None:
    evidence = {"criteria_passed": {"c1": True, "c2": False}, "submitted": False}
    with_env = score_completion(_rubric(), "It is Alice.", evidence)
    assert with_env["score"] == 1.0 and with_env["source"] == "environment"
    text_only = score_completion(_rubric(), "It is Alice.")
    assert text_only["source"] == "text-only" and text_only["score"] == 0.5
    submitted_wrong = {"criteria_passed": {"c1": True, "c2": False}, "submitted": True}
    assert (
        score_completion(_rubric(), "It is Alice.", submitted_wrong)["score"] == 0.5
    )  # the submission counts
    assert score_completion(_rubric(), "It is Alice.", evidence, mode="binary")["score"] == 1.0
    assert score_completion(_rubric(), "Bob", evidence, mode="binary")["score"] == 0.0


@pytest.mark.skipif(importlib.util.find_spec("verl") is not None, reason="verl is installed here")
def test_the_verl_tool_class_names_the_missing_extra() -> None:
    import envpipeline.trainers.verl_tool as verl_tool

    with pytest.raises(ImportError, match="pip install verl"):
        _ = verl_tool.EnvpipelineTool


def test_openrlhf_label_without_an_env_spec_is_refused_with_the_flag_to_use() -> None:
    from envpipeline.trainers.openrlhf_agent import episode_from_label

    with pytest.raises(ConfigError, match="--data.label_key env_spec"):
        episode_from_label(_rubric())
    with pytest.raises(ConfigError, match="--data.label_key env_spec"):
        episode_from_label('"just text"')


@pytest.mark.skipif(importlib.util.find_spec("openrlhf") is not None, reason="OpenRLHF is installed here")
def test_the_openrlhf_executor_names_the_missing_extra() -> None:
    import envpipeline.trainers.openrlhf_agent as agent

    with pytest.raises(ImportError, match="pip install openrlhf"):
        _ = agent.AgentExecutor


def test_verifiers_group_reward_reads_the_evidence_our_toolset_records() -> None:
    from envpipeline.export.rewards import verifiers_group_reward

    full = {"evidence": {"criteria_passed": {"c1": True, "c2": True}, "answer": "Alice", "submitted": True}}
    half = {"evidence": {"criteria_passed": {"c1": True, "c2": False}, "answer": "Bob", "submitted": True}}
    rewards = verifiers_group_reward(["", ""], answers=[_rubric()] * 2, states=[full, half])
    assert rewards[0] == 1.0 and 0.0 < rewards[1] < 1.0
    without = verifiers_group_reward(["Alice", "Alice"], answers=[_rubric()] * 2, states=[{}, {}])
    assert without[0] < 1.0  # text alone cannot pass the state criterion


@pytest.mark.skipif(importlib.util.find_spec("verifiers") is not None, reason="verifiers is installed here")
def test_the_verifiers_taskset_names_the_missing_extra() -> None:
    import envpipeline_verifiers

    assert envpipeline_verifiers.__all__ == ["EnvpipelineTaskset"]
    with pytest.raises(ImportError, match="pip install verifiers"):
        _ = envpipeline_verifiers.EnvpipelineTaskset
