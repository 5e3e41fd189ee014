"""The ``llm`` policy end to end over real HTTP: a scripted OpenAI-compatible server plays the model.

Each family's loop is driven through litellm against `ScriptedLLMServer`, whose replies are real
tool-call messages: the reference solution issued through the episode's tools scores 1, a wrong or
idle episode scores less; the requests the server saw carry the tools and the tool results. The
failure paths end the episode with a verdict, never an exception: malformed replies are fed back
and survived, a reply slower than the wall-clock limit is a ``timeout``, a server that goes away is
an ``llm_error``, and a model that keeps calling tools hits the ``step_limit``.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from envpipeline.agents.rollouts import sft_trajectory
from envpipeline.compose.author import ComposeConfig
from envpipeline.compose.pipeline import compose_task
from envpipeline.errors import ConfigError
from envpipeline.llm.client import LLMResponse, _import_litellm
from envpipeline.llm.protocol import ScriptedLLM
from envpipeline.models.task import TaskRecord
from envpipeline.policies.base import ComposedTarget, Policy, TerminalTarget, WorldTarget
from envpipeline.policies.llm_agent import LLMAgentPolicy
from envpipeline.policies.registry import PolicyConfig, build_policy
from envpipeline.trainers.replay import episode_call
from tests.llm_server import Reply, ScriptedLLMServer, llm_server_fixture  # noqa: F401 - the fixture

TERMINAL_SEED = "fam-json-transform-easy-0"


def policy_for(server: ScriptedLLMServer, **settings: Any) -> Policy:
    config = {
        "kind": "llm",
        "model": "openai/agent-test",
        "api_base": server.api_base,
        "max_steps": 80,
        **settings,
    }
    return build_policy(PolicyConfig(**config))


def tool_call(name: str, arguments: dict[str, Any] | str, call_id: str) -> dict[str, Any]:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}


def submit(answer: str, call_id: str = "call_submit") -> Reply:
    return Reply(tool_calls=[tool_call("submit_answer", {"answer": answer}, call_id)])


def replies_of(messages: list[dict[str, Any]]) -> list[Reply]:
    """A recorded trajectory's assistant turns as scripted replies (world calls on the episode's tools)."""
    replies = []
    for message in messages:
        if message.get("role") != "assistant":
            continue
        calls = []
        for call in message.get("tool_calls") or []:
            arguments = json.loads(call["function"]["arguments"] or "{}")
            name, arguments = episode_call(call["function"]["name"], arguments)
            calls.append(tool_call(name, arguments, call["id"]))
        replies.append(Reply(content=message.get("content"), tool_calls=calls or None))
    return replies


def reference_of(task: TaskRecord) -> list[dict[str, Any]]:
    """The composed task's reference trajectory (the SFT messages)."""
    messages = sft_trajectory(task)
    assert messages is not None
    return messages


def tool_messages(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in request["messages"] if m["role"] == "tool"]


@pytest.fixture(scope="module", autouse=True)
def litellm_imported() -> None:
    """Import litellm once up front, so the timing assertions measure episodes, not the import."""
    _import_litellm()


@pytest.fixture(scope="module")
def composed() -> TaskRecord:
    return next(r for seed in range(40) if (r := compose_task(seed, ComposeConfig())).status == "accepted")


def test_the_default_step_budgets_cover_the_reference_of_every_accepted_composed_task() -> None:
    """An LLM agent (or the authoring probe) that follows the reference path exactly must not run
    out of tool calls: a budget below the reference makes accepted tasks unsolvable and their pass
    rates zero by construction."""
    from envpipeline.compose.llm_author import AuthorConfig

    calls = []
    for seed in range(60):
        record = compose_task(seed, ComposeConfig())
        if record.status == "accepted":
            messages = reference_of(record)
            calls.append(sum(len(m.get("tool_calls") or []) for m in messages))
    assert len(calls) >= 30
    budgets = {
        "policy": PolicyConfig(kind="llm", model="openai/m").max_steps,
        "probe": AuthorConfig(model="openai/m").probe_max_steps,
    }
    for name, budget in budgets.items():
        assert max(calls) <= budget * 0.8, (name, budget, max(calls))  # slack for a wrong turn or two


