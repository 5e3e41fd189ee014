"""Accepted `TaskRecord`s of every family as `AcceptedTask` rows: one projection, one table of family parts.

`accepted_task(record)` is the only way a task reaches a dataset. What differs per family — the
agents' system prompt, the tools, the SFT trajectory, which criteria a reply alone can satisfy —
is one `FamilyExport` entry in `FAMILY_EXPORTS`. `from_task_record`, `from_gated_task` and
`from_bundle` build the record first and then project it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envpipeline.errors import ConfigError
from envpipeline.export.schemas import flatten_schema, schemas_from_messages
from envpipeline.models.criteria import Criterion, VerifierCriterion
from envpipeline.models.dataset import AcceptedTask, CheckKind, Rubric, RubricChecklistItem, RubricCriterion
from envpipeline.models.env_spec import env_spec_of
from envpipeline.models.task import (
    ComposeEnvironmentRef,
    Family,
    TaskRecord,
    TerminalEnvironmentRef,
    WorldEnvironmentRef,
)
from envpipeline.models.world_task import GatedTask, WorldCriterion
from envpipeline.rubric import TEXT_KINDS, held_at_start
from envpipeline.worlds.records import best_hinted_rollout, world_task_record

__all__ = [
    "TERMINAL_SYSTEM_PROMPT",
    "AcceptedTask",
    "CheckKind",
    "ExportError",
    "Family",
    "FamilyExport",
    "Rubric",
    "RubricChecklistItem",
    "RubricCriterion",
    "accepted_task",
    "best_hinted_rollout",
    "from_bundle",
    "from_gated_task",
    "from_task_record",
    "gated_from_lake_rows",
    "load_gated_tasks",
]

TERMINAL_SYSTEM_PROMPT = (
    "You work in a Linux terminal inside a container. Run shell commands to complete the task; the "
    "task is checked by tests after you finish."
)


class ExportError(ConfigError):
    """A task that cannot be exported as asked (not accepted, malformed, unknown format)."""


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


@dataclass(frozen=True)
class FamilyExport:
    """What a dataset row of one family needs beyond the record's common fields."""

    system_prompt: Callable[[], str]
    rubric_criterion: Callable[[Any, dict[str, float]], RubricCriterion]
    tools: Callable[[TaskRecord], list[dict[str, Any]]]
    messages: Callable[[TaskRecord, bool], list[dict[str, Any]] | None]
    skills: Callable[[TaskRecord], list[str]]
    interfaces: Callable[[TaskRecord], list[str]]
    seed_key: Callable[[TaskRecord], str]
    provenance: Callable[[TaskRecord], dict[str, Any]]
    #: ids of the criteria the task's initial state already meets (`rewards.held_at_start`)
    held_at_start: Callable[[TaskRecord], set[str]]


def _compose_criterion(c: Criterion, _weights: dict[str, float]) -> RubricCriterion:
    text = c.kind in TEXT_KINDS
    return RubricCriterion(
        id=c.id,
        description=c.description,
        kind=c.kind,
        check="text" if text else "state",
        expected_text=str(c.match["text"].value) if text else None,
        spec=c.model_dump_json(),
    )


def _compose_held(record: TaskRecord) -> set[str]:
    """The criteria the initial joint state meets with no reply (a kept record, state_preserved)."""
    from envpipeline.agents.environment import ComposedEnvironment

    states = ComposedEnvironment.from_task_environment(_compose_env(record)).states
    criteria = [c for c in record.criteria if isinstance(c, Criterion)]
    return {c.id for c, held in zip(criteria, held_at_start(criteria, states)) if held}


def _world_held(record: TaskRecord) -> set[str]:
    from envpipeline.worlds.verifier import held_at_start as world_held_at_start

    return set(world_held_at_start([c for c in record.criteria if isinstance(c, WorldCriterion)]))


def _compose_messages(record: TaskRecord, _keep_hints: bool) -> list[dict[str, Any]] | None:
    """The reference replayed by ScriptedAgent(error_rate=0) through the meta-tools."""
    from envpipeline.agents.rollouts import sft_trajectory

    return sft_trajectory(record)


def _compose_system_prompt() -> str:
    from envpipeline.agents.metatools import SYSTEM_PROMPT

    return SYSTEM_PROMPT


def _compose_tools(_record: TaskRecord) -> list[dict[str, Any]]:
    from envpipeline.agents.metatools import META_TOOL_SCHEMAS

    return [flatten_schema(t) for t in META_TOOL_SCHEMAS]


def _compose_env(record: TaskRecord) -> ComposeEnvironmentRef:
    if not isinstance(record.environment, ComposeEnvironmentRef):
        raise ExportError(f"task {record.task_id} is not a composed task")
    return record.environment


