"""LLM instruction authoring with a probe, over real HTTP: one scripted server plays author and agent.

A rewrite that keeps the stated values, hides the discovered ones and that the probing ``llm``
agent solves replaces the instruction (a new task that still re-verifies); a rewrite the agent
cannot solve, one that leaks or drops values, and malformed replies are refused with reasons and
the procedural instruction stays. Tokens of author and probe are accounted.
"""

from __future__ import annotations

import calendar
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from envpipeline.agents.rollouts import sft_trajectory
from envpipeline.cli import main as cli
from envpipeline.compose.author import ComposeConfig
from envpipeline.compose.llm_author import (
    AuthorConfig,
    LLMAuthor,
    build_author,
    final_kind,
    rewrite_failures,
    stated_literals,
)
from envpipeline.compose.pipeline import compose_task, verify_record
from envpipeline.llm import LLMClient, LLMConfig
from envpipeline.models.task import TaskRecord
from envpipeline.policies.registry import PolicyConfig, build_policy
from envpipeline.trainers.replay import episode_call
from tests.llm_server import Reply, ScriptedLLMServer, llm_server_fixture  # noqa: F401 - the fixture

pytestmark = pytest.mark.llm
CONFIG = ComposeConfig()


@pytest.fixture(scope="module")
def task() -> TaskRecord:
    return next(r for seed in range(40) if (r := compose_task(seed, CONFIG)).status == "accepted")


def goal_rewrite(record: TaskRecord) -> str:
    """A goal-level instruction stating every literal the original states, without the chain."""
    values = ", ".join(f"'{v}'" for v in stated_literals(record))
    kind = final_kind(record)
    return (
        f"We are tidying up after this week's handover and I need the loose ends tied up. The details "
        f"you will need: {values}. Work out what has to change from there, make the changes, and when "
        f"you are done reply with the {kind} you end up with, and no other {kind}."
    )


def rewrite_reply(text: str) -> str:
    return json.dumps({"instruction": text})


