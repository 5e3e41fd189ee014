"""The one registry of red-team policies (one module per policy in `envpipeline.redteam.policies`)."""

from __future__ import annotations

from envpipeline.models.task import Family
from envpipeline.plugins import PluginRegistry
from envpipeline.redteam.base import RedTeamPolicy

_REGISTRY: PluginRegistry[RedTeamPolicy] = PluginRegistry("red-team policy", "envpipeline.redteam.policies")


def register_policy(policy: RedTeamPolicy) -> RedTeamPolicy:
    """Add a policy under its name; a second, different one under a taken name is an error."""
    return _REGISTRY.register(policy.name, policy)


def all_policies() -> dict[str, RedTeamPolicy]:
    """Every policy by name."""
    return _REGISTRY.all()


def get_policy(name: str) -> RedTeamPolicy:
    """One policy by name, with a clear error listing the known ones."""
    return _REGISTRY.get(name)


def policies_for(family: Family) -> list[RedTeamPolicy]:
    """The policies that attack one family, by name."""
    return [p for p in all_policies().values() if family in p.families]
