"""Envs-FORGE settings as a Dagster resource: policy, selector and synthesizer."""

from dagster import ConfigurableResource
from pydantic import Field

from envpipeline.errors import ConfigError
from envpipeline.forge.policy import ScriptedTerminalPolicy
from resources.llm import LLMResource


class ForgeResource(ConfigurableResource):
    """How pass rates are estimated, actions selected and bundles synthesized."""

    policy_skill: float = Field(default=0.7, description="skill of the scripted terminal policy")
    rollouts: int = Field(default=4, description="K rollouts per seed")
    mode: str = Field(
        default="portfolio",
        description="selector mode: portfolio (the paper's recorded run: coverage rows, N = |S|) or local",
    )
    backend: str = Field(default="scip", description="selector backend: scip, enumerate or greedy")
    synthesizer_kind: str = Field(default="procedural", description="procedural (offline) or llm")
    bundles_per_seed: int = Field(default=1, description="bundles synthesized per seed and refresh")
    target: int | None = Field(
        default=None, description="bundles forge_export exports (None: one per selector decision, N = |S|)"
    )
    max_attempts: int | None = Field(
        default=None, description="synthesis attempts forge_export may spend topping up (default 4 x missing)"
    )
    llm: LLMResource | None = Field(
        default=None, description="the shared LLM client settings for llm synthesis"
    )

    def policy(self) -> ScriptedTerminalPolicy:
        """The current policy."""
        return ScriptedTerminalPolicy(skill=self.policy_skill)

    def synthesizer(self):
        """The configured synthesizer."""
        if self.synthesizer_kind == "procedural":
            from envpipeline.synth.procedural import ProceduralSynthesizer

            return ProceduralSynthesizer()
        if self.synthesizer_kind == "llm":
            if self.llm is None:
                raise ConfigError("synthesizer_kind 'llm' needs the llm resource settings")
            from envpipeline.synth.llm import LLMSynthesizer

            return LLMSynthesizer(self.llm.client(), model=self.llm.model)
        raise ConfigError(f"unknown synthesizer '{self.synthesizer_kind}' (procedural or llm)")
