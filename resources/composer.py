"""CompoWorld composition settings as a Dagster resource wrapping the core `ComposeConfig`."""

from dagster import ConfigurableResource
from pydantic import Field

from envpipeline.compose.author import ComposeConfig
from resources.wrapping import core_config, mirror


class ComposerResource(ConfigurableResource):
    """How composition batches are drafted (paper defaults: 5 services + 5 distractors)."""

    services: int = mirror(ComposeConfig, "services")
    distractors: int = mirror(ComposeConfig, "distractors")
    walk_length: int | None = mirror(ComposeConfig, "walk_length")
    instruction_style: str = mirror(ComposeConfig, "instruction_style")
    candidates_per_batch: int = Field(default=50, description="candidates drafted per composition batch")
    rollout_group_size: int = Field(default=6, description="scripted rollouts per accepted task")
    rollout_error_rate: float = Field(default=0.1, description="per-step mistake rate of the scripted agent")

    def config(self) -> ComposeConfig:
        """The core composer configuration."""
        return core_config(self, ComposeConfig)

    def seeds(self, batch_key: str) -> range:
        """Candidate rng seeds of one batch: disjoint ranges derived from the batch number."""
        number = int("".join(ch for ch in batch_key if ch.isdigit()) or 0)
        start = number * 100_000
        return range(start, start + self.candidates_per_batch)
