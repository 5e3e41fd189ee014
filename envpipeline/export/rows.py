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
* verl multi-turn SFT and TRL SFT (the same columns): ``messages`` (OpenAI chat messages, tool-call
  ``arguments`` as dicts, as HF chat templates want), ``tools`` (flat OpenAI function schemas),
  ``tool_names`` (safe name -> original name, every tool of the row), ``task_id``, ``family``.

SFT ``messages``, ``tools`` and ``tool_names`` are JSON columns (`SFT_JSON_COLUMNS`): Parquet stores
each message / tool as one JSON value (Arrow's ``arrow.json`` extension type), which
``datasets.load_dataset("parquet", ...)`` reads as ``List(Json())`` / ``Json()`` features — the
representation TRL recommends for tool calling (``trl.trainer.utils.remove_none_values`` exists only
for datasets stored as structs). Every message, call and schema loads back exactly as written: no
key of another call or tool padded in with null, arguments decoded once (a dict, never a JSON string
of a JSON string). Plain ``pyarrow`` / ``pandas`` readers see the JSON text: ``json.loads`` each
value (verl's ``MultiTurnSFTDataset`` reads with pandas, so it needs that one decode step).

Tool names in SFT rows (``tools``, assistant ``tool_calls`` and ``tool`` messages' ``name``) obey
``^[a-zA-Z0-9_-]{1,64}$`` (OpenAI / Anthropic): `envpipeline.export.tool_names.safe_tool_name` maps
``cli.exec`` to ``cli__exec`` and ``web.GET /mail`` to a hashed form; ``tool_names`` undoes it.
The OpenAI wire form (arguments as JSON strings) is one call away: `with_string_arguments`.
`strip_nulls` remains for rows written by older versions (struct columns padded with null).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from envpipeline.export.schemas import flatten_schema
from envpipeline.export.tool_names import ToolNameMap
from envpipeline.models.dataset import AcceptedTask

__all__ = [
    "SFT_JSON_COLUMNS",
    "sft_tool_names",
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


#: SFT columns written as JSON values (one per list item), so each loads back exactly (see above).
SFT_JSON_COLUMNS = ("messages", "tools", "tool_names")


def _decoded_arguments(arguments: Any) -> dict[str, Any]:
    """Arguments as a dict, decoding a JSON string once; anything else is a malformed call."""
    if isinstance(arguments, str):
        arguments = json.loads(arguments) if arguments.strip() else {}
    if arguments is None:
        return {}
    if not isinstance(arguments, dict):
        raise ValueError(
            f"tool-call arguments must be a JSON object, got {type(arguments).__name__} "
            f"{str(arguments)[:80]!r} (arguments encoded twice?)"
        )
    return arguments


def _map_arguments(
    messages: list[dict[str, Any]], to_dict: bool, names: ToolNameMap | None = None
) -> list[dict[str, Any]]:
    out = copy.deepcopy(messages)
    for message in out:
        if names is not None and message.get("role") == "tool" and message.get("name"):
            message["name"] = names.safe(message["name"])
        for call in message.get("tool_calls") or []:
            function = call["function"]
            if names is not None:
                function["name"] = names.safe(function["name"])
            arguments = _decoded_arguments(function.get("arguments"))
            function["arguments"] = arguments if to_dict else json.dumps(arguments, ensure_ascii=False)
    return out


def with_dict_arguments(
    messages: list[dict[str, Any]], names: ToolNameMap | None = None
) -> list[dict[str, Any]]:
    """Tool-call arguments as dicts (HF chat templates); tool names made safe when `names` is given.

    Raises:
        ValueError: arguments that are not a JSON object once decoded (e.g. encoded twice).
    """
    return _map_arguments(messages, to_dict=True, names=names)


def with_string_arguments(
    messages: list[dict[str, Any]], names: ToolNameMap | None = None
) -> list[dict[str, Any]]:
    """Tool-call arguments as JSON strings, encoded once (OpenAI / litellm wire format)."""
    return _map_arguments(messages, to_dict=False, names=names)


def _require_messages(task: AcceptedTask) -> list[dict[str, Any]]:
    messages = task.messages()
    if messages is None:
        raise ValueError(f"task {task.task_id} has no SFT trajectory")
    return messages


def sft_tool_names(task: AcceptedTask) -> ToolNameMap:
    """Safe <-> original names of every tool the task offers or its trajectory calls."""
    offered = [t["function"]["name"] for t in task.tool_schemas()]
    called = [
        call["function"]["name"]
        for message in task.messages() or []
        for call in message.get("tool_calls") or []
    ]
    return ToolNameMap([*offered, *called])


def _safe_tool_schemas(task: AcceptedTask, names: ToolNameMap) -> list[dict[str, Any]]:
    tools = task.tool_schemas()
    for tool in tools:
        tool["function"]["name"] = names.safe(tool["function"]["name"])
    return tools


def _sft_row(task: AcceptedTask) -> dict[str, Any]:
    names = sft_tool_names(task)
    return {
        "messages": with_dict_arguments(_require_messages(task), names),
        "tools": _safe_tool_schemas(task, names),
        "tool_names": dict(sorted(names.table.items())),
        "task_id": task.task_id,
        "family": task.family,
    }


def verl_sft_row(task: AcceptedTask) -> dict[str, Any]:
    """One verl multi-turn SFT row (schema in the module docstring; JSON columns `SFT_JSON_COLUMNS`)."""
    return _sft_row(task)


def trl_sft_row(task: AcceptedTask) -> dict[str, Any]:
    """One TRL SFT row (conversational with ``tools``; the verl SFT schema, see the module docstring)."""
    return _sft_row(task)


def strip_nulls(value: Any) -> Any:
    """Drop dict keys whose value is None, recursively (undoes Parquet's struct union on reading)."""
    if isinstance(value, dict):
        return {k: strip_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [strip_nulls(v) for v in value]
    return value
