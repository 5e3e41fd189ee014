"""verl tool adapter: `EnvpipelineTool`, a ``verl.tools.base_tool.BaseTool`` that runs our episodes.

One tool-config entry per agent tool (`envpipeline.trainers.verl_config` writes them), all with
``class_name: envpipeline.trainers.verl_tool.EnvpipelineTool``. Interface facts, from verl 0.9.1
(``verl/tools/base_tool.py``, ``verl/experimental/agent_loop/tool_agent_loop.py``,
``verl/utils/dataset/rl_dataset.py``, ``verl/experimental/reward_loop/reward_manager/naive.py``):

- ``RLHFDataset.__getitem__`` copies ``extra_info["tools_kwargs"]`` into the sample as stored, so a
  JSON-string column arrives as ``str``. ``ToolAgentLoop._call_tool`` then runs
  ``tools_kwargs.get(tool_name, {})`` *before* our tool is reached: on a ``str`` that raises, and
  verl turns it into "Error executing tool ..." with reward 0. Rows must therefore store
  ``tools_kwargs`` as a struct (tool name -> {"create_kwargs": ...}); ``create_kwargs`` itself
  may be a dict or a JSON string — this tool accepts both (`parse_kwargs`).
- ``_call_tool`` creates, executes and releases a *new* tool instance for every single call, and
  passes ``agent_data`` (``request_id``, ``tools_kwargs``, ``extra_fields``) to ``execute``. The
  episode therefore lives per trajectory (keyed by ``agent_data.request_id``), not per instance,
  in a table shared by every tool of one config (verl builds one tool object per name):
  consecutive calls of one rollout, to any of its tools, act on one live environment. Without ``agent_data`` (older
  verl, direct use) the instance id is the key, so create/execute.../calc_reward/release works too.
- After every call the episode's evidence (`episode_evidence`) is written to
  ``agent_data.extra_fields["envpipeline"]``; verl's reward managers merge ``extra_fields`` into
  the ``extra_info`` given to ``compute_score``, so `envpipeline.trainers.verl_reward` scores
  from the environment.

Where a trajectory's episode comes from, first hit wins: ``create_kwargs["env_spec"]`` (dict or
JSON), any tool's ``create_kwargs["env_spec"]`` in ``agent_data.tools_kwargs``, else
``create_kwargs["task_id"]`` looked up in the tool config's ``data_files`` (our exported verl
Parquet, whose ``extra_info.env_spec`` carries the spec), else the lake at ``config["home"]``.

Importing this module needs no verl; the class is built on first access (``pip install verl``).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from envpipeline.errors import ConfigError
from envpipeline.models.env_spec import EnvSpec
from envpipeline.trainers.adapter_common import EVIDENCE_KEY, episode_evidence, parse_kwargs
from envpipeline.trainers.episode import Episode, build_episode
from envpipeline.trainers.from_row import spec_in_row, spec_of_row

TOOL_CLASS = "envpipeline.trainers.verl_tool.EnvpipelineTool"
MAX_LIVE_EPISODES = 1024


def create_kwargs_for(tools_kwargs: Any, tool: str) -> dict[str, Any]:
    """The ``create_kwargs`` of `tool` in a row's ``tools_kwargs``; each level a dict or JSON string."""
    entry = parse_kwargs(tools_kwargs, "tools_kwargs").get(tool)
    return parse_kwargs(parse_kwargs(entry, f"tools_kwargs[{tool!r}]").get("create_kwargs"), "create_kwargs")


def inline_spec(create_kwargs: Mapping[str, Any], tools_kwargs: Any = None) -> EnvSpec | None:
    """The spec carried by these create kwargs, else by any tool's create kwargs in ``tools_kwargs``."""
    spec = spec_in_row(create_kwargs)
    if spec is not None:
        return spec
    for tool in parse_kwargs(tools_kwargs, "tools_kwargs"):
        spec = spec_in_row(create_kwargs_for(tools_kwargs, tool))
        if spec is not None:
            return spec
    return None


def specs_from_files(paths: Sequence[str | Path]) -> dict[str, EnvSpec]:
    """task id -> spec of every row (Parquet or JSON lines) that carries an ``env_spec``."""
    import pyarrow.parquet as pq

    specs: dict[str, EnvSpec] = {}
    for path in paths:
        path = Path(path)
        if not path.exists():
            raise ConfigError(f"tool config data file {path} does not exist")
        if path.suffix == ".jsonl":
            rows = [
                json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
            ]
        else:
            rows = pq.read_table(path).to_pylist()
        for row in rows:
            spec = spec_in_row(row)
            if spec is not None:
                specs[spec.task_id] = spec
    return specs


