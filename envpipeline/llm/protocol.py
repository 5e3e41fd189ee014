"""The `LLM` interface every generation stage and judge takes, and its scripted offline implementation.

`LLMClient` (litellm over HTTP) is the real one; `ScriptedLLM` answers from a list of prepared
replies, so an offline run or a test exercises the same code path without an endpoint. Both are
passed explicitly to whatever needs a model; nothing reaches for a global client.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from envpipeline.errors import LLMError
from envpipeline.llm.client import LLMResponse
from envpipeline.llm.usage import Usage, UsageSnapshot


@runtime_checkable
class LLM(Protocol):
    """Anything that answers one chat request and reports its usage."""

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        response_format: Any = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> LLMResponse:
        """Answer one chat request."""
        ...

    def usage(self) -> UsageSnapshot:
        """Calls, tokens and cost so far."""
        ...


Reply = str | LLMResponse | Callable[[list[dict[str, Any]]], str | LLMResponse]


class ScriptedLLM:
    """An offline `LLM` that returns prepared replies in order (a callable reply sees the messages).

    Args:
        replies: the replies, one per call; a string becomes the message content.
        cycle: start again from the first reply when they run out (else running out is an error).
    """

    def __init__(self, replies: Sequence[Reply], *, cycle: bool = False) -> None:
        if not replies:
            raise LLMError("ScriptedLLM needs at least one reply")
        self._replies = list(replies)
        self._cycle = cycle
        self._next = 0
        self._usage = Usage()
        self.requests: list[list[dict[str, Any]]] = []

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        response_format: Any = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> LLMResponse:
        """The next prepared reply."""
        if self._next >= len(self._replies):
            if not self._cycle:
                raise LLMError(f"ScriptedLLM ran out of its {len(self._replies)} replies")
            self._next = 0
        reply = self._replies[self._next]
        self._next += 1
        self.requests.append(messages)
        if callable(reply):
            reply = reply(messages)
        response = reply if isinstance(reply, LLMResponse) else LLMResponse(content=reply)
        self._usage.record(
            cached=False,
            prompt_tokens=response.prompt_tokens,
            completion_tokens=response.completion_tokens,
            cost_usd=response.cost_usd,
        )
        return response

    def usage(self) -> UsageSnapshot:
        """Calls so far (token counts are those of the prepared replies)."""
        return self._usage.snapshot()