# -- composed: meta-tool calling -----------------------------------------------------------------------
def test_composed_task_solved_through_meta_tool_calls_scores_one(
    llm_server: ScriptedLLMServer, composed: TaskRecord
) -> None:
    reference = reference_of(composed)
    llm_server.push(*replies_of(reference))
    record = policy_for(llm_server).rollout(ComposedTarget(composed), 0)
    assert (record.reward, record.verdict, record.kind, record.family) == (1.0, "ok", "llm", "composed")
    assert record.criteria is not None and all(record.criteria.values())
    assert record.criteria.keys() == {c.id for c in composed.criteria}
    calls = sum(len(m.get("tool_calls") or []) for m in reference)
    assert record.steps == calls and record.detail["llm_calls"] == len(llm_server.requests)
    assert record.prompt_tokens == 11 * len(llm_server.requests)  # the server's usage, per request
    assert record.submission == reference[-1]["content"]
    # real messages: every request offers the meta-tools, later ones carry the earlier results
    first, second = llm_server.requests[0], llm_server.requests[1]
    names = {t["function"]["name"] for t in first["tools"]}
    assert names == {"list_services", "list_tools", "describe_tool", "call_tool", "submit_answer"}
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assert first["messages"][1]["content"] == composed.instruction
    assert "meta-tools" in first["messages"][0]["content"]
    (result,) = tool_messages(second)
    assert result["tool_call_id"] == "call_1" and json.loads(result["content"])["success"] is True
    assert "services" in json.loads(result["content"])["data"]
    assert second["messages"][2]["tool_calls"][0]["function"]["name"] == "list_services"


def test_composed_task_answered_without_its_changes_scores_below_one(
    llm_server: ScriptedLLMServer, composed: TaskRecord
) -> None:
    reference = reference_of(composed)
    reads = [m for m in reference if m["role"] != "assistant" or "make the change" not in str(m["content"])]
    llm_server.push(*replies_of(reads))
    record = policy_for(llm_server).rollout(ComposedTarget(composed), 0)
    assert record.verdict == "ok" and record.reward < 1.0
    assert record.criteria is not None and not all(record.criteria.values()) and any(record.criteria.values())
    assert 0.0 < float(record.detail["checklist"]) < 1.0  # type: ignore[arg-type]


# -- failure paths (on the composed task: fast, no sandbox) ----------------------------------------------
def test_malformed_replies_are_fed_back_and_survived(
    llm_server: ScriptedLLMServer, composed: TaskRecord
) -> None:
    llm_server.push(
        Reply(tool_calls=[tool_call("list_tools", '{"service": "mail"', "call_bad_json")]),
        Reply(tool_calls=[tool_call("delete_everything", {}, "call_unknown")]),
        Reply(content=""),
        *replies_of(reference_of(composed)),
    )
    record = policy_for(llm_server).rollout(ComposedTarget(composed), 0)
    assert (record.reward, record.verdict, record.detail["malformed"]) == (1.0, "ok", 3)
    bad_json = tool_messages(llm_server.requests[1])[0]
    assert bad_json["tool_call_id"] == "call_bad_json"
    assert json.loads(bad_json["content"])["error"]["code"] == 400
    unknown = tool_messages(llm_server.requests[2])[1]
    assert json.loads(unknown["content"])["error"]["code"] == 404 and "submit_answer" in unknown["content"]
    assert "empty" in llm_server.requests[3]["messages"][-1]["content"]


def test_a_model_that_only_replies_malformed_ends_with_llm_error(
    llm_server: ScriptedLLMServer, composed: TaskRecord
) -> None:
    llm_server.push(*[Reply(tool_calls=[tool_call("nope", {}, f"c{i}")]) for i in range(20)])
    record = policy_for(llm_server, max_steps=50).rollout(ComposedTarget(composed), 0)
    assert record.verdict == "llm_error" and "malformed" in str(record.detail["error"])
    assert len(llm_server.requests) == 6 and record.reward == 0.0


def test_a_reply_slower_than_the_wall_clock_limit_ends_the_episode_as_a_timeout(
    llm_server: ScriptedLLMServer, composed: TaskRecord
) -> None:
    reference = replies_of(reference_of(composed))
    llm_server.push(*reference[:3], Reply(content="too late", delay_sec=10.0))
    started = time.monotonic()
    record = policy_for(llm_server, timeout_sec=2.5).rollout(ComposedTarget(composed), 0)
    assert 2.5 <= time.monotonic() - started < 6.0  # the stalled request is abandoned, not awaited
    assert (record.verdict, record.steps, record.reward) == ("timeout", 3, 0.0)
    assert "no reply within" in str(record.detail["error"]) and len(llm_server.requests) == 4


