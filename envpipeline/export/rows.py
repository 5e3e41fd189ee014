"""Trainer rows from accepted tasks: verl / SkyRL / TRL RL rows and verl / TRL SFT rows.

Row schemas (all ids and rubrics are strings; varying payloads are JSON strings):

* verl RL: ``data_source`` ("envpipeline/<family>"), ``prompt`` ([system, user] chat messages),
  ``ability``, ``reward_model`` {"style": "rule", "ground_truth": rubric JSON}, ``extra_info``
  {"index", "split", "task_id", "family", "rubric", "tools_kwargs", "interaction_kwargs", "env_spec"}
  — the same keys and types on every row, the last four JSON strings — and ``agent_name``
  "tool_agent". ``env_spec`` is the versioned `envpipeline.models.env_spec.EnvSpec` a rollout
  worker rebuilds the live environment from with no lake (`envpipeline.trainers.episode_from_row`).
* SkyRL: the verl row with ``reward_spec`` {"method": "rule", "ground_truth"} instead of
  ``reward_model``, ``env_class`` "envpipeline" instead of ``agent_name``.
* TRL / verifiers RL: ``prompt``, ``answer`` (rubric JSON), ``info`` (JSON string: task_id, family,
  rubric, tools), plus ``task_id``, ``family``, ``split``, ``data_source``, ``env_spec`` and
  ``environment`` (the family: TRL's multi-environment key) columns
  (all columns but ``prompt`` reach TRL reward functions as keyword lists and
  ``environment_factory`` resets as keyword arguments).
* verl multi-turn SFT: ``messages`` (tool-call ``arguments`` as dicts, as HF chat templates want),
  ``tools`` (flat schemas), ``task_id``, ``family``.
* TRL SFT: ``messages`` (arguments as dicts), ``messages_wire`` (arguments as JSON strings, the
  OpenAI/litellm wire format), ``tools``, ``tools_json`` (exact JSON), ``task_id``, ``family``.

Parquet stores a list of structs with ONE struct type per column, so arguments and tool
properties are the union of every key seen; a key a given call/tool lacks reads back as null. Use
`strip_nulls` on loaded rows (or the exact ``messages_wire`` / ``tools_json``) where that matters.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from envpipeline.export.schemas import flatten_schema
from envpipeline.models.dataset import AcceptedTask

__all__ = [
    "flatten_schema",
    "prompt_messages",
    "skyrl_row",
    "strip_nulls",
    "trl_rl_row",
    "trl_sft_row",
    "verl_rl_row",
    "verl_sft_row",
    "with_dict_arguments",
    "with_string_arguments",
]

ABILITY = {"compose": "tool_use", "world": "computer_use", "terminal": "terminal"}
SKYRL_ENV_CLASS = "envpipeline"


def prompt_messages(task: AcceptedTask) -> list[dict[str, str]]:
    """The RL prompt: the family's system message and the instruction."""
    return [{"role": "system", "content": task.system_prompt}, {"role": "user", "content": task.instruction}]


def _tools_kwargs(task: AcceptedTask) -> dict[str, Any]:
    return {t["function"]["name"]: {"create_kwargs": {"task_id": task.task_id}} for t in task.tool_schemas()}


def _extra_info(task: AcceptedTask, split: str, index: int) -> dict[str, Any]:
    interaction = {"name": "envpipeline", "task_id": task.task_id, "family": task.family}
    return {
        "index": index,
        "split": split,
        "task_id": task.task_id,
        "family": task.family,
        "rubric": task.criteria,
        "tools_kwargs": json.dumps(_tools_kwargs(task), sort_keys=True),
        "interaction_kwargs": json.dumps(interaction, sort_keys=True),
        "env_spec": task.env_spec,
    }


def verl_rl_row(task: AcceptedTask, split: str, index: int) -> dict[str, Any]:
    """One verl RL row (schema in the module docstring)."""
    return {
        "data_source": f"envpipeline/{task.family}",
        "prompt": prompt_messages(task),
        "ability": ABILITY[task.family],
        "reward_model": {"style": "rule", "ground_truth": task.criteria},
        "extra_info": _extra_info(task, split, index),
        "agent_name": "tool_agent",
    }


def skyrl_row(task: AcceptedTask, split: str, index: int) -> dict[str, Any]:
    """One SkyRL row: the verl row with reward_spec and env_class."""
    return {
        "data_source": f"envpipeline/{task.family}",
        "prompt": prompt_messages(task),
        "ability": ABILITY[task.family],
        "env_class": SKYRL_ENV_CLASS,
        "reward_spec": {"method": "rule", "ground_truth": task.criteria},
        "extra_info": _extra_info(task, split, index),
    }


def trl_rl_row(task: AcceptedTask, split: str, index: int) -> dict[str, Any]:
    """One TRL / verifiers RL row: prompt, answer (the rubric), info JSON and plain columns."""
    info = {
        "task_id": task.task_id,
        "family": task.family,
        "rubric": task.criteria,
        "tools": task.tools,
        "index": index,
        "split": split,
    }
    return {
        "prompt": prompt_messages(task),
        "answer": task.criteria,
        "info": json.dumps(info, sort_keys=True),
        "task_id": task.task_id,
        "family": task.family,
        "split": split,
        "data_source": f"envpipeline/{task.family}",
        "env_spec": task.env_spec,
        # TRL's multi-environment mode picks the environment_factory entry named here
        # (envpipeline.trainers.trl_env.environment_factories); a single factory ignores it
        "environment": task.family,
    }


def _map_arguments(messages: list[dict[str, Any]], to_dict: bool) -> list[dict[str, Any]]:
    out = copy.deepcopy(messages)
    for message in out:
        for call in message.get("tool_calls") or []:
            arguments = call["function"].get("arguments")
            if to_dict and isinstance(arguments, str):
                call["function"]["arguments"] = json.loads(arguments) if arguments.strip() else {}
            elif not to_dict and not isinstance(arguments, str):
                call["function"]["arguments"] = json.dumps(arguments or {}, ensure_ascii=False)
    return out


def with_dict_arguments(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tool-call arguments as dicts (HF chat templates)."""
    return _map_arguments(messages, to_dict=True)


def with_string_arguments(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tool-call arguments as JSON strings (OpenAI / litellm wire format)."""
    return _map_arguments(messages, to_dict=False)


def _require_messages(task: AcceptedTask) -> list[dict[str, Any]]:
    messages = task.messages()
    if messages is None:
        raise ValueError(f"task {task.task_id} has no SFT trajectory")
    return messages


def verl_sft_row(task: AcceptedTask) -> dict[str, Any]:
    """One verl multi-turn SFT row (messages with dict arguments, flat tools)."""
    return {
        "messages": with_dict_arguments(_require_messages(task)),
        "tools": task.tool_schemas(),
        "task_id": task.task_id,
        "family": task.family,
    }


def trl_sft_row(task: AcceptedTask) -> dict[str, Any]:
    """One TRL SFT row: arguments as dicts (``messages``) and as JSON strings (``messages_wire``)."""
    messages = _require_messages(task)
    return {
        "messages": with_dict_arguments(messages),
        "messages_wire": with_string_arguments(messages),
        "tools": task.tool_schemas(),
        "tools_json": task.tools,
        "task_id": task.task_id,
        "family": task.family,
    }


def strip_nulls(value: Any) -> Any:
    """Drop dict keys whose value is None, recursively (undoes Parquet's struct union on reading)."""
    if isinstance(value, dict):
        return {k: strip_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [strip_nulls(v) for v in value]
    return value
