"""What the verl, verifiers and OpenRLHF adapters share: JSON-tolerant kwargs, episode evidence, scoring.

- `parse_kwargs`: trainers hand row payloads over as dicts *or* JSON strings (verl's
  ``RLHFDataset`` delivers ``extra_info`` sub-fields exactly as Parquet stored them, so our
  JSON-string ``tools_kwargs`` / ``create_kwargs`` arrive as ``str``); every adapter accepts both.
- `episode_evidence`: what an environment saw, as plain JSON a trainer can carry from the rollout
  worker to the reward function (verl's ``agent_data.extra_fields``, a verifiers ``State``):
  the task id, each criterion's pass from the live state and answer, whether an answer was
  submitted, the number of tool calls.
- `score_completion`: the reward of one completion from a rubric, its final text and (when the
  environment was seen) that evidence. Without evidence the score is *text-only* and says so:
  state criteria cannot be checked from text, so they count as failed (`completion_passes`).
- `final_reply`: the last assistant turn of a decoded multi-turn response (the part a text
  criterion is meant to read), for trainers that hand the reward function the whole transcript.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal

from envpipeline.errors import ConfigError
from envpipeline.export.rewards import completion_passes, evidence_held, parse_rubric, score_group
from envpipeline.trainers.episode import Episode

Source = Literal["environment", "text-only"]
ScoreMode = Literal["checklist", "binary"]
EVIDENCE_KEY = "envpipeline"

# Markers after which the last assistant turn starts, in the chat templates trainers use
# (Qwen/ChatML, Llama 3, Hermes tool responses). The text after the last one is the final reply.
_TURN_MARKERS = re.compile(
    r"(<\|im_start\|>assistant|<\|start_header_id\|>assistant<\|end_header_id\|>|</tool_response>|<\|im_end\|>)"
)


def parse_kwargs(value: Any, what: str = "kwargs") -> dict[str, Any]:
    """A dict from a dict, a JSON object string/bytes, or nothing ({}); ConfigError for anything else.

    Args:
        value: what the trainer delivered (``tools_kwargs``, ``create_kwargs``, ``interaction_kwargs``).
        what: the name used in the error message.
    """
    if value is None:
        return {}
    if isinstance(value, bytes):
        value = value.decode("utf-8")
    if isinstance(value, str):
        if not value.strip():
            return {}
        try:
            value = json.loads(value)
        except json.JSONDecodeError as e:
            raise ConfigError(f"{what} is a string but not JSON: {e}") from e
    if isinstance(value, Mapping):
        return dict(value)
    raise ConfigError(f"{what} must be a JSON object (dict or JSON string), got {type(value).__name__}")


def criteria_ids(episode: Episode) -> list[str]:
    """The ids of the episode's criteria, in `criteria_passed` order (``c<n>`` where a spec has none)."""
    return [str(c.get("id") or f"c{i + 1}") for i, c in enumerate(episode.spec.criteria)]


def episode_evidence(episode: Episode) -> dict[str, Any]:
    """What the environment saw, as JSON-safe data: task, criteria passes, answer, calls."""
    passed = episode.criteria_passed()
    return {
        "task_id": episode.task_id,
        "family": episode.family,
        "criteria_passed": dict(zip(criteria_ids(episode), (bool(p) for p in passed))),
        "submitted": bool(episode.answer),
        "answer": episode.answer,
        "calls": episode.calls,
    }


def final_reply(text: str) -> str:
    """The text after the last assistant-turn / tool-response marker of a decoded transcript."""
    parts = _TURN_MARKERS.split(text or "")
    for part in reversed(parts):
        if part and not _TURN_MARKERS.fullmatch(part) and part.strip():
            return part.strip()
    return ""


def score_completion(
    ground_truth: Any,
    text: str,
    evidence: Mapping[str, Any] | str | None = None,
    mode: ScoreMode = "checklist",
) -> dict[str, Any]:
    """One completion's reward from its rubric (``ground_truth``), final text and environment evidence.

    With evidence (`episode_evidence`), every criterion the environment checked counts as it
    reported; text criteria use the submitted answer when there was one, else `text`. Without
    evidence, only text criteria can pass (``source: "text-only"``). A single completion is
    never a CFRR group: ``checklist`` is the weighted share of criteria, ``binary`` all-or-nothing.
    """
    rubric = parse_rubric(ground_truth)
    seen = parse_kwargs(evidence, "environment evidence") if evidence else {}
    reported = parse_kwargs(seen.get("criteria_passed"), "criteria_passed") if seen else {}
    if seen and not seen.get("submitted"):
        text_ids = {c.id for c in rubric.criteria if c.check == "text"}
        reported = {k: v for k, v in reported.items() if k not in text_ids}
    passes = completion_passes(rubric, text, criteria_passed=reported)
    held = evidence_held(rubric, criteria_passed=reported)
    scores = score_group([passes], rubric.weights(), mode, held_at_start=held)
    return {
        "score": scores.rewards[0],
        "criteria_passed": float(sum(passes)),
        "criteria_total": float(len(passes)),
        "full_pass": float(all(passes)),
        "source": "environment" if seen else "text-only",
    }
