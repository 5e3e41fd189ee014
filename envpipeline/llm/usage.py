"""Thread-safe token and cost accounting shared by every call of one client."""

from __future__ import annotations

import threading

from pydantic import BaseModel, ConfigDict, Field


class UsageSnapshot(BaseModel):
    """The totals of a `Usage` at one moment.

    Tokens and cost count live calls only (what was spent); cache hits count in `calls` and
    `cached_calls` but cost nothing.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    calls: int = Field(default=0, description="every complete() call that returned, cached or not")
    cached_calls: int = Field(default=0, description="calls served from the disk cache")
    prompt_tokens: int = Field(default=0, description="prompt tokens of live calls")
    completion_tokens: int = Field(default=0, description="completion tokens of live calls")
    cost_usd: float = Field(default=0.0, description="summed cost of live calls that had a price")
    unpriced_calls: int = Field(default=0, description="live calls without a price (local models)")

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens


class Usage:
    """A running total of calls, tokens and cost; safe to update from many threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._totals = UsageSnapshot()

    def record(
        self,
        *,
        cached: bool,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        cost_usd: float | None = None,
    ) -> None:
        """Add one finished call."""
        with self._lock:
            t = self._totals
            if cached:
                self._totals = t.model_copy(update={"calls": t.calls + 1, "cached_calls": t.cached_calls + 1})
                return
            self._totals = t.model_copy(
                update={
                    "calls": t.calls + 1,
                    "prompt_tokens": t.prompt_tokens + prompt_tokens,
                    "completion_tokens": t.completion_tokens + completion_tokens,
                    "cost_usd": t.cost_usd + (cost_usd or 0.0),
                    "unpriced_calls": t.unpriced_calls + (cost_usd is None),
                }
            )

    def snapshot(self) -> UsageSnapshot:
        """The totals so far (an immutable copy)."""
        with self._lock:
            return self._totals

    def reset(self) -> None:
        """Start counting from zero again."""
        with self._lock:
            self._totals = UsageSnapshot()
