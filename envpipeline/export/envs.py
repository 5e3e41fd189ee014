"""Trainer environments over one composed task: a TRL `environment_factory` class and a SkyRL env.

- `ComposedTaskEnv` (TRL ``GRPOTrainer(environment_factory=...)``): ``reset(**row)`` loads the task
  named by the row (``task_id``, or ``info``/``extra_info`` holding one, or a whole ``task``),
  rebuilds its environment from the stored initial state, and the public methods are the four
  meta-tools (``list_services``, ``list_tools``, ``describe_tool``, ``call_tool``), each returning
  the JSON observation an agent sees. ``get_reward(answer="")`` scores the final state against the
  task's criteria: binary (all pass) or, with ``reward_mode = "checklist"``, the share passed. No
  CFRR here: group rewards live in `envpipeline.export.rewards`.
- `ComposedSkyRLEnv`: a SkyRL ``BaseTextEnv`` (``skyrl_gym`` when installed; otherwise a local base
  with the same documented interface: ``init(prompt) -> (prompt, metadata)``, ``step(action) ->
  {"observations", "reward", "done", "metadata"}``). An action holding a JSON tool call
  (``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` or a bare JSON object) runs it; an
  action without one is the final answer and ends the episode with the reward.

Tasks come from ``tasks`` given to `bind` (id -> TaskRecord), else from the lake's
``verified_composed_tasks`` (accepted rows) under ``home`` or ``$ENVPIPELINE_HOME``.
"""

from __future__ import annotations

import json
import os
import re
from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypedDict

from envpipeline.agents.environment import ComposedEnvironment
from envpipeline.agents.metatools import MetaToolbox
from envpipeline.errors import ConfigError, UnknownTaskError
from envpipeline.models.task import TaskRecord
from envpipeline.rubric import pass_vector

RewardMode = Literal["binary", "checklist"]
META_TOOLS = ("list_services", "list_tools", "describe_tool", "call_tool")


def load_accepted_task(task_id: str, home: str | Path | None = None) -> TaskRecord:
    """An accepted composed task from the lake (``verified_composed_tasks``); UnknownTaskError if absent."""
    from envpipeline.store.lake import Lake
    from envpipeline.store.records import row_to_task

    lake = Lake(Path(home or os.environ.get("ENVPIPELINE_HOME", "data")).resolve())
    if "verified_composed_tasks" not in lake.assets():
        raise UnknownTaskError(f"no verified_composed_tasks in the lake at {lake.root}")
    rows = lake.query(
        "SELECT * FROM verified_composed_tasks WHERE task_id = ? AND status = 'accepted' LIMIT 1", [task_id]
    )
    if not rows:
        raise UnknownTaskError(f"no accepted composed task {task_id!r} in {lake.root}")
    return row_to_task(rows[0])


