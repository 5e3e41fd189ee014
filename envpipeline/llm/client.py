"""`LLMClient`: one litellm chat call with timeout, retries, a disk cache and usage accounting.

litellm is imported lazily (the import alone takes seconds) and only after
``LITELLM_LOCAL_MODEL_COST_MAP=True`` is set, so importing it never reaches the network.
API keys are read from the environment variable the config names at call time; they are never
stored in the config, the cache or the usage totals.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from envpipeline.errors import ConfigError, LLMError, MissingExtraError
from envpipeline.llm.cache import ResponseCache, request_key
from envpipeline.llm.usage import Usage, UsageSnapshot

#: The key handed to keyless local servers (the OpenAI SDK refuses an empty one; vLLM's convention).
KEYLESS_PLACEHOLDER = "EMPTY"
_IMPORT_LOCK = threading.Lock()


class LLMConfig(BaseModel):
    """Which model to call, where, and how patiently."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: Annotated[str, Field(min_length=1, description="litellm model, e.g. openai/gpt-4o-mini")]
    api_base: Annotated[str | None, Field(description="endpoint, e.g. http://127.0.0.1:8000/v1")] = None
    api_key_env: Annotated[
        str | None, Field(description="name of the environment variable holding the API key (never the key)")
    ] = None
    timeout_sec: Annotated[float, Field(gt=0, description="per-request timeout")] = 120.0
    num_retries: Annotated[int, Field(ge=0, description="litellm retries after a failed request")] = 2
    temperature: Annotated[float, Field(ge=0, le=2, description="sampling temperature")] = 0.7
    max_tokens: Annotated[
        int | None, Field(gt=0, description="completion token cap; None = server default")
    ] = None
    cache_dir: Annotated[Path | None, Field(description="disk cache folder; None = no cache")] = None


