"""Structured output with bounded repair: ask for JSON, validate it, feed the reasons back, give up.

Every LLM path of CompoWorld (world model, spec-to-service synthesis, instruction authoring) asks
the model for one JSON object, checks it with a caller's validator (pydantic, JSON Schema or a
contract run) and, when the check fails, sends the reasons back as a repair turn, at most
`max_repairs` times. The outcome records every attempt with its tokens (0 spent when the disk
cache served it) and reasons, so a refusal says why and what it cost.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Generic, TypeVar

from pydantic import Field, ValidationError

from envpipeline.errors import ConfigError
from envpipeline.llm.protocol import LLM
from envpipeline.models.base import Strict

T = TypeVar("T")
JSON_MODE = {"type": "json_object"}
#: reasons quoted back to the model per repair turn (the rest are counted, not dropped silently)
MAX_REASONS = 8


class ReplyRejected(Exception):
    """Raised by a validator: the reply is unusable, for these reasons (fed to the repair turn)."""

    def __init__(self, reasons: list[str]) -> None:
        super().__init__("; ".join(reasons))
        self.reasons = reasons or ["the reply was rejected"]


class StructuredAttempt(Strict):
    """One request of a structured exchange and why its reply was rejected (if it was)."""

    index: Annotated[int, Field(ge=0, description="0 = first request, k = k-th repair")]
    cached: Annotated[bool, Field(description="served from the LLM disk cache (no tokens spent)")] = False
    prompt_tokens: Annotated[int, Field(ge=0, description="prompt tokens spent (0 when cached)")] = 0
    completion_tokens: Annotated[int, Field(ge=0, description="completion tokens spent (0 when cached)")] = 0
    failures: Annotated[list[str], Field(description="why the reply was rejected; empty = accepted")] = []


@dataclass
class StructuredOutcome(Generic[T]):
    """The accepted value (None when every attempt was rejected) and every attempt."""

    value: T | None
    attempts: list[StructuredAttempt] = field(default_factory=list)

    @property
    def accepted(self) -> bool:
        """True when some reply passed the validator."""
        return self.value is not None

    @property
    def repairs(self) -> int:
        """Repair requests made after the first one."""
        return max(0, len(self.attempts) - 1)

    @property
    def total_tokens(self) -> int:
        """Tokens spent over all attempts (cache hits excluded)."""
        return sum(a.prompt_tokens + a.completion_tokens for a in self.attempts)

    @property
    def failures(self) -> list[str]:
        """The last attempt's reasons (empty when accepted)."""
        return self.attempts[-1].failures if self.attempts else ["no request was made"]


def json_object(text: str | None) -> dict[str, Any]:
    """The JSON object of a reply (``` fences and chatter around it tolerated).

    Raises:
        ReplyRejected: empty reply, no object, invalid JSON, or JSON that is not an object.
    """
    if not text or not text.strip():
        raise ReplyRejected(["the reply was empty; answer with one JSON object"])
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = re.sub(r"\n?```\s*$", "", body)
    try:
        data = json.loads(body)
    except json.JSONDecodeError as whole:
        start = body.find("{")
        if start < 0:
            raise ReplyRejected([f"no JSON object in the reply ({whole.msg})"]) from whole
        try:
            data, _ = json.JSONDecoder().raw_decode(body, start)
        except json.JSONDecodeError as e:
            raise ReplyRejected([f"invalid JSON: {e.msg} at line {e.lineno} column {e.colno}"]) from e
    if not isinstance(data, dict):
        raise ReplyRejected([f"expected a JSON object, got {type(data).__name__}"])
    return data


def pydantic_reasons(error: ValidationError) -> list[str]:
    """A pydantic error as one reason per field (``path: message``)."""
    return [
        f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}"
        for err in error.errors()[:MAX_REASONS]
    ]


def repair_message(reasons: list[str]) -> dict[str, Any]:
    """The user turn that sends a rejected reply's reasons back."""
    shown = reasons[:MAX_REASONS]
    more = len(reasons) - len(shown)
    lines = "\n".join(f"- {r}" for r in shown) + (f"\n- ... and {more} more" if more else "")
    return {
        "role": "user",
        "content": f"Your reply was rejected:\n{lines}\nReply again with only the corrected JSON object.",
    }


def ask_structured(
    llm: LLM,
    messages: list[dict[str, Any]],
    validate: Callable[[str | None], T],
    *,
    max_repairs: int,
    json_mode: bool = True,
) -> StructuredOutcome[T]:
    """Ask `llm`, validate the reply, and repair at most `max_repairs` times.

    Args:
        llm: the model (`LLMClient` or `ScriptedLLM`); its usage totals include these calls.
        messages: the opening messages.
        validate: turns the reply text into the value, or raises `ReplyRejected` with reasons.
        max_repairs: repair turns allowed after the first reply (0 = no repair).
        json_mode: ask the endpoint for a JSON object (the reply is validated either way).

    Raises:
        LLMError: the endpoint failed after the client's retries (not a rejected reply).
    """
    if max_repairs < 0:
        raise ConfigError(f"max_repairs must be >= 0, got {max_repairs}")
    conversation = list(messages)
    outcome: StructuredOutcome[T] = StructuredOutcome(value=None)
    for index in range(max_repairs + 1):
        response = llm.complete(conversation, response_format=JSON_MODE if json_mode else None)
        spent = not response.cached
        attempt = {
            "index": index,
            "cached": response.cached,
            "prompt_tokens": response.prompt_tokens if spent else 0,
            "completion_tokens": response.completion_tokens if spent else 0,
        }
        try:
            value = validate(response.content)
        except ReplyRejected as rejected:
            outcome.attempts.append(StructuredAttempt(**attempt, failures=rejected.reasons))
            conversation += [
                {"role": "assistant", "content": response.content or ""},
                repair_message(rejected.reasons),
            ]
            continue
        outcome.attempts.append(StructuredAttempt(**attempt))
        outcome.value = value
        return outcome
    return outcome
