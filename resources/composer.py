"""CompoWorld composition settings as a Dagster resource."""

from dagster import ConfigurableResource
from pydantic import Field

from envpipeline.compose.author import ComposeConfig


class ComposerResource(ConfigurableResource):
    """How composition batches are drafted (paper defaults: 5 services + 5 distractors)."""

    services: int = Field(5, description="K services per task")
    distractors: int = Field(5, description="distractor services exposed to the agent")
    walk_length: int = Field(0, description="visits per walk; 0 means K+1")
    candidates_per_batch: int = Field(50, description="candidates drafted per composition batch")
    rollout_group_size: int = Field(6, description="scripted rollouts per accepted task")
    rollout_error_rate: float = Field(0.1, description="per-step mistake rate of the scripted agent")

    def config(self) -> ComposeConfig:
        """The core composer configuration."""
        return ComposeConfig(
            services=self.services, distractors=self.distractors, walk_length=self.walk_length or None
        )

    def seeds(self, batch_key: str) -> range:
        """Candidate seeds of one batch: disjoint ranges derived from the batch number."""
        number = int("".join(ch for ch in batch_key if ch.isdigit()) or 0)
        start = number * 100_000
        return range(start, start + self.candidates_per_batch)
