"""Run our tool through verl's own ``ToolAgentLoop._call_tool`` on a sample of our exported verl rows.

Usage: ``python verl_agent_loop_probe.py <export>/verl`` (with verl's agent-loop dependencies —
hydra 1.3 — importable). Prints one JSON line: the observations verl produced for the reference
replay, the evidence left in ``agent_data.extra_fields``, the reward computed as verl's naive
reward manager calls ``compute_score``, and what the same call gives with ``tools_kwargs`` as a
JSON string (verl's own failure mode, which our rows avoid).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from verl.experimental.agent_loop.tool_agent_loop import AgentData, ToolAgentLoop
from verl.experimental.agent_loop.tool_parser import FunctionCall
from verl.tools.tool_registry import initialize_tools_from_config
from verl.utils.dataset.rl_dataset import RLHFDataset

from envpipeline.export.unified import AcceptedTask
from envpipeline.trainers.verl_reward import compute_score
from tests.trainers.adapter_fixtures import reference_calls
from tests.trainers.tiny import tiny_tokenizer


async def call(loop: Any, name: str, arguments: dict[str, Any], tools_kwargs: Any, data: AgentData) -> str:
    function_call = FunctionCall(name=name, arguments=json.dumps(arguments))
    response, _, _ = await ToolAgentLoop._call_tool(loop, function_call, tools_kwargs, data)  # pyright: ignore[reportArgumentType]
    return str(response.text)


async def main(folder: Path) -> dict[str, Any]:
    tasks = [AcceptedTask.model_validate(row) for row in _accepted(folder.parent)]
    files = sorted(str(p) for p in folder.glob("*.parquet"))
    config = {"prompt_key": "prompt", "filter_overlong_prompts": False, "cache_dir": str(folder / "cache")}
    dataset = RLHFDataset(files, tiny_tokenizer([json.dumps(t.model_dump()) for t in tasks]), config)
    sample = dataset[0]
    task = next(t for t in tasks if t.task_id == sample["extra_info"]["task_id"])
    tools = {t.name: t for t in initialize_tools_from_config(str(folder / "tool_config.yaml"))}
    loop = SimpleNamespace(tools=tools, max_tool_response_length=10**6, tool_response_truncate_side="middle")

    def agent_data(tools_kwargs: Any) -> AgentData:
        return AgentData(list(sample["raw_prompt"]), [], [], None, None, {}, "req-0", tools_kwargs)

    data = agent_data(sample["tools_kwargs"])
    calls, final = reference_calls(task)
    observations = [await call(loop, name, args, data.tools_kwargs, data) for name, args in calls]
    observations.append(await call(loop, "submit_answer", {"answer": final}, data.tools_kwargs, data))
    extra_info = dict(sample["extra_info"])
    extra_info.update(data.extra_fields.items())  # what verl's naive reward manager does
    reward = compute_score(sample["data_source"], final, sample["reward_model"]["ground_truth"], extra_info)
    as_string = json.dumps(sample["tools_kwargs"])
    broken = await call(loop, calls[0][0], calls[0][1], as_string, agent_data(as_string))
    return {
        "observations": observations,
        "evidence": data.extra_fields["envpipeline"],
        "reward": reward,
        "string_tools_kwargs_error": broken,
    }


def _accepted(out: Path) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    return pq.read_table(out / "accepted_tasks.parquet").to_pylist()


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(Path(sys.argv[1]))), default=str))
