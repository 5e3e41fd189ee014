"""OpenRLHF multi-turn agent over our episodes: ``--agent_func_path <this file>``.

Interface facts, from OpenRLHF 0.11.2 (``openrlhf/utils/agent.py``,
``openrlhf/trainer/ray/vllm_engine.py``): the file named by ``--agent_func_path`` must define
``AgentExecutor``, a subclass of ``AgentExecutorBase`` built with no arguments. Ours is a
``MultiTurnAgentExecutor`` over `EnvpipelineAgentInstance`, which OpenRLHF creates once per
prompt (no arguments) and drives with:

- ``reset({"observation": prompt, "label": label})`` -> ``{"observation": prompt}``: the label
  (``--data.label_key env_spec`` on our TRL/verifiers rows: the versioned `EnvSpec` JSON, or a JSON
  row holding ``env_spec``) builds the live episode;
- ``step({"observation_text", "action_text", "label", "sampling_params"})`` -> ``{"rewards",
  "scores", "environment_feedback", "done", "extra_logs"}``: an action holding a tool call
  (``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``) runs it and feeds the observation
  back as a ChatML tool turn; ``submit_answer``, an action without a tool call, or the turn limit
  (``$ENVPIPELINE_MAX_TURNS``, default 64) ends the episode with its reward.

OpenRLHF scores one sample at a time, so there is no group for CFRR: the reward is the episode's
``checklist`` score (``ENVPIPELINE_REWARD_MODE=binary`` for all-or-nothing), and ``extra_logs``
carry ``full_pass`` and the criteria counts. Importing this module needs neither OpenRLHF nor
torch; ``AgentExecutor`` is built on first access (``pip install openrlhf``).
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

from envpipeline.errors import ConfigError
from envpipeline.export.envs import parse_tool_call
from envpipeline.trainers.episode import REWARD_MODES, SUBMIT_ANSWER, Episode, RewardMode, build_episode
from envpipeline.trainers.from_row import spec_in_row

MAX_TURNS = 64  # reference trajectories of composed tasks take ~35 calls
# ChatML (Qwen) framing of a tool observation, and the start of the next assistant turn.
TOOL_TURN = "<|im_end|>\n<|im_start|>user\n<tool_response>\n{observation}\n</tool_response><|im_end|>\n"
NEXT_ASSISTANT = "<|im_start|>assistant\n"


def episode_from_label(label: Any) -> Episode:
    """The live episode named by an OpenRLHF label: an `EnvSpec` JSON, or a row (JSON) holding one."""
    data = json.loads(label) if isinstance(label, str | bytes) else label
    if not isinstance(data, dict):
        raise ConfigError("the OpenRLHF label must be our env_spec JSON (--data.label_key env_spec)")
    spec = spec_in_row({"env_spec": data}) if "environment" in data else spec_in_row(data)
    if spec is None:
        raise ConfigError(
            "the OpenRLHF label carries no env_spec: export rows with env_spec, --data.label_key env_spec"
        )
    return build_episode(spec)


def reward_mode() -> RewardMode:
    """``$ENVPIPELINE_REWARD_MODE`` (checklist by default)."""
    mode = os.environ.get("ENVPIPELINE_REWARD_MODE", "checklist")
    if mode not in REWARD_MODES:
        raise ConfigError(f"ENVPIPELINE_REWARD_MODE={mode!r}; choose binary or checklist")
    return mode  # pyright: ignore[reportReturnType]


class EnvpipelineAgentInstance:
    """One prompt's episode, stepped by OpenRLHF's ``MultiTurnAgentExecutor`` (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.episode: Episode | None = None
        self.turns = 0
        self.max_turns = int(os.environ.get("ENVPIPELINE_MAX_TURNS", MAX_TURNS))

    async def reset(self, states: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """Build the episode from the label; the prompt is the first observation."""
        # in a worker thread: a world episode runs its own anyio loop, which cannot nest in OpenRLHF's
        self.episode = await asyncio.to_thread(episode_from_label, states["label"])
        self.turns = 0
        return {"observation": states["observation"]}

    def _episode(self) -> Episode:
        if self.episode is None:
            raise ConfigError("reset() must run before step()")
        return self.episode

    def result(self, action: str) -> dict[str, Any]:
        """One step as plain data (``rewards``/``scores`` floats); `step` makes them tensors."""
        episode = self._episode()
        self.turns += 1
        call = parse_tool_call(action)
        final = call is None or call[0] == SUBMIT_ANSWER or self.turns >= self.max_turns
        observation = ""
        if call is not None:
            observation = episode.call(*call)
        elif not episode.answer:
            episode.submit_answer(action.replace("<|im_end|>", "").strip())
        if not final:
            feedback = TOOL_TURN.format(observation=observation) + NEXT_ASSISTANT
            return {
                "rewards": 0.0,
                "scores": 0.0,
                "environment_feedback": feedback,
                "done": False,
                "extra_logs": {},
            }
        passed = episode.criteria_passed()
        reward = episode.reward(reward_mode())
        logs = {
            "full_pass": float(bool(passed) and all(passed)),
            "criteria_passed": float(sum(passed)),
            "criteria_total": float(len(passed)),
            "tool_calls": float(episode.calls),
        }
        return {
            "rewards": reward,
            "scores": reward,
            "environment_feedback": "",
            "done": True,
            "extra_logs": logs,
        }

    async def step(self, states: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """OpenRLHF's step: run the action's tool call, or finish and score the episode."""
        import torch  # pyright: ignore[reportMissingImports]  # present wherever OpenRLHF runs

        out = await asyncio.to_thread(self.result, str(states["action_text"]))
        out["rewards"] = torch.tensor(out["rewards"], dtype=torch.float32)
        out["scores"] = torch.tensor(out["scores"], dtype=torch.float32)
        out["extra_logs"] = {k: torch.tensor(v, dtype=torch.float32) for k, v in out["extra_logs"].items()}
        return out


def _build_executor_class() -> type:
    try:
        from openrlhf.utils.agent import (  # pyright: ignore[reportMissingImports]
            AgentInstanceBase,
            MultiTurnAgentExecutor,
        )
    except ImportError as e:  # pragma: no cover - depends on the trainer's environment
        raise ImportError(
            "envpipeline.trainers.openrlhf_agent.AgentExecutor needs OpenRLHF: pip install openrlhf "
            "(see docs/trainers/openrlhf.md)"
        ) from e

    instance_cls = type("EnvpipelineAgentInstance", (EnvpipelineAgentInstance, AgentInstanceBase), {})

    class AgentExecutor(MultiTurnAgentExecutor):
        """OpenRLHF's multi-turn executor over `EnvpipelineAgentInstance`."""

        def __init__(self) -> None:
            super().__init__(instance_cls)

    return AgentExecutor


_CLASSES: dict[str, type] = {}


def __getattr__(name: str) -> Any:
    """``AgentExecutor`` is built (importing OpenRLHF) on first access, as ``--agent_func_path`` does."""
    if name == "AgentExecutor":
        if name not in _CLASSES:
            _CLASSES[name] = _build_executor_class()
        return _CLASSES[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
