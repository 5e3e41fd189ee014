"""verl 0.9.1, for real: RLHFDataset over our exported verl Parquet + tool config, our tool and reward.

The agent-loop check (verl's own ``ToolAgentLoop._call_tool``) runs in a subprocess: verl's agent
loop imports hydra 1.3, whose grammar needs antlr4 4.9 / omegaconf 2.3, while this venv keeps
omegaconf 2.4 for other trainers; the subprocess puts the overlay folder (docs/trainers/verl.md)
first on its path.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from envpipeline.trainers import verl_reward
from envpipeline.trainers.verl_reward import compute_score
from envpipeline.trainers.verl_tool import EVIDENCE_KEY, EnvpipelineTool  # pyright: ignore[reportAttributeAccessIssue]
from tests.trainers.adapter_fixtures import composed_export, reference_calls
from tests.trainers.tiny import tiny_tokenizer

verl_dataset = pytest.importorskip("verl.utils.dataset.rl_dataset")
OVERLAY = os.environ.get("ENVPIPELINE_VERL_OVERLAY", "/work/scratch/tvenv-verl-overlay")
PROBE = Path(__file__).with_name("verl_agent_loop_probe.py")


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    return composed_export(tmp_path_factory.mktemp("verl"))


@pytest.fixture(scope="module")
def dataset(export: tuple[Path, Any]) -> Any:
    out, tasks = export
    texts = [json.dumps(t.model_dump()) for t in tasks]
    files = sorted(str(p) for p in (out / "verl").glob("*.parquet"))
    config = {
        "prompt_key": "prompt",
        "max_prompt_length": 8192,
        "filter_overlong_prompts": True,
        "tool_config_path": str(out / "verl" / "tool_config.yaml"),
        "cache_dir": str(out / "cache"),
    }
    return verl_dataset.RLHFDataset(files, tiny_tokenizer(texts), config)


def tool_by_name(out: Path, name: str) -> Any:
    from verl.tools.tool_registry import initialize_tools_from_config

    tools = {t.name: t for t in initialize_tools_from_config(str(out / "verl" / "tool_config.yaml"))}
    assert all(isinstance(t, EnvpipelineTool) for t in tools.values())
    return tools[name]


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_rlhf_dataset_loads_rows_with_tools_kwargs_as_dicts(dataset: Any, export: tuple[Path, Any]) -> None:
    _, tasks = export
    assert len(dataset) == len(tasks)
    assert dataset.tool_schemas and {s["function"]["name"] for s in dataset.tool_schemas} >= {
        "call_tool",
        "submit_answer",
    }
    sample = dataset[0]
    assert isinstance(sample["tools_kwargs"], dict)  # verl's agent loop calls .get on it
    create = sample["tools_kwargs"]["call_tool"]["create_kwargs"]
    assert json.loads(create)["task_id"] == sample["extra_info"]["task_id"]


def test_tool_runs_a_call_from_a_dataset_sample_and_changes_state(
    dataset: Any, export: tuple[Path, Any]
) -> None:
    out, tasks = export
    sample = dataset[0]
    task = next(t for t in tasks if t.task_id == sample["extra_info"]["task_id"])
    calls, _ = reference_calls(task)
    tools = {name: tool_by_name(out, name) for name in ("call_tool", "list_services")}
    create_kwargs = sample["tools_kwargs"]["call_tool"]["create_kwargs"]  # a JSON string, as stored
    instance_id, _ = run(tools["call_tool"].create(create_kwargs=create_kwargs))
    episode = tools["call_tool"].episode(instance_id)
    before = json.dumps(episode.toolbox.env.snapshot(), sort_keys=True, default=str)
    writes = [(name, args) for name, args in calls if name == "call_tool"]
    observations = [run(tools["call_tool"].execute(instance_id, args))[0].text for _, args in writes]
    assert observations and all(json.loads(o)["success"] for o in observations), observations
    assert "Error" not in observations[0]
    after = json.dumps(episode.toolbox.env.snapshot(), sort_keys=True, default=str)
    assert after != before  # the reference's writes changed the live state


def test_calc_reward_is_one_after_the_reference_replay_and_zero_for_a_nop(export: tuple[Path, Any]) -> None:
    out, tasks = export
    tool = tool_by_name(out, "call_tool")
    for task in tasks:
        calls, final = reference_calls(task)
        create = {"create_kwargs": json.dumps({"task_id": task.task_id})}
        replay, _ = run(tool.create(**create))
        nop, _ = run(tool.create(**create))
        episode = tool.episode(replay)
        for name, args in calls:
            episode.call(name, args)  # list/describe calls through the same live episode
        run(tool.execute(replay, {"tool": "nonexistent.tool", "arguments": {}}))
        episode.submit_answer(final)
        assert run(tool.calc_reward(replay)) == 1.0
        assert run(tool.calc_reward(nop)) == 0.0
        run(tool.release(replay))
        run(tool.release(nop))
        assert not {f"instance:{replay}", f"instance:{nop}"} & set(tool.table.episodes)  # released


def test_compute_score_uses_the_environment_evidence_and_says_text_only_without(
    export: tuple[Path, Any],
) -> None:
    out, tasks = export
    tool = tool_by_name(out, "call_tool")
    task = tasks[0]
    calls, final = reference_calls(task)
    instance, _ = run(tool.create(create_kwargs={"task_id": task.task_id}))
    episode = tool.episode(instance)
    for name, args in calls:
        episode.call(name, args)
    from envpipeline.trainers.adapter_common import episode_evidence

    evidence = episode_evidence(episode)  # as EnvpipelineTool leaves it in agent_data.extra_fields
    truth = task.criteria
    from verl.utils.import_utils import load_extern_object  # how verl loads custom_reward_function.path

    loaded = load_extern_object(module_path=str(Path(verl_reward.__file__)), object_name="compute_score")
    assert loaded("envpipeline/compose", final, truth, {EVIDENCE_KEY: {}})["source"] == "text-only"
    with_env = compute_score(
        "envpipeline/compose", f"<|im_start|>assistant {final}", truth, {EVIDENCE_KEY: evidence}
    )
    text_only = compute_score("envpipeline/compose", f"<|im_start|>assistant {final}", truth, {})
    assert with_env["score"] == 1.0 and with_env["source"] == "environment"
    assert text_only["source"] == "text-only" and text_only["score"] < 1.0
    nop_episode = tool.episode(run(tool.create(create_kwargs={"task_id": task.task_id}))[0])
    nop = compute_score("envpipeline/compose", final, truth, {EVIDENCE_KEY: episode_evidence(nop_episode)})
    assert nop["score"] < 1.0 and nop["full_pass"] == 0.0


@pytest.mark.skipif(not Path(OVERLAY).exists(), reason=f"verl agent-loop overlay {OVERLAY} not installed")
def test_verl_agent_loop_call_tool_executes_our_tool(export: tuple[Path, Any]) -> None:
    out, _ = export
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([OVERLAY, str(Path.cwd())]))
    done = subprocess.run(
        [sys.executable, str(PROBE), str(out / "verl")], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert all(not text.startswith("Error") for text in result["observations"]), result
    assert json.loads(result["observations"][0])["success"] is True
    assert result["evidence"]["calls"] == len(result["observations"]) - 1  # submit_answer is not a tool call
    assert result["reward"]["source"] == "environment" and result["reward"]["score"] == 1.0
    assert result["string_tools_kwargs_error"].startswith("Error executing tool")


def test_a_world_episode_runs_through_the_tools_of_one_rollout(tmp_path: Path) -> None:
    """World tools (web, CLI, MCP) called as verl calls them: one tool object per name, one rollout."""
    from types import SimpleNamespace

    from verl.tools.tool_registry import initialize_tools_from_config

    from envpipeline.trainers.verl_config import task_tool_schemas, write_tool_config
    from tests.export_fixture import build_tasks

    tasks = build_tasks(tmp_path / "data")
    world = next(t for t in tasks if t.family == "world")
    path = write_tool_config(tmp_path / "verl", task_tool_schemas(tasks))
    tools = {t.name: t for t in initialize_tools_from_config(str(path))}
    create = {"create_kwargs": json.dumps({"env_spec": world.env_spec})}
    calls, final = reference_calls(world)
    assert {name for name, _ in calls} <= set(tools) and len({name for name, _ in calls}) > 1

    async def rollout(request_id: str, script: list[tuple[str, dict[str, Any]]]) -> float:
        agent_data = SimpleNamespace(request_id=request_id, tools_kwargs={}, extra_fields={})
        for name, args in script:
            instance, _ = await tools[name].create(**create)  # a new instance per call, as verl does
            text = (await tools[name].execute(instance, args, agent_data=agent_data))[0].text
            assert not text.startswith("Error"), text
            await tools[name].release(instance)
        instance, _ = await tools["submit_answer"].create(**create)
        return await tools["submit_answer"].calc_reward(instance, agent_data=agent_data)

    assert run(rollout("world-replay", [*calls, ("submit_answer", {"answer": final})])) == 1.0
    assert run(rollout("world-nop", [("submit_answer", {"answer": "done"})])) == 0.0
