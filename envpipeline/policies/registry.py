"""The one registry of policy kinds: `PolicyConfig` -> a `Policy`.

Each module of this package registers one kind with `register_policy_kind` on import (``scripted``,
``solver``, ``llm``, ``recorded``); `build_policy` builds the configured one with a clear error for
an unknown kind or a setting the kind needs and lacks.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from envpipeline.plugins import PluginRegistry
from envpipeline.policies.base import Policy, PolicyKind


class PolicyConfig(BaseModel):
    """Every setting of every policy kind (each kind reads the ones it needs)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Annotated[PolicyKind, Field(description="scripted, solver, llm or recorded")] = "scripted"
    name: Annotated[str | None, Field(description="name recorded with rollouts (default: per kind)")] = None
    skill: Annotated[
        float, Field(ge=0.0, le=1.0, description="scripted/solver: how often the policy gets things right")
    ] = 0.7
    give_up: Annotated[
        float, Field(ge=0.0, le=1.0, description="scripted/solver: chance of submitting nothing")
    ] = 0.15
    seed: Annotated[int, Field(description="rollout randomness (common to every task of a family)")] = 0
    error_rate: Annotated[
        float | None,
        Field(
            ge=0.0,
            le=1.0,
            description="scripted: per-step mistake rate of the composed and world agents "
            "(None: 0.1 for composed tasks, the expert/skilled/novice cycle for world tasks)",
        ),
    ] = None
    model: Annotated[str | None, Field(description="llm: litellm model, e.g. openai/gpt-4o-mini")] = None
    api_base: Annotated[str | None, Field(description="llm: OpenAI-compatible endpoint")] = None
    api_key_env: Annotated[str | None, Field(description="llm: environment variable with the key")] = None
    max_steps: Annotated[int, Field(ge=1, description="llm: tool calls or commands per episode")] = 80
    timeout_sec: Annotated[float, Field(gt=0.0, description="llm: wall-clock limit per episode")] = 600.0
    temperature: Annotated[float, Field(ge=0.0, le=2.0, description="llm: sampling temperature")] = 0.7
    cache_dir: Annotated[
        Path | None, Field(description="llm: disk cache of replies (one subfolder per episode index)")
    ] = None
    rollouts_table: Annotated[
        str | None, Field(description="recorded: JSONL or Parquet table of rollouts keyed by task id")
    ] = None


PolicyFactory = Callable[[PolicyConfig], Policy]

POLICIES: PluginRegistry[PolicyFactory] = PluginRegistry("policy kind", "envpipeline.policies")


def register_policy_kind(kind: PolicyKind) -> Callable[[PolicyFactory], PolicyFactory]:
    """Decorator: register the factory of one policy kind."""

    def decorate(factory: PolicyFactory) -> PolicyFactory:
        POLICIES.register(kind, factory)
        return factory

    return decorate


def build_policy(config: PolicyConfig | None = None) -> Policy:
    """The configured policy (the scripted default when `config` is None)."""
    config = config or PolicyConfig()
    return POLICIES.get(config.kind)(config)
