"""The SkyRL environment of every family (``env_class: "envpipeline"``) over `Episode`s.

SkyRL (``skyrl_gym`` 0.4) builds an env with ``skyrl_gym.make(env_class, env_config=...,
extras=row)``, where ``extras`` holds the dataset row's fields (``extra_info`` with our
``env_spec``, ``reward_spec``, ...); `register_skyrl_env` registers ours under ``"envpipeline"``
(``skyrl_gym.envs.registration.register(id, entry_point)``; idempotent). Interface
(``skyrl_gym.envs.base_text_env.BaseTextEnv``): ``init(prompt) -> (prompt, metadata)``,
``step(action) -> {"observations", "reward", "done", "metadata"}``.

A step whose action holds a JSON tool call (``<tool_call>{"name": ..., "arguments": {...}}
</tool_call>`` or a bare JSON object) runs it through the episode (a namespaced service tool
called directly becomes ``call_tool``; dotted names are mapped to their safe form); a
``submit_answer`` call, an action without a tool call (its text is the final answer) or the last
allowed turn ends the episode with its reward (``reward_mode`` in ``env_config``: binary by
default, or checklist).
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypedDict

from envpipeline.export.tool_names import safe_tool_name
from envpipeline.models.task import TaskRecord
from envpipeline.trainers.episode import REWARD_MODES, SUBMIT_ANSWER, Episode, RewardMode
from envpipeline.trainers.from_row import as_dict, episode_from_row

SKYRL_ENV_ID = "envpipeline"


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
            return str(call.get("name") or call.get("tool")), as_dict(arguments)
    return None


def episode_tool(episode: Episode, name: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The episode's tool for a called name: as is, its safe form, or ``call_tool`` for a service tool."""
    if name in episode.tools:
        return name, arguments
    if episode.family == "compose" and "." in name:
        return "call_tool", {"tool": name, "arguments": arguments}
    return safe_tool_name(name), arguments


class EpisodeSkyRLEnv(BaseTextEnv):
    """A SkyRL text environment over one task of any family (``env_class: "envpipeline"``).

    Class state (set by `envpipeline.trainers.binding.bind_environment`) serves rows without an
    ``env_spec``: ``tasks``, ``home``; ``env_config`` may set ``reward_mode``, ``max_turns``,
    ``home``, ``worlds_root`` and ``bundle_root``.
    """

    tasks: ClassVar[dict[str, TaskRecord]] = {}
    home: ClassVar[Path | None] = None
    reward_mode: ClassVar[RewardMode] = "binary"
    options: ClassVar[dict[str, Any]] = {}

    def __init__(self, env_config: Any = None, extras: dict[str, Any] | None = None) -> None:
        super().__init__()
        extras = dict(extras or {})
        config = env_config if isinstance(env_config, dict) else as_dict(env_config)
        if not config and env_config is not None:  # an OmegaConf DictConfig or another mapping
            config = dict(env_config) if hasattr(env_config, "keys") else {}
        options = {**self.options, **{k: config[k] for k in ("worlds_root", "bundle_root") if config.get(k)}}
        self.episode = episode_from_row(extras, self.tasks, config.get("home") or self.home, **options)
        mode = config.get("reward_mode")
        self.mode: RewardMode = mode if mode in REWARD_MODES else self.reward_mode
        self.max_turns = int(extras.get("max_turns") or config.get("max_turns") or 30)
        self.turns = 0

    def init(self, prompt: list[dict[str, str]]) -> tuple[list[dict[str, str]], dict[str, Any]]:
        """The prompt unchanged; the task id, family and tool schemas as metadata."""
        metadata = {
            "task_id": self.episode.task_id,
            "family": self.episode.family,
            "tools": list(self.episode.tools.values()),
        }
        return prompt, metadata

    def _finish(self, answer: str | None, final: bool) -> BaseTextEnvStepOutput:
        if answer is not None:
            self.episode.submit_answer(answer)
        reward = self.episode.reward(self.mode)
        metadata = {
            "task_id": self.episode.task_id,
            "family": self.episode.family,
            "calls": self.episode.calls,
            "final": final,
            "criteria_passed": self.episode.criteria_passed(),
        }
        return BaseTextEnvStepOutput(observations=[], reward=reward, done=True, metadata=metadata)

    def step(self, action: str) -> BaseTextEnvStepOutput:
        """Run the tool call in `action`, or treat `action` as the final answer and score the episode."""
        self.turns += 1
        call = parse_tool_call(action)
        if call is None:
            return self._finish(action, final=True)
        name, arguments = episode_tool(self.episode, *call)
        if name == SUBMIT_ANSWER:
            return self._finish(str(arguments.get("answer", "")), final=True)
        observation = self.episode.call(name, arguments)
        if self.turns >= self.max_turns:
            return self._finish(None, final=False)
        return BaseTextEnvStepOutput(
            observations=[{"role": "user", "content": f"<tool_response>\n{observation}\n</tool_response>"}],
            reward=0.0,
            done=False,
            metadata={"tool": name},
        )

    def get_metrics(self) -> dict[str, Any]:
        """Calls and turns of the episode."""
        return {"calls": self.episode.calls, "turns": self.turns}

    def close(self) -> None:
        """Release the episode's folders and sandbox session."""
        self.episode.close()


def register_skyrl_env(env_id: str = SKYRL_ENV_ID) -> bool:
    """Register `EpisodeSkyRLEnv` in skyrl_gym's registry under `env_id` (no-op when present).

    Returns False when skyrl_gym is not installed. Call it in the SkyRL entry point before training.
    """
    try:
        import skyrl_gym  # pyright: ignore[reportMissingImports]  # only where SkyRL is installed
    except ImportError:
        return False
    if env_id not in skyrl_gym.registry:
        skyrl_gym.register(id=env_id, entry_point="envpipeline.trainers.skyrl_env:EpisodeSkyRLEnv")
    return True
