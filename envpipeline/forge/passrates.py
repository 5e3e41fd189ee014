"""Seed pass rates: the mean verifier reward of K rollouts of a `Policy`, or of a recorded table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from envpipeline.errors import ConfigError
from envpipeline.forge.policy import ScriptedTerminalPolicy
from envpipeline.forge.seed_skills import bundle_text, infer_skills
from envpipeline.models.selection import SeedPassRate
from envpipeline.policies.base import Policy, RolloutRecord, TerminalTarget
from envpipeline.policies.recorded import read_rollouts_table, recorded_pass_rates, rows_of_policy
from envpipeline.policies.registry import PolicyConfig, build_policy
from envpipeline.sandbox.base import Sandbox
from envpipeline.select.skills import seed_optional_nodes
from envpipeline.terminal.bundle import read_bundle

#: detail facts of a rollout also stored as columns of its row (the readers of `rollouts` use them)
ROW_COLUMNS = ("skill", "difficulty", "backend")


def seed_skills(bundle_dir: Path) -> tuple[list[str], list[str]]:
    """(required, optional) skill nodes of a bundle. Required: its tags (less its family's name),
    else the skill nodes its instruction and tests name (`seed_skills.infer_skills`); optional: the
    nearest taxonomy neighbours of those (`seed_optional_nodes`; none for unregistered nodes)."""
    bundle = read_bundle(bundle_dir)
    meta = bundle.config.metadata
    family = meta.envpipeline.get("family")
    tags = sorted({t for t in meta.tags if t != family})
    required = tags or infer_skills(bundle_text(bundle_dir, bundle.instruction))
    return required, seed_optional_nodes(required)


def as_policy(policy: Policy | ScriptedTerminalPolicy | None) -> Policy:
    """A `Policy`: the scripted default for None, a `ScriptedTerminalPolicy` as the scripted kind."""
    if policy is None:
        return build_policy()
    if isinstance(policy, ScriptedTerminalPolicy):
        return build_policy(
            PolicyConfig(name=policy.name, skill=policy.skill, give_up=policy.give_up, seed=policy.seed)
        )
    return policy


def rollout_row(seed_id: str, record: RolloutRecord) -> dict[str, Any]:
    """A stored rollout row: the record's dump, keyed by seed, with its episode number as `rollout`
    and the `ROW_COLUMNS` detail facts as columns."""
    facts = {k: record.detail[k] for k in ROW_COLUMNS if k in record.detail}
    return {"seed_id": seed_id, "rollout": record.index, **record.model_dump(mode="json"), **facts}


def estimate_pass_rate(
    seed_id: str,
    bundle_dir: Path,
    policy: Policy | ScriptedTerminalPolicy | None,
    sandbox: Sandbox,
    k: int = 4,
) -> tuple[SeedPassRate, list[dict[str, Any]]]:
    """Run K rollouts of `policy` on a bundle; returns the estimate and every rollout row."""
    if k < 1:
        raise ConfigError("K (rollouts per seed) must be at least 1")
    player = as_policy(policy)
    target = TerminalTarget(bundle_dir=bundle_dir, sandbox=sandbox, task_id=seed_id)
    records = [player.rollout(target, i) for i in range(k)]
    required, optional = seed_skills(bundle_dir)
    rate = sum(r.reward for r in records) / k
    return SeedPassRate(
        seed_id=seed_id, pass_rate=rate, required_skills=required, optional_skills=optional, rollouts=k
    ), [rollout_row(seed_id, r) for r in records]


def pass_rates_from_rows(rows: list[dict[str, Any]]) -> list[SeedPassRate]:
    """The estimates stored in the lake's `seed_pass_rates` rows (seeds skipped for lack of a
    gold-verified bundle have no pass rate and are left out)."""
    return [
        SeedPassRate(
            seed_id=r["seed_id"],
            pass_rate=r["pass_rate"],
            required_skills=json.loads(r["required_skills"]),
            optional_skills=json.loads(r["optional_skills"]),
            family=r.get("family"),
        )
        for r in rows
        if r["pass_rate"] is not None
    ]


def pass_rates_from_rollouts(path: Path, policy: str | None = None) -> list[SeedPassRate]:
    """Pass rates from a recorded rollouts table (JSONL or Parquet; see `policies.recorded`): the
    mean reward of each task's episodes, of `policy` (or the table's only policy)."""
    return recorded_pass_rates(rows_of_policy(read_rollouts_table(path), policy, path))
