"""Kind ``recorded``: rewards recorded by any harness, looked up by task id.

A rollouts table is JSONL (one object a line) or Parquet (``.parquet``), one row per episode::

    {"task_id": "...", "policy": "...", "reward": 1, "criteria": {"c1": true}, "required_skills": [...]}

``task_id`` names a procedural, synthesized or imported task (``seed_id`` is accepted as its old
name); ``reward`` is a plain decimal in [0, 1] (by the verifier's reward rule); ``policy``,
``criteria`` (per-criterion booleans) and ``required_skills`` are optional (in Parquet the last
two may be JSON text). Other columns (a harness's own, or every field of a `RolloutRecord` dump)
are ignored. Every row is checked when the table is read, and a bad one is refused with its
``file:line``. Episode i of a task is the task's i-th row in table order.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from envpipeline.errors import ConfigError
from envpipeline.models.selection import SeedPassRate
from envpipeline.policies.base import PolicyKind, RolloutRecord, RolloutTarget, TargetFamily
from envpipeline.policies.registry import PolicyConfig, register_policy_kind
from envpipeline.terminal.reward_value import (
    MalformedReward,
    NumberText,
    load_json_numbers_as_text,
    reward_from_json_value,
)
from envpipeline.textfiles import read_text_file


class RecordedRollout(BaseModel):
    """One validated row of a rollouts table."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: Annotated[str, Field(min_length=1, description="the task the episode attempted")]
    policy: Annotated[str, Field(description="the policy that played it ('' when not recorded)")] = ""
    reward: Annotated[float, Field(ge=0.0, le=1.0, description="the verifier's reward")]
    criteria: Annotated[dict[str, bool] | None, Field(description="per-criterion results")] = None
    required_skills: Annotated[list[str] | None, Field(description="the task's required skills")] = None
    where: Annotated[str, Field(description="file:line (or file:row) of the row")]


