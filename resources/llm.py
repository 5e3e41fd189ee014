"""The shared LLM client as a Dagster resource wrapping the core `LLMConfig`: one client per process and config."""

import threading

from dagster import ConfigurableResource

from envpipeline.llm.client import LLMClient, LLMConfig
from envpipeline.llm.protocol import LLM
from resources.wrapping import core_config, mirror

_CLIENTS: dict[str, LLMClient] = {}
_CLIENTS_LOCK = threading.Lock()


class LLMResource(ConfigurableResource):
    """Model, endpoint, timeout, retries and cache of every LLM call in the project."""

    model: str = mirror(LLMConfig, "model", default="openai/gpt-4o-mini")
    api_base: str | None = mirror(LLMConfig, "api_base")
    api_key_env: str | None = mirror(LLMConfig, "api_key_env")
    timeout_sec: float = mirror(LLMConfig, "timeout_sec")
    num_retries: int = mirror(LLMConfig, "num_retries")
    temperature: float = mirror(LLMConfig, "temperature")
    max_tokens: int | None = mirror(LLMConfig, "max_tokens")
    cache_dir: str | None = mirror(LLMConfig, "cache_dir")

    def llm_config(self) -> LLMConfig:
        """The core config these fields describe."""
        return core_config(self, LLMConfig)

    def client(self) -> LLM:
        """The process-wide client for this config, so usage accumulates across assets."""
        config = self.llm_config()
        key = config.model_dump_json()
        with _CLIENTS_LOCK:
            if key not in _CLIENTS:
                _CLIENTS[key] = LLMClient(config)
            return _CLIENTS[key]
