"""Ask an `LLM` for one JSON object of a pydantic model, with strict parsing and bounded repair.

`ask_structured` sends the stage's messages, parses the answer strictly (the whole message must be
one JSON object, optionally inside a single ```json fence: no prose around it, no "first { to last
}" salvage), validates it with the pydantic model and then with the stage's own checks. A failed
attempt is fed back to the model with the exact errors (the repair prompt), at most `max_repairs`
times; every attempt is recorded with its tokens, so a refused answer is data with reasons, not an
exception. Only an endpoint that fails after the client's retries raises (`LLMError`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from envpipeline.errors import ConfigError
from envpipeline.llm.protocol import LLM

T = TypeVar("T", bound=BaseModel)
JSON_MODE = {"type": "json_object"}
_FENCE = re.compile(r"^```(?:json)?\s*\n(?P<body>.*)\n```$", re.S)


class Attempt(BaseModel):
    """One request of a structured stage and what became of its answer."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    index: int
    kind: str
    ok: bool
    errors: list[str] = []
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False


@dataclass
class StructuredResult(Generic[T]):
    """The validated object (None when every attempt was refused) and every attempt."""

    stage: str
    value: T | None
    attempts: list[Attempt] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """An attempt passed parsing, validation and the stage's checks."""
        return self.value is not None

    @property
    def errors(self) -> list[str]:
        """The errors of the last attempt ([] when it passed)."""
        return list(self.attempts[-1].errors) if self.attempts else []

    @property
    def tokens(self) -> dict[str, int]:
        """Prompt and completion tokens spent on live (uncached) attempts."""
        live = [a for a in self.attempts if not a.cached]
        return {
            "prompt": sum(a.prompt_tokens for a in live),
            "completion": sum(a.completion_tokens for a in live),
        }

    def summary(self) -> dict[str, Any]:
        """A JSON-ready record: stage, ok, attempts, repairs, tokens and the last errors."""
        return {
            "stage": self.stage,
            "ok": self.ok,
            "attempts": len(self.attempts),
            "repairs": max(0, len(self.attempts) - 1),
            "tokens": self.tokens,
            "errors": self.errors,
        }


def parse_json_object(text: str | None) -> dict[str, Any]:
    """The one JSON object a message holds (whole message, or one ```json fence around all of it).

    Raises:
        ValueError: empty text, prose around the object, invalid JSON or a non-object value.
    """
    body = (text or "").strip()
    if not body:
        raise ValueError("the answer is empty; expected one JSON object")
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group("body").strip()
    try:
        value = json.loads(body)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"the answer is not a JSON object ({exc.msg} at line {exc.lineno} column {exc.colno}); "
            "answer with the JSON object only, no prose"
        ) from exc
    if not isinstance(value, dict):
        raise ValueError(f"the answer is a JSON {type(value).__name__}, expected an object")
    return value


def validation_errors(exc: ValidationError) -> list[str]:
    """One line per pydantic error: ``field.path: message``."""
    out = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "(root)"
        out.append(f"{where}: {err['msg']}")
    return out


def parse_model(text: str | None, model: type[T]) -> tuple[T | None, list[str]]:
    """(the validated object, []) or (None, the parse / validation errors)."""
    try:
        data = parse_json_object(text)
    except ValueError as exc:
        return None, [str(exc)]
    try:
        return model.model_validate(data), []
    except ValidationError as exc:
        return None, validation_errors(exc)


def repair_message(errors: list[str]) -> str:
    """The repair prompt: the exact errors of the previous answer and what to send instead."""
    listed = "\n".join(f"- {e}" for e in errors[:20])
    return (
        "Your previous answer was refused for these reasons:\n"
        f"{listed}\n"
        "Send the corrected answer: one JSON object of the same schema, nothing else."
    )


def ask_structured(
    llm: LLM,
    messages: list[dict[str, Any]],
    model: type[T],
    *,
    stage: str,
    check: Callable[[T], list[str]] | None = None,
    max_repairs: int = 2,
    json_mode: bool = True,
) -> StructuredResult[T]:
    """Ask until an answer parses, validates and passes `check`, at most `max_repairs` repairs.

    Args:
        llm: the shared client (its usage totals include these calls).
        messages: the stage's prompt.
        model: the pydantic model of the answer (unknown fields are errors).
        stage: the stage name recorded with the attempts.
        check: the stage's own problems with a validated answer ([] = fine).
        max_repairs: repair requests after the first one.
        json_mode: ask the endpoint for a JSON object (the answer is validated either way).

    Raises:
        LLMError: the endpoint failed after the client's retries.
    """
    if max_repairs < 0:
        raise ConfigError(f"max_repairs must be >= 0, got {max_repairs}")
    conversation = list(messages)
    result: StructuredResult[T] = StructuredResult(stage=stage, value=None)
    for index in range(max_repairs + 1):
        response = llm.complete(conversation, response_format=JSON_MODE if json_mode else None)
        value, errors = parse_model(response.content, model)
        if value is not None and check is not None:
            errors = check(value)
        result.attempts.append(
            Attempt(
                index=index,
                kind="initial" if index == 0 else "repair",
                ok=not errors,
                errors=errors,
                prompt_tokens=response.prompt_tokens,
                completion_tokens=response.completion_tokens,
                cached=response.cached,
            )
        )
        if not errors and value is not None:
            result.value = value
            return result
        conversation = [
            *conversation,
            {"role": "assistant", "content": response.content or ""},
            {"role": "user", "content": repair_message(errors)},
        ]
    return result
