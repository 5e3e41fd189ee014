"""Envs-FORGE settings as a Dagster resource: policy, selector and synthesizer."""

from dagster import ConfigurableResource
from pydantic import Field

from envpipeline.errors import ConfigError
from envpipeline.policies.base import Policy, PolicyKind
from envpipeline.policies.registry import PolicyConfig, build_policy
from resources.llm import LLMResource
from resources.wrapping import mirror


class ForgeResource(ConfigurableResource):
    """How pass rates are estimated, actions selected and bundles synthesized."""

    policy_kind: PolicyKind = mirror(PolicyConfig, "kind")
    policy_skill: float = mirror(PolicyConfig, "skill")
    policy_seed: int = mirror(PolicyConfig, "seed")
    rollouts_table: str | None = mirror(PolicyConfig, "rollouts_table")
    rollouts: int = Field(default=4, description="K rollouts per seed")
    mode: str = Field(default="local", description="selector mode: local or portfolio")
    backend: str = Field(default="scip", description="selector backend: scip, enumerate or greedy")
    synthesizer_kind: str = Field(default="procedural", description="procedural (offline) or llm")
    bundles_per_seed: int = Field(default=1, description="bundles synthesized per seed and refresh")
    llm: LLMResource | None = Field(
        default=None, description="the shared LLM client settings for llm synthesis and the llm policy"
    )

    def policy_config(self) -> PolicyConfig:
        """The core policy settings (the llm kind takes model and endpoint from `llm`)."""
        endpoint = {}
        if self.policy_kind == "llm":
            if self.llm is None:
                raise ConfigError("policy_kind 'llm' needs the llm resource settings")
            endpoint = {
                "model": self.llm.model,
                "api_base": self.llm.api_base,
                "api_key_env": self.llm.api_key_env,
            }
        return PolicyConfig(
            kind=self.policy_kind,
            skill=self.policy_skill,
            seed=self.policy_seed,
            rollouts_table=self.rollouts_table,
            **endpoint,
        )

    def policy(self) -> Policy:
        """The current policy."""
        return build_policy(self.policy_config())

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
