"""The shared LLM client as a Dagster resource: one `LLMClient` per process and config."""

import threading

from dagster import ConfigurableResource
from pydantic import Field

from envpipeline.llm.client import LLMClient, LLMConfig

_CLIENTS: dict[str, LLMClient] = {}
_CLIENTS_LOCK = threading.Lock()


class LLMResource(ConfigurableResource):
    """Model, endpoint, timeout, retries and cache of every LLM call in the project."""

    model: str = Field("openai/gpt-4o-mini", description="litellm model, e.g. openai/gpt-4o-mini")
    api_base: str | None = Field(None, description="endpoint, e.g. http://127.0.0.1:8000/v1")
    api_key_env: str | None = Field(
        None, description="name of the environment variable holding the API key (never the key itself)"
    )
    timeout_sec: float = Field(120.0, description="per-request timeout in seconds")
    num_retries: int = Field(2, description="retries after a failed request")
    temperature: float = Field(0.7, description="sampling temperature")
    max_tokens: int | None = Field(None, description="completion token cap; None = server default")
    cache_dir: str | None = Field(None, description="disk cache folder; None = no cache")

    def llm_config(self) -> LLMConfig:
        """The core config these fields describe."""
        return LLMConfig(
            model=self.model,
            api_base=self.api_base,
            api_key_env=self.api_key_env,
            timeout_sec=self.timeout_sec,
            num_retries=self.num_retries,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            cache_dir=self.cache_dir,
        )

    def client(self) -> LLMClient:
        """The process-wide client for this config, so usage accumulates across assets."""
        config = self.llm_config()
        key = config.model_dump_json()
        with _CLIENTS_LOCK:
            if key not in _CLIENTS:
                _CLIENTS[key] = LLMClient(config)
            return _CLIENTS[key]
