"""One task's live environment for a trainer: public tools, calls, a final answer and a reward.

An `Episode` is rebuilt from a dataset row (`episode_from_row`) and is the same for every trainer
adapter (TRL ``environment_factory``, SkyRL, verifiers, OpenRLHF, verl):

- `tools`: the agent's tools, safe name (``^[a-zA-Z0-9_-]{1,64}$``, `envpipeline.export.tool_names`)
  -> OpenAI function schema, always including ``submit_answer``;
- `call(tool, arguments)`: one tool call as an agent issues it, returning the observation text.
  Bad input (an unknown tool, arguments that are not a JSON object, a failed validation) is the
  ``{"success": false, "error": {"code": 400 | 404, "message": ...}}`` observation, never an
  exception;
- `submit_answer(answer)`: the agent's final answer (the last one counts);
- `criteria_passed()`: one boolean per criterion of the task, from the live state and the answer;
- `reward(mode)`: ``"binary"`` is 1.0 only when every criterion passes; ``"checklist"`` is the
  family's partial credit over the criteria the initial state does not already meet
  (`held_at_start`; share of criteria; weighted checklist for worlds; the tests' reward for
  terminal bundles). Both need no argument: the episode keeps its state and answer.

Families plug in through `EPISODES` (one module per family under ``envpipeline.trainers.families``,
registered by family name); each builds its episode from an `EnvSpec`.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, Literal, TypeVar

from envpipeline.errors import ConfigError
from envpipeline.models.env_spec import EnvSpec
from envpipeline.plugins import PluginRegistry
from envpipeline.rewards.held_at_start import held_rewards
from envpipeline.rewards.modes import get_reward_mode
from envpipeline.services.base import BAD_REQUEST, NOT_FOUND, error_observation

RewardMode = Literal["binary", "checklist"]
REWARD_MODES: tuple[RewardMode, ...] = ("binary", "checklist")
SUBMIT_ANSWER = "submit_answer"
SUBMIT_ANSWER_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": SUBMIT_ANSWER,
        "description": "Submit your final answer when the task is done (the last submission counts).",
        "parameters": {
            "type": "object",
            "properties": {"answer": {"type": "string", "description": "the final answer for the user"}},
            "required": ["answer"],
            "additionalProperties": False,
        },
    },
}


def observation_text(observation: dict[str, Any]) -> str:
    """An observation as the compact JSON text an agent receives."""
    return json.dumps(observation, ensure_ascii=False, separators=(",", ":"), default=str)


def error_text(code: int, message: str) -> str:
    """The JSON text of a failed call's observation."""
    return observation_text(error_observation(code, message))


def as_arguments(arguments: Any) -> dict[str, Any] | str:
    """Arguments as a dict, or the 400 observation text when they are not a JSON object."""
    if arguments is None:
        return {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            return error_text(BAD_REQUEST, "arguments are not valid JSON")
    if not isinstance(arguments, dict):
        return error_text(BAD_REQUEST, "arguments must be a JSON object")
    return arguments


class Episode(ABC):
    """One task's live environment (subclasses: one per family)."""

    family: str = ""

    def __init__(self, spec: EnvSpec) -> None:
        self.spec = spec
        self.answer = ""
        self.calls = 0

    @property
    def task_id(self) -> str:
        """The task's id."""
        return self.spec.task_id

    @property
    def instruction(self) -> str:
        """The task as the agent is told it."""
        return self.spec.instruction

    @property
    def tools(self) -> dict[str, dict[str, Any]]:
        """Safe tool name -> OpenAI function schema, ``submit_answer`` included."""
        return {**self.agent_tools(), SUBMIT_ANSWER: SUBMIT_ANSWER_SCHEMA}

    @abstractmethod
    def agent_tools(self) -> dict[str, dict[str, Any]]:
        """The family's own tools (safe name -> OpenAI function schema)."""

    @abstractmethod
    def run_tool(self, tool: str, arguments: dict[str, Any]) -> str:
        """Run one of `agent_tools` (its name is known, its arguments a dict); the observation text."""

    @abstractmethod
    def criteria_passed(self) -> list[bool]:
        """One boolean per criterion, from the live state and the submitted answer."""

    def call(self, tool: str, arguments: Any = None) -> str:
        """Run one tool call as an agent issues it; bad input is an error observation, never raised."""
        parsed = as_arguments(arguments)
        if isinstance(parsed, str):
            return parsed
        if tool == SUBMIT_ANSWER:
            answer = parsed.get("answer")
            if not isinstance(answer, str):
                return error_text(BAD_REQUEST, "submit_answer needs 'answer' as a string")
            return self.submit_answer(answer)
        if tool not in self.agent_tools():
            return error_text(
                NOT_FOUND, f"unknown tool '{tool}'; the tools are {', '.join(sorted(self.tools))}"
            )
        self.calls += 1
        return self.run_tool(tool, parsed)

    def submit_answer(self, answer: str) -> str:
        """Record the final answer (the last one counts); the observation text."""
        self.answer = str(answer)
        return observation_text({"success": True, "data": {"submitted": True}})

    def held_at_start(self) -> list[bool] | None:
        """Whether the task's initial state already meets each criterion (None: not known). Those
        earn no partial credit and void it when broken (`envpipeline.rewards.held_at_start`)."""
        return None

    def checklist_score(self) -> float:
        """Partial credit in [0, 1]; by default the share of criteria passed, of those the initial
        state does not already meet (`held_at_start`)."""
        passed = self.criteria_passed()
        if not passed:
            return 0.0
        held = self.held_at_start() or [False] * len(passed)
        return held_rewards(get_reward_mode("checklist"), [passed], None, held, 0.0, 1.0)[0]

    def reward(self, mode: RewardMode = "binary") -> float:
        """1.0 when every criterion passes (``binary``), or the family's partial credit (``checklist``)."""
        if mode not in REWARD_MODES:
            raise ConfigError(f"unknown reward mode {mode!r}; choose binary or checklist")
        if mode == "checklist":
            return float(self.checklist_score())
        passed = self.criteria_passed()
        return float(bool(passed) and all(passed))

    def close(self) -> None:
        """Release what the episode holds (temporary folders, sandbox sessions); nothing by default."""
        return None


EpisodeT = TypeVar("EpisodeT", bound=Episode)
#: Builds a family's episode from a spec; keyword options (``worlds_root``, ``sandbox``) may be ignored.
EpisodeBuilder = Callable[..., Episode]

EPISODES: PluginRegistry[EpisodeBuilder] = PluginRegistry("episode family", "envpipeline.trainers.families")


def register_episode(family: str) -> Callable[[type[EpisodeT]], type[EpisodeT]]:
    """Class decorator: register an `Episode` subclass as the builder of `family`'s episodes."""

    def decorate(cls: type[EpisodeT]) -> type[EpisodeT]:
        cls.family = family
        EPISODES.register(family, cls)
        return cls

    return decorate


def build_episode(spec: EnvSpec, **options: Any) -> Episode:
    """The live episode of a spec, built by its family's plug-in."""
    return EPISODES.get(spec.family)(spec, **options)
