"""Envs-FORGE action selection: actions and scores, skill nodes, the MILP and its fallbacks."""

from envpipeline.select.actions import SelectorConfig, frontier_score, projected_pass_rate, reward_band
from envpipeline.select.selector import select_actions

__all__ = ["SelectorConfig", "frontier_score", "projected_pass_rate", "reward_band", "select_actions"]