def _world_env(record: TaskRecord) -> WorldEnvironmentRef:
    if not isinstance(record.environment, WorldEnvironmentRef):
        raise ExportError(f"task {record.task_id} is not a world task")
    return record.environment


def _terminal_env(record: TaskRecord) -> TerminalEnvironmentRef:
    if not isinstance(record.environment, TerminalEnvironmentRef):
        raise ExportError(f"task {record.task_id} is not a terminal task")
    return record.environment


def _world_criterion(c: WorldCriterion, weights: dict[str, float]) -> RubricCriterion:
    return RubricCriterion(
        id=c.id,
        description=c.description,
        kind=c.kind,
        check="state",
        weight=weights.get(c.id, 1.0),
        spec=c.model_dump_json(),
    )


def _world_messages(record: TaskRecord, keep_hints: bool) -> list[dict[str, Any]] | None:
    """The best successful hinted rollout; its user turn becomes the unhinted task unless `keep_hints`.

    Stripping the hints from the user turn makes the trajectory teach the unhinted task (the
    hints stay in the rubric).
    """
    demonstration = record.metadata.get("demonstration")
    if demonstration is None:
        return None
    messages = [dict(m) for m in demonstration]
    if not keep_hints:
        for m in messages:
            if m.get("role") == "user":
                m["content"] = record.instruction
    return messages


def _world_system_prompt() -> str:
    from envpipeline.worlds.agents import SYSTEM_PROMPT

    return SYSTEM_PROMPT


def _world_provenance(record: TaskRecord) -> dict[str, Any]:
    env = _world_env(record)
    return {
        "persona_id": env.persona_id,
        "day": env.day,
        "template": env.template,
        "interface_flow": env.interface_flow,
        "hints": env.hints,
    }


def _terminal_criterion(c: VerifierCriterion, _weights: dict[str, float]) -> RubricCriterion:
    return RubricCriterion(
        id=c.id,
        description=c.description,
        kind=c.kind,
        check="verifier",
        spec=_json({"verifier_timeout_sec": c.verifier_timeout_sec}),
    )


def _terminal_provenance(record: TaskRecord) -> dict[str, Any]:
    env = _terminal_env(record)
    return {
        "category": env.category,
        "fingerprint": env.fingerprint,
        "bundle": record.metadata.get("bundle", {}),
    }


FAMILY_EXPORTS: dict[str, FamilyExport] = {
    "compose": FamilyExport(
        system_prompt=_compose_system_prompt,
        rubric_criterion=_compose_criterion,
        tools=_compose_tools,
        messages=_compose_messages,
        skills=lambda r: sorted(set(map(str, r.metadata.get("hops", [])))),
        interfaces=lambda r: sorted(_compose_env(r).services),
        # each candidate is drawn from its own rng seed; the batch is only a partition
        seed_key=lambda r: f"{r.seed_key}-{r.provenance.seed}",
        provenance=lambda r: {"distractors": _compose_env(r).distractors},
        held_at_start=_compose_held,
    ),
    "world": FamilyExport(
        system_prompt=_world_system_prompt,
        rubric_criterion=_world_criterion,
        tools=lambda r: schemas_from_messages(m for t in r.metadata.get("trajectories", []) for m in t),
        messages=_world_messages,
        skills=lambda r: [_world_env(r).template],
        interfaces=lambda r: sorted(set(_world_env(r).interface_flow)),
        seed_key=lambda r: r.seed_key,
        provenance=_world_provenance,
        held_at_start=_world_held,
    ),
    "terminal": FamilyExport(
        system_prompt=lambda: TERMINAL_SYSTEM_PROMPT,
        rubric_criterion=_terminal_criterion,
        tools=lambda _r: [],
        messages=lambda _r, _k: None,
        skills=lambda r: sorted(set(_terminal_env(r).tags)),
        interfaces=lambda _r: ["terminal"],
        seed_key=lambda r: r.seed_key,
        provenance=_terminal_provenance,
        held_at_start=lambda _r: set(),
    ),
}


def _criterion_weights(record: TaskRecord) -> dict[str, float]:
    """Each criterion's share of the checklist weight (world tasks; empty otherwise)."""
    weights: dict[str, float] = {}
    if isinstance(record.environment, WorldEnvironmentRef):
        for item in record.environment.checklist:
            for cid in item["criteria"]:
                weights[cid] = weights.get(cid, 0.0) + item["weight"] / len(item["criteria"])
    return weights


def _gate_stats(record: TaskRecord) -> dict[str, Any]:
    extra = {k: record.metadata[k] for k in ("rollouts", "rollout_success") if k in record.metadata}
    red_team = next((g for g in record.gates if g.name == "red_team"), None)
    if red_team is not None:
        # per policy: binary reward and checklist credit it earned (binary 1 = the task was broken)
        extra["red_team"] = {
            name: {
                "binary": o.get("binary", 0.0),
                "checklist": o.get("checklist", 0.0),
                "moot": o.get("moot", False),
            }
            for name, o in red_team.evidence.get("policies", {}).items()
        }
    return {
        "gates": {g.name: g.passed for g in record.gates},
        "n_gates": len(record.gates),
        "n_passed": sum(g.passed for g in record.gates),
        **extra,
    }