class ClosingServer(ScriptedLLMServer):
    """A scripted server that can go away mid-episode: once `gone`, requests get no answer."""

    def __init__(self) -> None:
        super().__init__()
        self.gone = threading.Event()

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        if self.gone.is_set():
            raise ConnectionAbortedError("the server is gone")  # the handler dies, the socket closes
        return super()._next_reply(body)


def test_a_server_that_goes_away_mid_episode_ends_it_with_llm_error(composed: TaskRecord) -> None:
    reference = replies_of(reference_of(composed))
    server = ClosingServer()
    with server:

        def last_words(_body: dict[str, Any]) -> Reply:
            server.gone.set()
            threading.Thread(target=server.stop, daemon=True).start()
            return reference[2]

        server.push(reference[0], reference[1], last_words)
        record = policy_for(server).rollout(ComposedTarget(composed), 0)
    assert record.verdict == "llm_error" and record.steps == 3
    assert record.detail["failed_requests"] == 3  # the first attempt and two retries
    assert "after 3 attempt(s)" in str(record.detail["error"]) and record.reward == 0.0


def test_a_failed_request_is_retried_and_the_episode_goes_on(
    llm_server: ScriptedLLMServer, composed: TaskRecord
) -> None:
    llm_server.push(Reply(status=503, content="warming up"), *replies_of(reference_of(composed)))
    record = policy_for(llm_server).rollout(ComposedTarget(composed), 0)
    assert (record.verdict, record.reward, record.detail["failed_requests"]) == ("ok", 1.0, 1)
    assert "error" not in record.detail


def test_the_step_limit_ends_an_endless_tool_caller(
    llm_server: ScriptedLLMServer, composed: TaskRecord
) -> None:
    llm_server.push(*[Reply(tool_calls=[tool_call("list_services", {}, f"c{i}")]) for i in range(10)])
    record = policy_for(llm_server, max_steps=3).rollout(ComposedTarget(composed), 0)
    assert (record.verdict, record.steps, len(llm_server.requests)) == ("step_limit", 3, 4)
    assert record.reward == 0.0 and record.detail["malformed"] == 0


def test_a_cached_episode_replays_without_requests_and_other_indices_sample_afresh(
    llm_server: ScriptedLLMServer, composed: TaskRecord, tmp_path: Path
) -> None:
    reference = replies_of(reference_of(composed))
    llm_server.push(*reference, *reference)
    policy = policy_for(llm_server, cache_dir=tmp_path / "cache")
    first = policy.rollout(ComposedTarget(composed), 0)
    sent = len(llm_server.requests)
    again = policy.rollout(ComposedTarget(composed), 0)
    assert len(llm_server.requests) == sent and again.detail["cached_calls"] == sent
    assert again.reward == first.reward == 1.0
    policy.rollout(ComposedTarget(composed), 1)
    assert len(llm_server.requests) == 2 * sent
    assert isinstance(policy, LLMAgentPolicy) and policy.usage().cached_calls == sent


def test_the_policy_needs_a_model_and_its_key_and_an_injected_llm_works_offline(composed: TaskRecord) -> None:
    with pytest.raises(ConfigError, match="needs a model"):
        build_policy(PolicyConfig(kind="llm"))
    with pytest.raises(ConfigError, match="ENVPIPELINE_TEST_NO_SUCH_KEY"):
        build_policy(PolicyConfig(kind="llm", model="openai/x", api_key_env="ENVPIPELINE_TEST_NO_SUCH_KEY"))
    scripted = ScriptedLLM([LLMResponse(content="I cannot do that.")])
    record = LLMAgentPolicy(PolicyConfig(kind="llm"), llm=scripted).rollout(ComposedTarget(composed), 2)
    assert (record.verdict, record.submission, record.index, record.reward) == (
        "ok",
        "I cannot do that.",
        2,
        0.0,
    )


# -- terminal: a shell agent in the sandbox ---------------------------------------------------------
@pytest.fixture(scope="module")
def bundle_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from envpipeline.terminal.seeds import materialize_seed

    root = tmp_path_factory.mktemp("llm-bundles")
    materialize_seed(TERMINAL_SEED, root)
    return root / TERMINAL_SEED