class EpisodeTable:
    """Live episodes by trajectory key, oldest closed first beyond `capacity` (verl never says when)."""

    def __init__(self, config: Mapping[str, Any] | None = None, capacity: int = MAX_LIVE_EPISODES) -> None:
        self.config = dict(config or {})
        self.capacity = int(self.config.get("max_live_episodes", capacity))
        self.episodes: OrderedDict[str, Episode] = OrderedDict()
        self._specs: dict[str, EnvSpec] | None = None

    def _spec(self, create_kwargs: Mapping[str, Any], tools_kwargs: Any) -> EnvSpec:
        spec = inline_spec(create_kwargs, tools_kwargs)
        if spec is not None:
            return spec
        task_id = create_kwargs.get("task_id")
        if self._specs is None:
            self._specs = specs_from_files(self.config.get("data_files") or [])
        if isinstance(task_id, str) and task_id in self._specs:
            return self._specs[task_id]
        return spec_of_row(dict(create_kwargs), home=self.config.get("home"))

    def get(self, key: str, create_kwargs: Mapping[str, Any], tools_kwargs: Any = None) -> Episode:
        """The trajectory's episode, built on its first call."""
        if key in self.episodes:
            self.episodes.move_to_end(key)
            return self.episodes[key]
        episode = build_episode(
            self._spec(create_kwargs, tools_kwargs), **self.config.get("episode_options", {})
        )
        self.episodes[key] = episode
        while len(self.episodes) > self.capacity:
            _, oldest = self.episodes.popitem(last=False)
            oldest.close()
        return episode

    def close(self, key: str) -> None:
        """Close and forget one trajectory's episode (no-op when unknown)."""
        episode = self.episodes.pop(key, None)
        if episode is not None:
            episode.close()


_TABLES: dict[str, EpisodeTable] = {}


def shared_table(config: Mapping[str, Any]) -> EpisodeTable:
    """The one table of every tool built from the same config: a rollout's calls to *different*
    tools (verl builds one tool object per name) must reach the same live episode."""
    key = json.dumps(dict(config), sort_keys=True, default=str)
    if key not in _TABLES:
        _TABLES[key] = EpisodeTable(config)
    return _TABLES[key]


def trajectory_key(instance_id: str, agent_data: Any = None) -> str:
    """``agent_data.request_id`` (one per rollout in verl's agent loop), else the instance id."""
    request_id = getattr(agent_data, "request_id", None)
    return f"request:{request_id}" if request_id else f"instance:{instance_id}"


def _build_tool_class() -> type:
    try:
        from verl.tools.base_tool import BaseTool  # pyright: ignore[reportMissingImports]
        from verl.tools.schemas import OpenAIFunctionToolSchema, ToolResponse  # pyright: ignore[reportMissingImports]
    except ImportError as e:  # pragma: no cover - depends on the trainer's environment
        raise ImportError(
            "envpipeline.trainers.verl_tool.EnvpipelineTool needs verl: pip install verl (see docs/trainers/verl.md)"
        ) from e

    class EnvpipelineTool(BaseTool):
        """One of an episode's tools for verl's tool agent loop (see the module docstring)."""

        def __init__(self, config: dict, tool_schema: OpenAIFunctionToolSchema) -> None:
            super().__init__(config, tool_schema)
            self.table = shared_table(config)
            self.instances: dict[str, dict[str, Any]] = {}

        async def create(self, instance_id: str | None = None, **kwargs: Any) -> tuple[str, ToolResponse]:
            instance_id = instance_id or str(uuid.uuid4())
            self.instances[instance_id] = {
                "create_kwargs": parse_kwargs(kwargs.get("create_kwargs"), "create_kwargs")
            }
            return instance_id, ToolResponse()

        def episode(self, instance_id: str, agent_data: Any = None) -> Episode:
            """The live episode of this instance's trajectory."""
            instance = self.instances.setdefault(instance_id, {"create_kwargs": {}})
            key = instance.setdefault("key", trajectory_key(instance_id, agent_data))
            return self.table.get(key, instance["create_kwargs"], getattr(agent_data, "tools_kwargs", None))

        async def execute(
            self, instance_id: str, parameters: dict[str, Any], **kwargs: Any
        ) -> tuple[ToolResponse, float, dict]:
            agent_data = kwargs.get("agent_data")
            # In a worker thread: verl runs tools inside its event loop, and a world episode drives
            # its MCP server with its own anyio.run, which cannot start inside a running loop.
            episode = await asyncio.to_thread(self.episode, instance_id, agent_data)
            observation = await asyncio.to_thread(episode.call, self.name, parameters)
            evidence = await asyncio.to_thread(episode_evidence, episode)
            if agent_data is not None and isinstance(getattr(agent_data, "extra_fields", None), dict):
                agent_data.extra_fields[EVIDENCE_KEY] = evidence
            return ToolResponse(text=observation), 0.0, {"calls": evidence["calls"]}

        async def calc_reward(self, instance_id: str, **kwargs: Any) -> float:
            mode = str(kwargs.get("mode") or self.config.get("reward_mode", "binary"))
            episode = await asyncio.to_thread(self.episode, instance_id, kwargs.get("agent_data"))
            return await asyncio.to_thread(episode.reward, mode)  # pyright: ignore[reportArgumentType]

        async def release(self, instance_id: str, **kwargs: Any) -> None:
            instance = self.instances.pop(instance_id, None)
            if instance and str(instance.get("key", "")).startswith("instance:"):
                self.table.close(instance["key"])

    return EnvpipelineTool


_CLASSES: dict[str, type] = {}


def __getattr__(name: str) -> Any:
    """``EnvpipelineTool`` is built (importing verl) on first access, e.g. by verl's tool registry."""
    if name == "EnvpipelineTool":
        if name not in _CLASSES:
            _CLASSES[name] = _build_tool_class()
        return _CLASSES[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
