"""Compatibility names for the trainer environments, which live in `envpipeline.trainers`.

- `ComposedTaskEnv` (and `WorldTaskEnv`, `TerminalTaskEnv`): TRL ``environment_factory`` classes
  (`envpipeline.trainers.trl_env`); bind tasks or a lake with `bind_environment(cls, ...)`.
- `ComposedSkyRLEnv`: the SkyRL env of every family (`envpipeline.trainers.skyrl_env.EpisodeSkyRLEnv`).
- `load_accepted_task`, `task_id_of`: row and lake helpers (`envpipeline.trainers.from_row`).
"""

from __future__ import annotations

from envpipeline.trainers.binding import bind_environment
from envpipeline.trainers.episode import RewardMode
from envpipeline.trainers.from_row import load_accepted_task, task_id_of
from envpipeline.trainers.skyrl_env import SKYRL_GYM, EpisodeSkyRLEnv, parse_tool_call, register_skyrl_env
from envpipeline.trainers.trl_env import ComposedTaskEnv, TerminalTaskEnv, WorldTaskEnv, environment_factories

META_TOOLS = ("list_services", "list_tools", "describe_tool", "call_tool")
ComposedSkyRLEnv = EpisodeSkyRLEnv

__all__ = [
    "META_TOOLS",
    "SKYRL_GYM",
    "ComposedSkyRLEnv",
    "ComposedTaskEnv",
    "EpisodeSkyRLEnv",
    "RewardMode",
    "TerminalTaskEnv",
    "WorldTaskEnv",
    "bind_environment",
    "environment_factories",
    "load_accepted_task",
    "parse_tool_call",
    "register_skyrl_env",
    "task_id_of",
]
