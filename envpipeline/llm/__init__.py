"""The shared LLM interface: litellm behind a small protocol with a disk cache and usage accounting."""

from envpipeline.llm.client import LLMClient, LLMConfig, LLMResponse
from envpipeline.llm.protocol import LLM, ScriptedLLM
from envpipeline.llm.usage import Usage, UsageSnapshot

__all__ = ["LLM", "LLMClient", "LLMConfig", "LLMResponse", "ScriptedLLM", "Usage", "UsageSnapshot"]
