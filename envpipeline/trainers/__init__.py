"""Trainer environments over live tasks: one `Episode` per task, rebuilt from a dataset row.

`episode_from_row(row)` gives the episode of any RL row we export; `Episode.call` runs the agent's
tools, `Episode.reward()` scores the live state and the submitted answer. The trainer adapters
(TRL ``environment_factory``, SkyRL) wrap it.
"""

from envpipeline.trainers.episode import EPISODES, SUBMIT_ANSWER, Episode, RewardMode, build_episode
from envpipeline.trainers.from_row import episode_from_row, spec_of_row

__all__ = [
    "EPISODES",
    "SUBMIT_ANSWER",
    "Episode",
    "RewardMode",
    "build_episode",
    "episode_from_row",
    "spec_of_row",
]
