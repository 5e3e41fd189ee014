"""CompoWorld composition settings as a Dagster resource wrapping the core `ComposeConfig`."""

from dagster import ConfigurableResource
from pydantic import Field

from envpipeline.compose.author import ComposeConfig
from envpipeline.compose.llm_author import AuthorConfig
from envpipeline.errors import ConfigError
from envpipeline.services.llm_worldmodel import WorldModelConfig
from resources.llm import LLMResource
from resources.wrapping import core_config, mirror


class ComposerResource(ConfigurableResource):
    """How composition batches are drafted (paper defaults: 5 services + 5 distractors)."""

    services: int = mirror(ComposeConfig, "services")
    distractors: int = mirror(ComposeConfig, "distractors")
    walk_length: int | None = mirror(ComposeConfig, "walk_length")
    instruction_style: str = mirror(ComposeConfig, "instruction_style")
    library_scope: str = mirror(ComposeConfig, "library_scope")
    candidates_per_batch: int = Field(default=50, description="candidates drafted per composition batch")
    rollout_group_size: int = Field(default=6, description="scripted rollouts per accepted task")
    rollout_error_rate: float = Field(default=0.1, description="per-step mistake rate of the scripted agent")
    world_model: str = Field(
        default="offline", description="who answers simulated tools: offline, or llm (needs `llm`)"
    )
    author: str = Field(
        default="procedural",
        description="instruction author: procedural, or llm (a probe-checked rewrite; needs `llm`)",
    )
    probe_tries: int = mirror(AuthorConfig, "probe_tries")
    llm: LLMResource | None = Field(
        default=None, description="the model of the llm world model and author; None = procedural only"
    )

    def config(self) -> ComposeConfig:
        """The core composer configuration."""
        return core_config(self, ComposeConfig)

    def _llm_settings(self, what: str) -> dict[str, object]:
        if self.llm is None:
            raise ConfigError(f"composer {what}=llm needs the composer's `llm` resource")
        return {"model": self.llm.model, "api_base": self.llm.api_base, "api_key_env": self.llm.api_key_env}

    def world_model_config(self) -> WorldModelConfig:
        """The core world-model choice (`envpipeline.services.llm_worldmodel.build_world_model`)."""
        if self.world_model == "offline":
            return WorldModelConfig()
        settings = self._llm_settings("world_model")
        cache = self.llm.cache_dir if self.llm is not None else None
        return WorldModelConfig.model_validate(
            {"kind": self.world_model, **settings, "cache_dir": f"{cache}/world-model" if cache else None}
        )

    def author_config(self) -> AuthorConfig:
        """The core author choice (`envpipeline.compose.llm_author.build_author`)."""
        if self.author == "procedural":
            return AuthorConfig(probe_tries=self.probe_tries)
        settings = self._llm_settings("author")
        cache = self.llm.cache_dir if self.llm is not None else None
        return AuthorConfig.model_validate(
            {
                "kind": self.author,
                **settings,
                "probe_tries": self.probe_tries,
                "cache_dir": f"{cache}/author" if cache else None,
            }
        )

    def seeds(self, batch_key: str) -> range:
        """Candidate rng seeds of one batch: disjoint ranges derived from the batch number."""
        number = int("".join(ch for ch in batch_key if ch.isdigit()) or 0)
        start = number * 100_000
        return range(start, start + self.candidates_per_batch)
