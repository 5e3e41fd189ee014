"""OpenRLHF 0.11.2, for real: its MultiTurnAgentExecutor runs one episode through our agent file."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pyarrow.parquet as pq
import pytest

from tests.trainers.adapter_fixtures import composed_export, reference_calls
from tests.trainers.tiny import tiny_tokenizer

pytest.importorskip("openrlhf.utils.agent")
AGENT_FILE = Path(__file__).resolve().parents[2] / "envpipeline" / "trainers" / "openrlhf_agent.py"


class ScriptedEngine:
    """OpenRLHF's ``llm_engine.generate`` contract, replaying fixed assistant actions."""

    def __init__(self, actions: list[str], tokenizer: Any) -> None:
        self.actions, self.tokenizer, self.prompts = list(actions), tokenizer, []

    async def generate(
        self, prompt_tokens: list[int], sampling_params: Any, multi_modal_data: Any = None
    ) -> Any:
        self.prompts.append(self.tokenizer.decode(prompt_tokens))
        text = self.actions.pop(0) if self.actions else "done"
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        return SimpleNamespace(
            outputs=[SimpleNamespace(token_ids=ids, text=text, finish_reason="stop", logprobs=None)]
        )


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    return composed_export(tmp_path_factory.mktemp("openrlhf"))


def load_executor() -> Any:
    """Load the agent file as ``openrlhf/trainer/ray/vllm_engine.py::_load_agent_executor`` does (that
    module itself imports vllm, which a CPU test venv does not have)."""
    from openrlhf.utils.agent import AgentExecutorBase, MultiTurnAgentExecutor

    spec = importlib.util.spec_from_file_location("agent_module", AGENT_FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert hasattr(module, "AgentExecutor") and issubclass(module.AgentExecutor, AgentExecutorBase)
    executor = module.AgentExecutor()
    assert isinstance(executor, MultiTurnAgentExecutor)
    return executor


def episode_run(export: tuple[Path, Any], actions_of: Any) -> tuple[dict[str, Any], ScriptedEngine]:
    out, tasks = export
    row = pq.read_table(out / "trl-rl" / "rl.parquet").to_pylist()[0]
    task = next(t for t in tasks if t.task_id == row["task_id"])
    tokenizer = tiny_tokenizer([json.dumps(t.model_dump()) for t in tasks])
    engine = ScriptedEngine(actions_of(task), tokenizer)
    prompt = tokenizer.apply_chat_template(row["prompt"], tokenize=False, add_generation_prompt=True)
    params = SimpleNamespace(max_tokens=None, logprobs=None)
    result = asyncio.run(load_executor().execute(prompt, row["env_spec"], params, 10**6, tokenizer, engine))
    return result, engine


def replay_actions(task: Any) -> list[str]:
    calls, final = reference_calls(task)
    actions = [f"<tool_call>{json.dumps({'name': n, 'arguments': a})}</tool_call>" for n, a in calls]
    return [
        *actions,
        f"<tool_call>{json.dumps({'name': 'submit_answer', 'arguments': {'answer': final}})}</tool_call>",
    ]


def test_openrlhf_runs_a_multi_turn_reference_episode_to_reward_one(
    export: tuple[Path, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ENVPIPELINE_REWARD_MODE", "binary")
    result, engine = episode_run(export, replay_actions)
    assert len(result["action_ranges"]) == len(engine.prompts) > 2  # one range per assistant turn
    assert "tool_response" in engine.prompts[1] and "success" in engine.prompts[1]  # observation fed back
    assert result["reward"] == 1.0
    assert float(result["extra_logs"]["full_pass"]) == 1.0


def test_openrlhf_nop_episode_scores_zero(export: tuple[Path, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENVPIPELINE_REWARD_MODE", "binary")
    result, engine = episode_run(export, lambda _task: ["I did nothing."])
    assert len(engine.prompts) == 1 and result["reward"] == 0.0
    monkeypatch.setenv("ENVPIPELINE_REWARD_MODE", "checklist")
    checklist, _ = episode_run(export, lambda _task: ["I did nothing."])
    assert checklist["reward"] < 1.0 and float(checklist["extra_logs"]["full_pass"]) == 0.0
