"""Seed pass rates: the mean verifier reward of K rollouts, from a policy or a recorded table."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from envpipeline.errors import ConfigError
from envpipeline.forge.policy import ScriptedTerminalPolicy
from envpipeline.models.selection import SeedPassRate
from envpipeline.sandbox.base import Sandbox
from envpipeline.terminal.bundle import read_bundle
from envpipeline.terminal.reward_value import (
    MalformedReward,
    load_json_numbers_as_text,
    reward_from_json_value,
)
from envpipeline.textfiles import read_text_file


def seed_skills(bundle_dir: Path) -> tuple[list[str], list[str]]:
    """Required skills of a bundle (its family's skills, or its tags); no optional ones yet."""
    meta = read_bundle(bundle_dir).config.metadata
    family = meta.envpipeline.get("family")
    tags = [t for t in meta.tags if t != family]
    return sorted(set(tags)), []


def estimate_pass_rate(
    seed_id: str, bundle_dir: Path, policy: ScriptedTerminalPolicy, sandbox: Sandbox, k: int = 4
) -> tuple[SeedPassRate, list[dict[str, Any]]]:
    """Run K rollouts of `policy` on a bundle; returns the estimate and every rollout row."""
    if k < 1:
        raise ConfigError("K (rollouts per seed) must be at least 1")
    rows = [{"seed_id": seed_id, **policy.rollout(bundle_dir, sandbox, i)} for i in range(k)]
    required, optional = seed_skills(bundle_dir)
    rate = sum(r["reward"] for r in rows) / k
    return SeedPassRate(
        seed_id=seed_id, pass_rate=rate, required_skills=required, optional_skills=optional, rollouts=k
    ), rows


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


def pass_rates_from_rollouts(path: Path) -> list[SeedPassRate]:
    """Pass rates from a recorded rollouts table: JSONL rows {"seed_id", "reward", ...}."""
    rewards: dict[str, list[float]] = defaultdict(list)
    skills: dict[str, list[str]] = {}
    for number, line in enumerate(read_text_file(path, "the rollouts table").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = load_json_numbers_as_text(line, "the row")
            if not isinstance(row, dict) or "seed_id" not in row or "reward" not in row:
                raise MalformedReward("the row is not an object with seed_id and reward")
            rewards[str(row["seed_id"])].append(reward_from_json_value(row["reward"], "its reward"))
        except MalformedReward as e:
            raise ConfigError(
                f"{path}:{number}: a rollout row needs seed_id and a reward in [0, 1] "
                f"as a plain decimal number ({e})"
            ) from e
        if row.get("required_skills"):
            skills[str(row["seed_id"])] = list(row["required_skills"])
    return [
        SeedPassRate(
            seed_id=seed,
            pass_rate=sum(r) / len(r),
            required_skills=skills.get(seed, []),
            rollouts=len(r),
        )
        for seed, r in sorted(rewards.items())
    ]