def _as_dict(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return {}
    return value if isinstance(value, dict) else {}


def task_id_of(row: dict[str, Any]) -> str | None:
    """The task id a dataset row names: ``task_id``, or inside ``info`` / ``extra_info`` (dict or JSON)."""
    if isinstance(row.get("task_id"), str):
        return row["task_id"]
    for key in ("info", "extra_info"):
        found = _as_dict(row.get(key)).get("task_id")
        if isinstance(found, str):
            return found
    return None


def score(task: TaskRecord, env: ComposedEnvironment, answer: str, mode: RewardMode = "binary") -> float:
    """Binary (1 when every criterion passes) or checklist (share of criteria passed) reward."""
    vector = pass_vector(task.criteria, env.states, answer or "")
    if not vector:
        return 0.0
    if mode == "checklist":
        return sum(vector) / len(vector)
    return float(all(vector))


class _TaskSource:
    """Where environments find their tasks (class-level, so TRL can call the class with no args)."""

    tasks: ClassVar[dict[str, TaskRecord]] = {}
    home: ClassVar[Path | None] = None
    reward_mode: ClassVar[RewardMode] = "binary"

    @classmethod
    def bind(
        cls,
        tasks: list[TaskRecord] | dict[str, TaskRecord] | None = None,
        home: str | Path | None = None,
        reward_mode: RewardMode = "binary",
    ) -> type:
        """A subclass bound to these tasks (and/or lake home): pass it as ``environment_factory``."""
        table = tasks if isinstance(tasks, dict) else {t.task_id: t for t in tasks or []}
        attrs = {"tasks": dict(table), "home": Path(home) if home else None, "reward_mode": reward_mode}
        return type(cls.__name__, (cls,), attrs)

    @classmethod
    def _resolve(cls, row: dict[str, Any]) -> TaskRecord:
        task = row.get("task")
        if isinstance(task, TaskRecord):
            return task
        if isinstance(task, dict | str) and task:
            return TaskRecord.model_validate(_as_dict(task))
        task_id = task_id_of(row)
        if task_id is None:
            raise ConfigError("the row names no task: give task_id, info.task_id or extra_info.task_id")
        if task_id in cls.tasks:
            return cls.tasks[task_id]
        return load_accepted_task(task_id, cls.home)


class ComposedTaskEnv(_TaskSource):
    """A TRL environment over one composed task; the public methods are the agent's tools."""

    def __init__(self) -> None:
        self._task: TaskRecord | None = None
        self._toolbox: MetaToolbox | None = None

    def reset(self, **row: Any) -> str | None:
        """Load the row's task on a fresh copy of its initial state; the instruction if the row has no prompt."""
        self._task = self._resolve(row)
        self._toolbox = MetaToolbox(ComposedEnvironment.from_task_environment(self._task.environment))
        return None if row.get("prompt") else self._task.instruction

    def _box(self) -> MetaToolbox:
        if self._toolbox is None:
            raise ConfigError("call reset(**row) before using the environment")
        return self._toolbox

    def list_services(self) -> str:
        """List the services available in this environment.

        Returns:
            JSON observation with the services' names, titles, domains and tool counts.
        """
        return self._box().dispatch("list_services", {})

    def list_tools(self, service: str) -> str:
        """List the tools of one service with a one-line description each.

        Args:
            service: The service name, e.g. "calendar".

        Returns:
            JSON observation with the namespaced tool names and descriptions.
        """
        return self._box().dispatch("list_tools", {"service": service})

    def describe_tool(self, tool: str) -> str:
        """Show the argument schema of one tool.

        Args:
            tool: The namespaced tool name, e.g. "calendar.update_event".

        Returns:
            JSON observation with the tool's description and JSON-schema parameters.
        """
        return self._box().dispatch("describe_tool", {"tool": tool})

    def call_tool(self, tool: str, arguments: dict) -> str:
        """Call one tool with arguments matching its schema.

        Args:
            tool: The namespaced tool name, e.g. "calendar.update_event".
            arguments: The tool's arguments as a JSON object.

        Returns:
            JSON observation: {"success": true, "data": ...} or {"success": false, "error": {"code", "message"}}.
        """
        return self._box().dispatch("call_tool", {"tool": tool, "arguments": arguments})

    def get_reward(self, answer: str = "") -> float:
        """The task reward of the current state and final answer (binary, or checklist share)."""
        if self._task is None:
            raise ConfigError("call reset(**row) before get_reward()")
        return score(self._task, self._box().env, answer, self.reward_mode)


# -- SkyRL ------------------------------------------------------------------------------------------
class _StandInStepOutput(TypedDict):
    """SkyRL's step output (``skyrl_gym.envs.base_text_env``)."""

    observations: list[dict[str, str]]
    reward: float
    done: bool
    metadata: dict[str, Any]


class _StandInTextEnv(ABC):
    """Stand-in for ``skyrl_gym.envs.base_text_env.BaseTextEnv`` (same methods; `step` is abstract)."""

    def __init__(self) -> None:
        self.turns = 0
        self.max_turns = 1

    def init(self, prompt: list[dict[str, str]]) -> tuple[list[dict[str, str]], dict[str, Any]]:
        return prompt, {}

    @abstractmethod
    def step(self, action: str) -> _StandInStepOutput:
        """Apply one action; subclasses implement it."""

    def close(self) -> None:
        return None

    def get_metrics(self) -> dict[str, Any]:
        return {}


if TYPE_CHECKING:  # the type checker sees the stand-in's interface, which matches SkyRL's
    BaseTextEnv = _StandInTextEnv
    BaseTextEnvStepOutput = _StandInStepOutput
    SKYRL_GYM = False
else:
    try:  # pragma: no cover - depends on the optional skyrl-gym package
        from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput

        SKYRL_GYM = True
    except ImportError:
        BaseTextEnv, BaseTextEnvStepOutput = _StandInTextEnv, _StandInStepOutput
        SKYRL_GYM = False


_TOOL_CALL = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.S)
_JSON_OBJECT = re.compile(r"\{.*\}", re.S)