def read_rollouts_table(path: Path) -> list[RecordedRollout]:
    """Every row of a JSONL or Parquet rollouts table (ConfigError naming file:line on a bad one)."""
    if path.suffix == ".parquet":
        return [_row(raw, f"{path}:row {n}") for n, raw in enumerate(_parquet_rows(path), start=1)]
    rows = []
    for number, line in enumerate(read_text_file(path, "the rollouts table").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            raw = load_json_numbers_as_text(line, "the row")
        except MalformedReward as e:
            raise ConfigError(
                f"{where}: a rollout row is one JSON object with a reward in [0, 1] as a plain "
                f"decimal number ({e})"
            ) from e
        rows.append(_row(raw, where))
    return rows


def _parquet_rows(path: Path) -> list[Any]:
    import pyarrow.parquet as pq

    try:
        return pq.read_table(path).to_pylist()
    except (OSError, ValueError) as e:
        raise ConfigError(f"{path}: not a readable Parquet rollouts table ({e})") from e


def _row(raw: object, where: str) -> RecordedRollout:
    """One row checked field by field; ConfigError says which field and where."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: a rollout row must be an object, not {type(raw).__name__}")
    task_id, seed_id = raw.get("task_id"), raw.get("seed_id")
    if task_id is not None and seed_id is not None and task_id != seed_id:
        raise ConfigError(f"{where}: task_id {task_id!r} and its alias seed_id {seed_id!r} differ")
    key = task_id if task_id is not None else seed_id
    if not _text(key):
        raise ConfigError(f"{where}: a rollout row needs task_id (or seed_id): a non-empty string")
    if "reward" not in raw:
        raise ConfigError(f"{where}: a rollout row needs a reward in [0, 1] as a plain decimal number")
    try:
        reward = reward_from_json_value(raw["reward"], "its reward")
    except MalformedReward as e:
        raise ConfigError(
            f"{where}: a rollout row needs a reward in [0, 1] as a plain decimal number ({e})"
        ) from e
    policy = raw.get("policy")
    if policy is not None and not _text(policy, empty=True):
        raise ConfigError(f"{where}: policy must be a string")
    criteria = _decoded(raw.get("criteria"), where, "criteria")
    if criteria is not None and not (
        isinstance(criteria, dict) and all(_text(k) and isinstance(v, bool) for k, v in criteria.items())
    ):
        raise ConfigError(f"{where}: criteria must map criterion ids to true/false")
    skills = _decoded(raw.get("required_skills"), where, "required_skills")
    if skills is not None and not (isinstance(skills, list) and all(_text(s) for s in skills)):
        raise ConfigError(f"{where}: required_skills must be a list of skill names")
    return RecordedRollout(
        task_id=str(key),
        policy=str(policy or ""),
        reward=reward,
        criteria=criteria,
        required_skills=skills,
        where=where,
    )


def _text(value: object, empty: bool = False) -> bool:
    """A string from the table itself (a JSON number is no name)."""
    return isinstance(value, str) and not isinstance(value, NumberText) and (empty or bool(value))


def _decoded(value: object, where: str, field: str) -> object:
    """A JSON-text column (as the lake and Parquet writers store lists and maps) decoded."""
    if not _text(value):
        return value
    try:
        return json.loads(str(value))
    except json.JSONDecodeError as e:
        raise ConfigError(f"{where}: {field} is text but not JSON ({e})") from e


def rows_of_policy(rows: list[RecordedRollout], policy: str | None, table: Path) -> list[RecordedRollout]:
    """The rows of one policy: `policy`, or the table's only one (ConfigError when it holds several)."""
    names = sorted({r.policy for r in rows if r.policy})
    if policy:
        if policy not in names:
            raise ConfigError(f"{table} holds no rollouts of policy {policy!r} (it holds: {names or 'none'})")
        return [r for r in rows if r.policy == policy]
    if len(names) > 1:
        raise ConfigError(f"{table} holds rollouts of policies {names}: choose one by its name")
    return rows


def recorded_pass_rates(rows: list[RecordedRollout]) -> list[SeedPassRate]:
    """Mean recorded reward per task (K = its episodes), with the table's skills where given."""
    rewards: dict[str, list[float]] = defaultdict(list)
    skills: dict[str, list[str]] = {}
    for row in rows:
        rewards[row.task_id].append(row.reward)
        if row.required_skills:
            skills[row.task_id] = list(row.required_skills)
    return [
        SeedPassRate(
            seed_id=task, pass_rate=sum(r) / len(r), required_skills=skills.get(task, []), rollouts=len(r)
        )
        for task, r in sorted(rewards.items())
    ]


class RecordedPolicy:
    """Replays a rollouts table: episode i of a task is its i-th recorded row."""

    kind: PolicyKind = "recorded"
    families: frozenset[TargetFamily] = frozenset({"terminal", "composed", "world"})

    def __init__(self, config: PolicyConfig) -> None:
        if not config.rollouts_table:
            raise ConfigError(
                "the recorded policy needs a rollouts table (rollouts_table / --rollouts-table)"
            )
        self.table = Path(config.rollouts_table)
        rows = rows_of_policy(read_rollouts_table(self.table), config.name, self.table)
        self.name = config.name or next((r.policy for r in rows if r.policy), "recorded")
        self.episodes: dict[str, list[RecordedRollout]] = defaultdict(list)
        for row in rows:
            self.episodes[row.task_id].append(row)

    def rollout(self, target: RolloutTarget, index: int) -> RolloutRecord:
        """The `index`-th recorded episode of the target's task."""
        recorded = self.episodes.get(target.key, [])
        if not recorded:
            raise ConfigError(f"{self.table} has no rollouts of task {target.key!r}")
        if not 0 <= index < len(recorded):
            raise ConfigError(
                f"{self.table} has {len(recorded)} rollout(s) of task {target.key!r}, "
                f"episode {index} was asked (ask for at most {len(recorded)})"
            )
        row = recorded[index]
        return RolloutRecord(
            task_id=target.key,
            family=target.family,
            policy=row.policy or self.name,
            kind="recorded",
            index=index,
            reward=row.reward,
            criteria=row.criteria,
            detail={"recorded_at": row.where},
        )


@register_policy_kind("recorded")
def build_recorded(config: PolicyConfig) -> RecordedPolicy:
    """The recorded policy of `config` (its rollouts table, optionally one policy's rows by name)."""
    return RecordedPolicy(config)
