"""The shared LLM client: litellm behind a small interface with a disk cache and usage accounting."""

from envpipeline.llm.client import LLMClient, LLMConfig, LLMResponse
from envpipeline.llm.usage import Usage, UsageSnapshot

__all__ = ["LLMClient", "LLMConfig", "LLMResponse", "Usage", "UsageSnapshot"]