def tool_call(name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def solving_replies(record: TaskRecord) -> list[Reply]:
    """The reference trajectory's assistant turns: an agent that solves the task."""
    messages = sft_trajectory(record)
    assert messages is not None
    replies = []
    for message in messages:
        if message.get("role") != "assistant":
            continue
        calls = []
        for call in message.get("tool_calls") or []:
            name, arguments = episode_call(
                call["function"]["name"], json.loads(call["function"]["arguments"])
            )
            calls.append(tool_call(name, arguments, call["id"]))
        replies.append(Reply(content=message.get("content"), tool_calls=calls or None))
    return replies


def wrong_answer() -> Reply:
    return Reply(tool_calls=[tool_call("submit_answer", {"answer": "I could not tell."}, "call_x")])


def author_for(server: ScriptedLLMServer, **settings: Any) -> LLMAuthor:
    client = LLMClient(
        LLMConfig(model="openai/author", api_base=server.api_base, num_retries=0, timeout_sec=5)
    )
    probe = build_policy(
        PolicyConfig(kind="llm", model="openai/probe", api_base=server.api_base, max_steps=60)
    )
    return LLMAuthor(client, probe, AuthorConfig(kind="llm", model="openai/author", **settings))


def test_stated_literals_are_the_quoted_values_less_the_hidden_ones(task: TaskRecord) -> None:
    literals = stated_literals(task)
    assert literals and all(f"'{v}'" in task.instruction or v.startswith("#") for v in literals)
    hidden = {str(v).lower() for v in task.metadata["hidden_values"]}
    assert not hidden & {v.lower() for v in literals}
    apostrophe = task.model_copy(update={"instruction": "use the service's 'lookup' tool on 'Lisbon'."})
    assert stated_literals(apostrophe) == ["lookup", "Lisbon"]


def test_a_rewrite_the_probe_solves_replaces_the_instruction_and_still_verifies(
    llm_server: ScriptedLLMServer, task: TaskRecord
) -> None:
    text = goal_rewrite(task)
    assert rewrite_failures(task, text, "goal") == []
    llm_server.push(rewrite_reply(text), *solving_replies(task))
    authored = author_for(llm_server, style="goal").author(task)
    info = authored.metadata["authoring"]
    assert info["accepted"] is True and info["probe_rewards"] == [1.0]
    assert authored.instruction == text and authored.task_id != task.task_id
    assert info["procedural_instruction"] == task.instruction and info["procedural_task_id"] == task.task_id
    # the probe saw the new instruction, not the procedural one
    probe_request = llm_server.requests[1]
    assert probe_request["messages"][1]["content"] == text
    assert info["tokens"] == 18 and info["probe_tokens"] == 18 * (len(llm_server.requests) - 1)
    assert {g.name for g in authored.gates} >= {"author_probe", "chain_hidden"}
    # re-verification replays through the procedural draft and re-checks the new instruction
    again = verify_record(authored, CONFIG)
    assert again.status == "accepted", again.reasons


def test_a_rewrite_the_probe_cannot_follow_is_rejected_and_the_procedural_instruction_stays(
    llm_server: ScriptedLLMServer, task: TaskRecord
) -> None:
    llm_server.push(rewrite_reply(goal_rewrite(task)), wrong_answer(), wrong_answer())
    kept = author_for(llm_server, style="goal", probe_tries=2).author(task)
    info = kept.metadata["authoring"]
    assert info["accepted"] is False and info["probe_rewards"] == [0.0, 0.0]
    assert kept.instruction == task.instruction and kept.task_id == task.task_id
    assert info["reasons"][0].startswith("probe:") and "never 1" in info["reasons"][0]
    assert info["rejected_instruction"] == goal_rewrite(task)
    assert len(llm_server.requests) == 3  # one rewrite, two probe episodes


def test_leaks_dropped_values_and_malformed_replies_are_repaired_then_refused(
    llm_server: ScriptedLLMServer, task: TaskRecord
) -> None:
    hidden = task.metadata["hidden_values"][0]
    kind = final_kind(task)
    leaky = f"Step 1: go find {hidden} and do the rest. Then reply with the {kind}."
    llm_server.push(rewrite_reply(leaky), '{"instruction": "too short"}', "{not json")
    kept = author_for(llm_server, style="goal", max_repairs=2).author(task)
    info = kept.metadata["authoring"]
    assert info["accepted"] is False and info["attempts"] == 3 and "probe_rewards" not in info
    assert kept.instruction == task.instruction
    first_feedback = llm_server.requests[1]["messages"][-1]["content"]
    assert f"the value '{hidden}' must be discovered" in first_feedback
    assert "is no longer stated verbatim" in first_feedback and "no numbered steps" in first_feedback
    assert "at least 20 characters" in llm_server.requests[2]["messages"][-1]["content"]
    assert any("JSON" in r for r in info["reasons"]) and all(
        r.startswith("rewrite:") for r in info["reasons"]
    )
    assert len(llm_server.requests) == 3  # no probe for a rewrite that never passed the checks


def test_a_rewrite_that_spells_a_hidden_value_otherwise_is_told_to_drop_it(task: TaskRecord) -> None:
    """A model paraphrases: the person to find as 'UMAR-MENSAH', the date as 'June 15'."""
    hidden = [str(v) for v in task.metadata["hidden_values"]]
    for value in hidden:
        words = re.findall(r"[^\W_]+", value)
        if date := re.fullmatch(r"\d{4}-(\d{2})-(\d{2})", value):
            spelled = f"{calendar.month_name[int(date.group(1))]} {int(date.group(2))}"
        elif len(words) > 1 and not value[0].isdigit():
            spelled = "-".join(words).upper()
        else:
            continue
        text = f"{goal_rewrite(task)} It concerns {spelled}."
        assert value.lower() not in text.lower()  # the verbatim check would have let it through
        failures = rewrite_failures(task, text, "goal")
        assert f"the value '{value}' must be discovered by the agent; do not mention it" in failures


def test_a_malformed_reply_is_repaired_into_an_accepted_rewrite(
    llm_server: ScriptedLLMServer, task: TaskRecord
) -> None:
    llm_server.push("Sure! Here it is:", rewrite_reply(goal_rewrite(task)), *solving_replies(task))
    authored = author_for(llm_server, style="goal").author(task)
    assert authored.metadata["authoring"]["accepted"] is True
    assert authored.metadata["authoring"]["attempts"] == 2


def test_the_procedural_default_builds_no_author_and_llm_needs_a_model() -> None:
    assert build_author(AuthorConfig()) is None
    with pytest.raises(ValueError, match="needs a model"):
        AuthorConfig(kind="llm")


def test_compose_cli_authors_with_an_llm_and_caches_the_author(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    first = next(r for seed in range(40) if (r := compose_task(seed, CONFIG, "x")).status == "accepted")
    llm_server.push(rewrite_reply(goal_rewrite(first)), *solving_replies(first))
    args = ["compose", "--tasks", "1", "--out", str(tmp_path / "out"), "--home", str(tmp_path / "home")]
    llm = ["--author", "llm", "--model", "openai/author", "--api-base", llm_server.api_base, "--json"]
    result = CliRunner().invoke(cli, [*args, *llm])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output[result.output.index("{") :])
    assert summary["authoring"]["accepted"] == 1 and summary["authoring"]["author_tokens"] == 18
    (line,) = (tmp_path / "out" / "accepted.jsonl").read_text().splitlines()
    assert json.loads(line)["instruction"] == goal_rewrite(first)
    missing = CliRunner().invoke(cli, [*args, "--author", "llm"])
    assert missing.exit_code != 0 and "--model" in missing.output


def test_a_failing_endpoint_keeps_the_procedural_instruction_with_the_error(
    llm_server: ScriptedLLMServer, task: TaskRecord
) -> None:
    llm_server.push(Reply(status=500, content="model crashed"))
    kept = author_for(llm_server, style="goal").author(task)
    info = kept.metadata["authoring"]
    assert kept.instruction == task.instruction and info["accepted"] is False
    assert info["reasons"][0].startswith("llm: ") and "openai/author" in info["reasons"][0]
