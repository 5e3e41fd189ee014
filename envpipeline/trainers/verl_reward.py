"""verl ``custom_reward_function``: ``compute_score`` scoring from the environment when verl passes it.

Set in the trainer config::

    reward.custom_reward_function.path=<site-packages or checkout>/envpipeline/trainers/verl_reward.py
    reward.custom_reward_function.name=compute_score

verl 0.9.1's reward managers (``verl/experimental/reward_loop/reward_manager/naive.py``) call
``compute_score(data_source=, solution_str=, ground_truth=, extra_info=)`` once per sample, with
``extra_info`` = the row's ``extra_info`` updated with the rollout's ``tool_extra_fields``
(``agent_data.extra_fields``). `EnvpipelineTool` leaves the episode's evidence there under
``"envpipeline"``, so:

- with evidence, state/world/terminal criteria count as the live environment reported them, and
  text criteria read the answer given to ``submit_answer`` (else the final reply of
  ``solution_str``, the decoded multi-turn response); ``source`` is ``"environment"``;
- without evidence (no tool call was made, or another rollout path), only text criteria can pass
  and ``source`` is ``"text-only"`` — never a perfect score by guessing the answer.

verl passes one sample at a time, so no CFRR group exists here: the score is the rubric-weighted
checklist (``mode="binary"`` for all-or-nothing, e.g. via ``reward_kwargs``). Rows not from
envpipeline (``data_source`` not ``envpipeline/...``) raise, rather than silently scoring 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from envpipeline.errors import ConfigError
from envpipeline.export.rewards import DATA_SOURCE_PREFIX
from envpipeline.trainers.adapter_common import EVIDENCE_KEY, final_reply, parse_kwargs, score_completion


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | str | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """verl's per-sample reward: ``{"score", "criteria_passed", "criteria_total", "full_pass", "source"}``."""
    if not str(data_source).startswith(DATA_SOURCE_PREFIX):
        raise ConfigError(
            f"data_source {data_source!r} is not an envpipeline row ({DATA_SOURCE_PREFIX}<family>)"
        )
    info = parse_kwargs(extra_info, "extra_info")
    evidence = info.get(EVIDENCE_KEY)
    mode = kwargs.get("mode", "checklist")
    return score_completion(ground_truth, final_reply(solution_str), evidence, mode)