def parse_tool_call(action: str) -> tuple[str, dict[str, Any]] | None:
    """(name, arguments) of the first JSON tool call in `action`, or None when there is none."""
    for pattern in (_TOOL_CALL, _JSON_OBJECT):
        match = pattern.search(action or "")
        if not match:
            continue
        try:
            call = json.loads(match.group(1) if pattern is _TOOL_CALL else match.group(0))
        except json.JSONDecodeError:
            continue
        if isinstance(call, dict) and isinstance(call.get("name") or call.get("tool"), str):
            arguments = call.get("arguments", call.get("parameters", {}))
            return str(call.get("name") or call.get("tool")), _as_dict(arguments)
    return None


class ComposedSkyRLEnv(_TaskSource, BaseTextEnv):
    """A SkyRL text environment over one composed task (``env_class`` of SkyRL rows)."""

    def __init__(self, env_config: Any = None, extras: dict[str, Any] | None = None) -> None:
        super().__init__()
        extras = extras or {}
        self.task = self._resolve(extras)
        self.toolbox = MetaToolbox(ComposedEnvironment.from_task_environment(self.task.environment))
        config = _as_dict(env_config) if not isinstance(env_config, dict) else env_config
        self.max_turns = int(extras.get("max_turns") or (config or {}).get("max_turns") or 30)
        self.turns = 0
        self.calls = 0

    def init(self, prompt: list[dict[str, str]]) -> tuple[list[dict[str, str]], dict[str, Any]]:
        """The prompt unchanged, with the task id and tool names as metadata."""
        return prompt, {"task_id": self.task.task_id, "meta_tools": list(META_TOOLS)}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        """Run the tool call in `action`, or treat `action` as the final answer and score it."""
        self.turns += 1
        call = parse_tool_call(action)
        if call is None or self.turns >= self.max_turns:
            reward = score(self.task, self.toolbox.env, action if call is None else "", self.reward_mode)
            metadata = {"task_id": self.task.task_id, "calls": self.calls, "final": call is None}
            return BaseTextEnvStepOutput(observations=[], reward=reward, done=True, metadata=metadata)
        name, arguments = call
        if name not in META_TOOLS and "." in name:  # a namespaced service tool called directly
            name, arguments = "call_tool", {"tool": name, "arguments": arguments}
        observation = self.toolbox.dispatch(name, arguments)
        self.calls += 1
        return BaseTextEnvStepOutput(
            observations=[{"role": "user", "content": f"<tool_response>\n{observation}\n</tool_response>"}],
            reward=0.0,
            done=False,
            metadata={"tool": name},
        )

    def get_metrics(self) -> dict[str, Any]:
        """Calls and turns of the episode."""
        return {"calls": self.calls, "turns": self.turns}