class LLMResponse(BaseModel):
    """One completion: the message, its token counts and cost, and whether the cache served it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    content: Annotated[str | None, Field(description="assistant message text")]
    tool_calls: Annotated[
        list[dict[str, Any]], Field(description="OpenAI tool calls; `function.arguments` is a JSON string")
    ] = []
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: Annotated[
        float | None, Field(description="None when the model has no price (local models)")
    ] = None
    cached: Annotated[bool, Field(description="served from the disk cache, no request made")] = False
    latency_sec: Annotated[float, Field(description="wall time of this call (near 0 on a cache hit)")] = 0.0


def _import_litellm() -> Any:
    """litellm, imported offline-safe and quiet (a `MissingExtraError` without the `[llm]` extra)."""
    with _IMPORT_LOCK:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        try:
            import litellm

            # litellm retries (num_retries > 0) through tenacity without requiring it: without it
            # a failed request ends in "tenacity import failed" instead of an LLMError
            import tenacity  # noqa: F401
        except ImportError as missing:
            raise MissingExtraError("llm", missing, needed_by="envpipeline.llm") from missing

        litellm.suppress_debug_info = True
        return litellm


def _schema_of(response_format: Any) -> Any:
    """A JSON-serializable stand-in for `response_format` (pydantic classes -> their schema)."""
    if isinstance(response_format, type) and issubclass(response_format, BaseModel):
        return {"pydantic": response_format.__name__, "schema": response_format.model_json_schema()}
    return response_format


def _tool_call_dict(call: Any) -> dict[str, Any]:
    data = call.model_dump() if hasattr(call, "model_dump") else dict(call)
    function = data.get("function") or {}
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments or {})
    return {
        "id": data.get("id"),
        "type": data.get("type") or "function",
        "function": {"name": function.get("name"), "arguments": arguments},
    }


class LLMClient:
    """Chat completions through litellm; one instance is shared so its `Usage` adds up."""

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self._usage = Usage()
        self._cache = ResponseCache(config.cache_dir) if config.cache_dir is not None else None

    def usage(self) -> UsageSnapshot:
        """Calls, cached calls, tokens and cost so far."""
        return self._usage.snapshot()

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        response_format: Any = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> LLMResponse:
        """Send one chat request (or answer it from the cache).

        Args:
            messages: OpenAI-style messages (`role`, `content`, ...).
            response_format: a pydantic class or an OpenAI `response_format` dict; the caller
                still validates the answer (local servers may ignore schemas).
            tools: OpenAI tool definitions.

        Raises:
            LLMError: the endpoint failed after the configured retries, timed out, or answered
                without a usable message.
            ConfigError: the configured API key variable is not set.
        """
        key = request_key(self._cache_payload(messages, response_format, tools))
        if self._cache is not None and (hit := self._cached(key)) is not None:
            self._usage.record(cached=True)
            return hit
        started = time.monotonic()
        raw = self._call(messages, response_format, tools)
        response = self._parse(raw, time.monotonic() - started)
        if self._cache is not None:
            summary = {"model": self.config.model, "api_base": self.config.api_base, "messages": messages}
            stored = response.model_dump(exclude={"cached", "latency_sec"})
            self._cache.put(key, {"request": summary, "response": stored})
        self._usage.record(
            cached=False,
            prompt_tokens=response.prompt_tokens,
            completion_tokens=response.completion_tokens,
            cost_usd=response.cost_usd,
        )
        return response

    def _cached(self, key: str) -> LLMResponse | None:
        """The cached response for `key`; an entry of another shape is a miss (and is overwritten)."""
        entry = self._cache.get(key) if self._cache is not None else None
        if entry is None:
            return None
        try:
            return LLMResponse.model_validate(
                {**entry.get("response", {}), "cached": True, "latency_sec": 0.0}
            )
        except ValidationError:
            return None

    def _params(self) -> dict[str, Any]:
        params: dict[str, Any] = {"temperature": self.config.temperature}
        if self.config.max_tokens is not None:
            params["max_tokens"] = self.config.max_tokens
        return params

    def _cache_payload(
        self, messages: list[dict[str, Any]], response_format: Any, tools: Any
    ) -> dict[str, Any]:
        return {
            "model": self.config.model,
            "api_base": self.config.api_base,
            "messages": messages,
            "params": self._params(),
            "response_format": _schema_of(response_format),
            "tools": tools,
        }

    def _api_key(self) -> str | None:
        name = self.config.api_key_env
        if name:
            value = os.environ.get(name)
            if not value:
                raise ConfigError(
                    f"the LLM API key variable ${name} is not set; export it or change api_key_env"
                )
            return value
        return KEYLESS_PLACEHOLDER if self.config.api_base else None

    def _call(self, messages: list[dict[str, Any]], response_format: Any, tools: Any) -> Any:
        litellm = _import_litellm()
        import httpx
        import openai

        kwargs: dict[str, Any] = {
            "model": self.config.model,
            "messages": messages,
            "timeout": self.config.timeout_sec,
            "num_retries": self.config.num_retries,
            **self._params(),
        }
        if self.config.api_base:
            kwargs["api_base"] = self.config.api_base
        if (api_key := self._api_key()) is not None:
            kwargs["api_key"] = api_key
        if response_format is not None:
            kwargs["response_format"] = response_format
        if tools:
            kwargs["tools"] = tools
        try:
            return litellm.completion(**kwargs)
        except (openai.OpenAIError, httpx.HTTPError) as e:
            where = self.config.api_base or "the provider's default endpoint"
            raise LLMError(
                f"{self.config.model} at {where} failed after {self.config.num_retries} retries "
                f"({type(e).__name__}): {str(e)[:500]}"
            ) from e

    def _parse(self, raw: Any, latency: float) -> LLMResponse:
        choices = getattr(raw, "choices", None) or []
        if not choices or getattr(choices[0], "message", None) is None:
            raise LLMError(f"{self.config.model} answered without a message: {str(raw)[:300]}")
        message = choices[0].message
        usage = getattr(raw, "usage", None)
        hidden = getattr(raw, "_hidden_params", None) or {}
        cost = hidden.get("response_cost")
        return LLMResponse(
            content=message.content,
            tool_calls=[_tool_call_dict(c) for c in (message.tool_calls or [])],
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            cost_usd=float(cost) if cost is not None else None,
            cached=False,
            latency_sec=latency,
        )
