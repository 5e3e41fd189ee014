"""Skill nodes (paper, table 5) and candidate construction (section 3.2, appendix A.2).

The taxonomy has two tiers. *core* nodes are the reasoning a task is about (parsing, formats,
aggregation, validation); *system* nodes are infrastructure around it (services, VCS, databases,
locking). ``reduce_complexity`` "splits away secondary systems": it moves a seed's required
*system* nodes into the optional-removable set, keeping at least one required node. ``in_breadth``
may add up to ``breadth_additions`` neighbour nodes (optional, addable). Every skill a shipped
task family declares is a node (checked against ``all_families()``); skills outside the static
vocabulary are accepted as core nodes without neighbours.

Per seed and action the candidate carries:

==================================  ======================  ===========================================
action                              required R              optional O
==================================  ======================  ===========================================
increase, diversify / in_depth      seed required           seed optional
increase, diversify / in_breadth    seed required           seed optional + neighbours
reduce / in_depth                   seed required - system  seed optional + dropped system nodes
reduce / in_breadth                 seed required - system  seed optional + dropped + neighbours
==================================  ======================  ===========================================

The dropped system nodes are the candidate's ``removable_skills`` (the seed exercises them); every
other optional node is addable. A seed's own optional nodes come from ``seed_optional_nodes``: the
nearest taxonomy neighbours of its required nodes, so in_breadth reaches further than in_depth.

Eligibility (removed before optimization, with reasons): split membership (only ``train`` seeds),
known overlap with held-out tasks, and the estimated prompt length (seed instruction tokens via
``count_tokens`` times the projection's growth) against ``max_prompt_tokens``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Literal

from envpipeline.models.selection import Candidate, SeedPassRate
from envpipeline.select.actions import (
    ACTIONS,
    SelectorConfig,
    frontier_score,
    projected_pass_rate,
)

Tier = Literal["core", "system"]


@dataclass(frozen=True)
class SkillNode:
    """One node of the taxonomy."""

    name: str
    tier: Tier
    group: str
    neighbours: tuple[str, ...] = field(default=())


_V: list[tuple[str, Tier, str, tuple[str, ...]]] = [
    # core: what the task is about
    ("text-parsing", "core", "parsing", ("regex", "unicode", "config-formats")),
    ("regex", "core", "parsing", ("text-parsing", "validation")),
    ("unicode", "core", "parsing", ("text-parsing", "sorting")),
    ("json", "core", "formats", ("yaml", "csv", "xml")),
    ("csv", "core", "formats", ("json", "deduplication", "sorting")),
    ("yaml", "core", "formats", ("json", "config-formats")),
    ("xml", "core", "formats", ("json", "validation")),
    ("config-formats", "core", "formats", ("yaml", "validation", "text-parsing")),
    ("aggregation", "core", "analysis", ("sorting", "reporting", "deduplication")),
    ("sorting", "core", "analysis", ("aggregation", "unicode")),
    ("deduplication", "core", "analysis", ("csv", "aggregation")),
    ("reporting", "core", "analysis", ("aggregation", "json")),
    ("validation", "core", "analysis", ("regex", "json", "config-formats")),
    ("scheduling", "core", "time", ("date-time", "validation")),
    ("date-time", "core", "time", ("scheduling", "text-parsing")),
    # system: infrastructure around it
    ("bash", "system", "shell", ("file-io", "permissions", "process-management")),
    ("file-io", "system", "shell", ("archives", "atomic-writes", "permissions")),
    ("permissions", "system", "shell", ("file-io", "bash")),
    ("atomic-writes", "system", "shell", ("concurrency", "file-io")),
    ("concurrency", "system", "shell", ("atomic-writes", "process-management")),
    ("process-management", "system", "services", ("bash", "monitoring", "systemd")),
    ("archives", "system", "storage", ("compression", "file-io")),
    ("compression", "system", "storage", ("archives", "file-io")),
    ("sqlite", "system", "storage", ("csv", "aggregation")),
    ("git", "system", "vcs", ("bash", "text-parsing")),
    ("monitoring", "system", "services", ("systemd", "aggregation", "process-management")),
    ("systemd", "system", "services", ("monitoring", "process-management")),
    ("networking", "system", "services", ("http", "monitoring")),
    ("http", "system", "services", ("networking", "json")),
    ("docker", "system", "services", ("bash", "networking")),
]

#: The static vocabulary, by name.
VOCABULARY: dict[str, SkillNode] = {name: SkillNode(name, tier, group, nb) for name, tier, group, nb in _V}


class Taxonomy:
    """Skill nodes with tiers and neighbours; unknown names become core nodes without neighbours."""

    def __init__(self, nodes: dict[str, SkillNode] | None = None) -> None:
        self.nodes = dict(nodes or VOCABULARY)

    def node(self, name: str) -> SkillNode:
        return self.nodes.get(name) or SkillNode(name, "core", "unregistered")

    def neighbours(self, names: list[str], limit: int, exclude: set[str]) -> list[str]:
        """Up to `limit` neighbours of `names`, in order, not in `exclude`."""
        out: list[str] = []
        for name in names:
            for nb in self.node(name).neighbours:
                if nb not in exclude and nb not in out:
                    out.append(nb)
                    if len(out) == limit:
                        return out
        return out

    def missing(self, skills: set[str]) -> set[str]:
        return skills - set(self.nodes)


@cache
def family_skills() -> dict[str, tuple[str, ...]]:
    """Every shipped family's declared skills."""
    from envpipeline.terminal.families.registry import all_families

    return {name: tuple(f.skills) for name, f in all_families().items()}