def accepted_task(
    record: TaskRecord, source: str = "", keep_hints: bool = False, world_snapshot: str | None = None
) -> AcceptedTask:
    """The dataset row of one accepted record of any family.

    Args:
        record: an accepted task record.
        source: where it was read from (an asset name or a folder).
        keep_hints: keep the hints in a world task's SFT user turn.
        world_snapshot: a world task's W0 to inline in its ``env_spec`` (base64 .tar.gz).
    """
    if record.status != "accepted":
        raise ExportError(f"task {record.task_id} is {record.status}, only accepted tasks are exported")
    family = FAMILY_EXPORTS[record.family]
    weights = _criterion_weights(record)
    held = family.held_at_start(record)
    world = isinstance(record.environment, WorldEnvironmentRef)
    rubric = Rubric(
        task_id=record.task_id,
        family=record.family,
        criteria=[
            family.rubric_criterion(c, weights).model_copy(update={"held_at_start": c.id in held})
            for c in record.criteria
        ],
        reference_output=record.reference_output,
        hints=record.environment.hints if world else [],
        checklist=[RubricChecklistItem(**i) for i in record.environment.checklist] if world else [],
    )
    messages = family.messages(record, keep_hints)
    return AcceptedTask(
        task_id=record.task_id,
        family=record.family,
        seed_key=family.seed_key(record),
        instruction=record.instruction,
        system_prompt=family.system_prompt(),
        difficulty=str(record.metadata.get("difficulty", "unknown")),
        skills=family.skills(record),
        interfaces=family.interfaces(record),
        criteria=rubric.model_dump_json(),
        tools=_json(family.tools(record)),
        reference_messages=None if messages is None else _json(messages),
        gate_stats=_json(_gate_stats(record)),
        provenance=_json(
            {**record.provenance.model_dump(), "origin": record.family, **family.provenance(record)}
        ),
        source=source or (record.environment.bundle_path if record.family == "terminal" else ""),
        env_spec=env_spec_of(record).model_copy(update={"world_snapshot": world_snapshot}).model_dump_json(),
    )


def from_task_record(record: TaskRecord, source: str = "") -> AcceptedTask:
    """A composed task; its SFT trajectory is the reference replayed by ScriptedAgent(error_rate=0)."""
    return accepted_task(record, source)


def from_gated_task(
    gated: GatedTask, source: str = "", keep_hints: bool = False, worlds_root: str | Path | None = None
) -> AcceptedTask:
    """A WildAWM task; SFT is its best successful hinted rollout, hints stripped unless `keep_hints`.

    With `worlds_root` (the folder holding ``<persona>/day-dd``), the task's W0 is inlined in its
    ``env_spec``, so trainer workers rebuild the world without the folder.
    """
    if gated.status != "accepted":
        raise ExportError(f"world task {gated.task.task_id} is {gated.status}; only accepted tasks export")
    record = world_task_record(gated)
    snapshot = None
    if worlds_root is not None:
        from envpipeline.trainers.families.world import inline_w0

        snapshot = inline_w0(env_spec_of(record), worlds_root)
    return accepted_task(record, source, keep_hints, snapshot)


def from_bundle(
    folder: str | Path,
    verification: dict[str, Any] | None = None,
    source: str = "",
    red_team: list[dict[str, Any]] | None = None,
) -> AcceptedTask:
    """A verified terminal bundle (Harbor folder): instruction.md and task.toml metadata; no SFT.

    Args:
        folder: the bundle directory.
        verification: gate outcomes of the bundle (e.g. ``{"oracle": True, "nop": True}``), if known.
        source: where it was read from (defaults to the folder).
        red_team: the per-policy red-team outcomes stored with its verification, if any.
    """
    from envpipeline.terminal.records import terminal_task_record

    record = terminal_task_record(folder, verification, red_team)
    # an exported folder is accepted by being here; its verification (if given) is in its gates
    return accepted_task(record.model_copy(update={"status": "accepted"}), source)


def load_gated_tasks(path: str | Path) -> list[GatedTask]:
    """GatedTask records of a WildAWM ``tasks.jsonl`` (one per line)."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [GatedTask.model_validate_json(line) for line in lines if line.strip()]


def gated_from_lake_rows(rows: Iterable[dict[str, Any]]) -> list[GatedTask]:
    """GatedTask records of ``gated_world_tasks`` lake rows (JSON in column ``record``)."""
    return [GatedTask.model_validate_json(row["record"]) for row in rows]
