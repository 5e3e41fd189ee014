"""verifiers 0.4 (``verifiers.v1``), for real: our taskset, toolset and task reward score an episode.

The toolset's tools run as verifiers' MCP wrapper runs them (a rollout `State` set for the call,
``verifiers/v1/mcp/server.py::_with_state``); the host-side scoring is verifiers' own
``Task.score`` over a `Trace` carrying that state.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.trainers.adapter_fixtures import composed_export, reference_calls

vf = pytest.importorskip("verifiers.v1")
from verifiers.v1.mcp.server import _call_state  # noqa: E402  # pyright: ignore[reportPrivateUsage]
from verifiers.v1.trace import AgentInfo, Trace, TraceTask  # noqa: E402
from verifiers.v1.utils.loaders import load_taskset  # noqa: E402

import envpipeline.trainers.verifiers_env as adapter  # noqa: E402

TASKSET_ID = "envpipeline-verifiers"


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    return composed_export(tmp_path_factory.mktemp("verifiers"))


def taskset(out: Path, mode: str = "checklist") -> Any:
    config = adapter.EnvpipelineTasksetConfig(
        id=TASKSET_ID,
        data_files=[str(p) for p in sorted((out / "trl-rl").glob("*.parquet"))],
        task=adapter.EnvpipelineTaskConfig(reward_mode=mode),
    )
    return load_taskset(config)  # verifiers' own loader finds our Taskset by its id


async def play(task: Any, calls: list[tuple[str, dict[str, Any]]]) -> Trace:
    """Run `calls` through the task's toolset under one rollout state, then score the trace."""
    toolset = type(task).toolsets(task.config)[0]
    await toolset.setup_task(task)
    state = adapter.EnvpipelineState()
    for name, arguments in calls:
        token = _call_state.set(state)  # what _with_state does around every MCP tool call
        try:
            getattr(toolset, name)(**arguments)
        finally:
            _call_state.reset(token)
    trace = Trace(
        task=TraceTask(type=type(task).__name__, data=task.data), agent=AgentInfo(config=vf.AgentConfig())
    )
    trace.state = state
    await task.score(trace)
    return trace


def test_our_taskset_loads_through_verifiers_with_tools_from_the_toolset(export: tuple[Path, Any]) -> None:
    out, tasks = export
    loaded = list(taskset(out))
    assert [t.data.id for t in loaded] and {t.data.id for t in loaded} <= {t.task_id for t in tasks}
    assert isinstance(loaded[0], adapter.EnvpipelineTask) and loaded[0].data.env_spec
    toolset = type(loaded[0]).toolsets(loaded[0].config)[0]
    tools = {fn.__name__ for fn in toolset.__class__.__dict__.values() if hasattr(fn, "tool")}
    assert tools == {"list_services", "list_tools", "describe_tool", "call_tool", "submit_answer"}


def test_reference_replay_scores_one_and_a_nop_zero(export: tuple[Path, Any]) -> None:
    out, tasks = export
    for task in taskset(out):
        record = next(t for t in tasks if t.task_id == task.data.id)
        calls, final = reference_calls(record)
        replay = asyncio.run(play(task, [*calls, ("submit_answer", {"answer": final})]))
        reward = replay.rewards["task_reward"]
        assert reward is not None and reward.score == 1.0
        assert replay.metrics["environment_seen"] == 1.0 and replay.metrics["full_pass"] == 1.0
        nop = asyncio.run(play(task, [("list_services", {})]))
        assert nop.rewards["task_reward"] is not None and nop.rewards["task_reward"].score < 1.0
        assert nop.metrics["full_pass"] == 0.0


def test_binary_mode_nop_is_zero_and_an_untouched_rollout_is_text_only(export: tuple[Path, Any]) -> None:
    out, _ = export
    task = next(iter(taskset(out, "binary")))
    nop = asyncio.run(play(task, [("list_services", {})]))
    assert nop.rewards["task_reward"] is not None and nop.rewards["task_reward"].score == 0.0
    silent = asyncio.run(play(task, []))
    assert silent.metrics["environment_seen"] == 0.0  # scored text-only, and said so