#: Optional nodes a seed carries: its required nodes' nearest taxonomy neighbours (in_breadth adds more).
SEED_OPTIONAL_NODES = 2


def seed_optional_nodes(
    required: list[str], taxonomy: Taxonomy | None = None, limit: int = SEED_OPTIONAL_NODES
) -> list[str]:
    """The nodes a seed may add: up to `limit` neighbours of its required nodes, in order, not required.

    Empty when no required node is in the taxonomy (unregistered nodes have no neighbours).
    """
    return (taxonomy or default_taxonomy()).neighbours(list(required), limit, set(required))


def default_taxonomy() -> Taxonomy:
    """The static vocabulary; it covers every family's skills (tested)."""
    return Taxonomy()


def _dedup(names: list[str]) -> list[str]:
    return list(dict.fromkeys(names))


def _reduce(required: list[str], taxonomy: Taxonomy) -> tuple[list[str], list[str]]:
    """(kept, dropped): required system nodes move to optional-removable; one node always stays."""
    kept = [s for s in required if taxonomy.node(s).tier == "core"]
    if not kept and required:
        kept = required[:1]
    return kept, [s for s in required if s not in kept]


def _prompt_tokens(seed: SeedPassRate, projection: str, config: SelectorConfig, base: int) -> int:
    return round(base * config.prompt_growth.get(projection, 1.0)) if seed.instruction else 0


def eligibility(seed: SeedPassRate, tokens: int, config: SelectorConfig) -> list[str]:
    """Reasons a candidate is ineligible (empty: eligible)."""
    reasons = []
    if seed.split != "train":
        reasons.append(f"split '{seed.split}': only train seeds are eligible")
    if seed.overlap:
        reasons.append("overlaps held-out evaluation tasks")
    if tokens > config.max_prompt_tokens:
        reasons.append(f"prompt ~{tokens} tokens > limit {config.max_prompt_tokens}")
    return reasons


def build_candidates(
    seeds: list[SeedPassRate], config: SelectorConfig, taxonomy: Taxonomy | None = None
) -> list[Candidate]:
    """The six candidates of every seed, in seed then ACTIONS order, with eligibility."""
    from envpipeline.terminal.tokenizer import count_tokens

    taxonomy = taxonomy or default_taxonomy()
    out: list[Candidate] = []
    for seed in seeds:
        required = _dedup(seed.required_skills)
        optional = [s for s in _dedup(seed.optional_skills) if s not in required]
        kept, dropped = _reduce(required, taxonomy)
        base_tokens = count_tokens(seed.instruction) if seed.instruction else 0
        for projection, direction in ACTIONS:
            req = kept if projection == "reduce_complexity" else required
            opt = [*optional, *dropped] if projection == "reduce_complexity" else list(optional)
            if direction == "in_breadth":
                opt += taxonomy.neighbours(req, config.breadth_additions, set(required) | set(opt))
            projected = projected_pass_rate(seed.pass_rate, projection, direction, config, seed.family)
            tokens = _prompt_tokens(seed, projection, config, base_tokens)
            reasons = eligibility(seed, tokens, config)
            out.append(
                Candidate(
                    seed_id=seed.seed_id,
                    projection=projection,
                    direction=direction,
                    pass_rate=seed.pass_rate,
                    projected_pass_rate=projected,
                    frontier_score=frontier_score(projected, config),
                    required_skills=list(req),
                    optional_skills=opt,
                    removable_skills=list(dropped) if projection == "reduce_complexity" else [],
                    eligible=not reasons,
                    ineligible_reasons=reasons,
                    prompt_tokens=tokens,
                    split=seed.split,
                )
            )
    return out