def test_terminal_bundle_solved_through_exec_scores_one_and_idling_scores_zero(
    llm_server: ScriptedLLMServer, bundle_dir: Path, local_sandbox
) -> None:
    solve = (bundle_dir / "solution" / "solve.sh").read_text()
    target = TerminalTarget(bundle_dir=bundle_dir, sandbox=local_sandbox)
    llm_server.push(
        Reply(content="Look first.", tool_calls=[tool_call("exec", {"command": "ls input"}, "call_1")]),
        Reply(tool_calls=[tool_call("exec", {"command": solve}, "call_2")]),
        submit("done"),
    )
    record = policy_for(llm_server).rollout(target, 0)
    assert (record.reward, record.verdict, record.steps, record.family) == (1.0, "ok", 2, "terminal")
    assert record.criteria == {"tests": True} and record.task_id == TERMINAL_SEED
    assert [t["function"]["name"] for t in llm_server.requests[0]["tools"]] == ["exec", "submit_answer"]
    listing = tool_messages(llm_server.requests[1])[0]["content"]
    assert listing.startswith("exit=0") and "orders.json" in listing
    assert tool_messages(llm_server.requests[2])[1]["content"].startswith("exit=0")

    llm_server.push(Reply(content="I would rather not."))
    idle = policy_for(llm_server).rollout(target, 1)
    assert (idle.reward, idle.verdict, idle.steps, idle.criteria) == (0.0, "ok", 0, {"tests": False})

    # the model stalls after solving: the episode times out and is scored on the state it reached
    llm_server.push(
        Reply(tool_calls=[tool_call("exec", {"command": solve}, "call_1")]), Reply(delay_sec=10.0)
    )
    stalled = policy_for(llm_server, timeout_sec=4.0).rollout(target, 2)
    assert (stalled.verdict, stalled.reward, stalled.steps) == ("timeout", 1.0, 1)

    # writing the reward file instead of solving is caught by the verifier, not rewarded
    forge = "mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt"
    llm_server.push(
        Reply(tool_calls=[tool_call("exec", {"command": forge}, "call_1")]), Reply(content="done")
    )
    cheat = policy_for(llm_server).rollout(target, 3)
    assert (cheat.verdict, cheat.reward, cheat.detail["loop_verdict"]) == ("tampered", 0.0, "ok")


# -- world: web, shell and MCP tools ------------------------------------------------------------------
@pytest.fixture(scope="module")
def world_task(tmp_path_factory: pytest.TempPathFactory):
    from envpipeline.worlds.agents import ScriptedAgent
    from envpipeline.worlds.build import build_world
    from envpipeline.worlds.personas import generate_persona
    from envpipeline.worlds.tasks import generate_task, prepare_initial

    root = tmp_path_factory.mktemp("llm-worlds")
    build = build_world(generate_persona(0, 1), 1, root, live_health=False, replay=False)
    day_dir = Path(build.root) / "day-01"
    task = generate_task(day_dir, 0)
    assert task is not None
    work = prepare_initial(task, day_dir, root / "reference" / day_dir.name)
    trajectory = ScriptedAgent(seed="llm", skill="expert", error_rate=0.0).run(task, work).trajectory
    shutil.rmtree(root / "reference")
    return task, day_dir, trajectory


def test_world_task_solved_through_its_interfaces_scores_one(
    llm_server: ScriptedLLMServer, world_task
) -> None:
    task, day_dir, trajectory = world_task
    llm_server.push(*replies_of(trajectory))
    record = policy_for(llm_server).rollout(WorldTarget(task=task, day_dir=day_dir), 0)
    assert (record.reward, record.verdict, record.family) == (1.0, "ok", "world")
    assert record.criteria is not None and record.criteria.keys() == {c.id for c in task.criteria}
    assert record.detail["checklist"] == 1.0
    offered = {t["function"]["name"] for t in llm_server.requests[0]["tools"]}
    assert {"web__request", "cli__exec", "submit_answer"} <= offered
    assert any(name.startswith("mcp__") for name in offered)
    used = {c["function"]["name"] for r in replies_of(trajectory) for c in r.tool_calls or []}
    assert len({name.split("__")[0] for name in used}) >= 2  # the task crosses interfaces

    llm_server.push(Reply(content="Done."))
    idle = policy_for(llm_server).rollout(WorldTarget(task=task, day_dir=day_dir), 1)
    assert idle.reward == 0.0 and idle.criteria is not None and not all(idle.criteria.values())
