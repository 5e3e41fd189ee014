"""verl's tool config for our exports: ``verl/tool_config.yaml`` next to the verl Parquet files.

Format (verl 0.9.1 ``verl/tools/tool_registry.py`` ``initialize_tools_from_config``)::

    tools:
      - class_name: envpipeline.trainers.verl_tool.EnvpipelineTool
        config: {type: native, data_files: [...], reward_mode: binary}
        tool_schema: {type: function, function: {name, description, parameters}}

One entry per tool name an episode can expose (``submit_answer`` always included). verl
validates each ``tool_schema`` with ``verl.tools.schemas.OpenAIFunctionToolSchema``: every
parameter property needs a ``type`` (str or list) — `schema_problems` names the ones that lack it,
and the generator refuses them rather than letting verl fail at start-up.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from envpipeline.errors import ConfigError
from envpipeline.export.tool_names import VALID_TOOL_NAME, safe_tool_name
from envpipeline.models.dataset import AcceptedTask
from envpipeline.trainers.episode import SUBMIT_ANSWER_SCHEMA
from envpipeline.trainers.verl_tool import TOOL_CLASS

TOOL_CONFIG_FILE = "tool_config.yaml"


def schema_problems(schema: dict[str, Any]) -> list[str]:
    """Why verl would reject this OpenAI function schema (empty when it accepts it)."""
    function = schema.get("function") or {}
    name = str(function.get("name", ""))
    problems = []
    if schema.get("type") != "function":
        problems.append(f"{name or '?'}: type must be 'function'")
    if not VALID_TOOL_NAME.match(name):
        problems.append(f"{name!r}: the name must match ^[a-zA-Z0-9_-]{{1,64}}$")
    if not isinstance(function.get("description"), str):
        problems.append(f"{name}: description must be a string")
    parameters = function.get("parameters") or {"type": "object", "properties": {}}
    for prop, prop_schema in (parameters.get("properties") or {}).items():
        if not isinstance(prop_schema, dict) or not isinstance(prop_schema.get("type"), str | list):
            problems.append(
                f"{name}.{prop}: every parameter needs a 'type' (verl's OpenAIFunctionPropertySchema)"
            )
    return problems


def tool_config(
    tool_schemas: Iterable[dict[str, Any]],
    data_files: Sequence[str] = (),
    reward_mode: str = "binary",
    home: str | None = None,
) -> dict[str, Any]:
    """verl's tool config (a dict) for these tool schemas plus ``submit_answer``, one entry per name."""
    by_name: dict[str, dict[str, Any]] = {}
    for schema in [*tool_schemas, SUBMIT_ANSWER_SCHEMA]:
        by_name.setdefault(schema["function"]["name"], schema)
    problems = [p for schema in by_name.values() for p in schema_problems(schema)]
    if problems:
        raise ConfigError("verl would reject these tool schemas: " + "; ".join(problems))
    config: dict[str, Any] = {"type": "native", "data_files": list(data_files), "reward_mode": reward_mode}
    if home:
        config["home"] = home
    return {
        "tools": [
            {"class_name": TOOL_CLASS, "config": dict(config), "tool_schema": by_name[name]}
            for name in sorted(by_name)
        ]
    }


def write_tool_config(
    folder: str | Path,
    tool_schemas: Iterable[dict[str, Any]],
    data_files: Sequence[str | Path] = (),
    reward_mode: str = "binary",
) -> Path:
    """Write ``<folder>/tool_config.yaml``; data files are recorded as absolute paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    files = [str(Path(f).resolve()) for f in data_files]
    path = folder / TOOL_CONFIG_FILE
    path.write_text(
        yaml.safe_dump(tool_config(tool_schemas, files, reward_mode), sort_keys=False, allow_unicode=True),
        encoding="utf-8",
    )
    return path


def episode_tool_schemas(task: AcceptedTask) -> list[dict[str, Any]]:
    """The tools the task's live episode exposes (what verl must list), ``submit_answer`` aside.

    Composed and terminal tools are fixed (the meta-tools; ``exec``); a world's depend on its MCP
    server, so its episode is built from the row's ``env_spec`` (W0 inline) to list them; when
    that fails (no world at hand) the task's recorded tools are used under their safe names.
    """
    if task.family == "compose":
        from envpipeline.agents.metatools import META_TOOL_SCHEMAS

        return META_TOOL_SCHEMAS
    if task.family == "terminal":
        from envpipeline.trainers.families.terminal import EXEC_SCHEMA

        return [EXEC_SCHEMA]
    try:
        from envpipeline.models.env_spec import EnvSpec
        from envpipeline.trainers.episode import build_episode

        episode = build_episode(EnvSpec.model_validate_json(task.env_spec or ""))
        try:
            return list(episode.agent_tools().values())
        finally:
            episode.close()
    except Exception:  # noqa: BLE001 - any failure to rebuild the world falls back to the recorded tools
        schemas = []
        for schema in task.tool_schemas():
            function = dict(schema["function"], name=safe_tool_name(schema["function"]["name"]))
            schemas.append({"type": "function", "function": function})
        return schemas


def task_tool_schemas(tasks: Iterable[AcceptedTask]) -> list[dict[str, Any]]:
    """Every tool schema the tasks' episodes expose, one per name (first wins)."""
    by_name: dict[str, dict[str, Any]] = {}
    for task in tasks:
        for schema in episode_tool_schemas(task):
            by_name.setdefault(schema["function"]["name"], schema)
    return list(by_name.values())


def tool_loop_kwargs(task_id: str, tool_names: Iterable[str]) -> dict[str, dict[str, str]]:
    """A row's ``tools_kwargs`` as verl's agent loop reads it: a dict with an entry for *every* tool.

    ``ToolAgentLoop._call_tool`` calls ``tools_kwargs.get(name, {})["create_kwargs"]``-style
    lookups, so the column must be a struct (never a JSON string), and each row must name every
    tool of the tool config: Parquet fills a missing struct field with null, and a null entry
    breaks verl's ``.get`` the same way. ``create_kwargs`` is a JSON string (one Arrow type on
    every row, whatever it holds); `EnvpipelineTool` parses it.
    """
    create = json.dumps({"task_id": task_id}, sort_keys=True)
    return {name: {"create_kwargs": create} for name in sorted(set(tool_names))}


def with_tool_loop_kwargs(
    rows: Sequence[Mapping[str, Any]], tool_names: Iterable[str]
) -> list[dict[str, Any]]:
    """Copies of verl RL rows whose ``extra_info.tools_kwargs`` is `tool_loop_kwargs`."""
    names = sorted(set(tool_names))
    out = []
    for row in rows:
        info = dict(row["extra_info"])
        info["tools_kwargs"] = tool_loop_kwargs(str(info["task_id"]), names)
        out.append({**row, "extra_info": info})
    return out


def prepare_verl_export(
    rows_by_split: Mapping[str, Sequence[Mapping[str, Any]]],
    tasks: Sequence[AcceptedTask],
    folder: str | Path,
    suffix: str = "parquet",
) -> dict[str, list[dict[str, Any]]]:
    """verl rows ready for the tool agent loop, and ``<folder>/tool_config.yaml`` pointing at them."""
    schemas = task_tool_schemas(tasks)
    path = write_tool_config(folder, schemas, [Path(folder) / f"{name}.{suffix}" for name in rows_by_split])
    names = [
        t["tool_schema"]["function"]["name"]
        for t in yaml.safe_load(path.read_text(encoding="utf-8"))["tools"]
    ]
    return {name: with_tool_loop_kwargs(rows, names) for name, rows in rows_by_split.items()}
