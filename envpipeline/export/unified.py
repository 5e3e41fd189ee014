"""One `AcceptedTask` schema for the compose, world and terminal families, and converters into it.

Every family's accepted task becomes the same flat record; nested payloads travel as JSON strings
so the record is one homogeneous Parquet row. `criteria` holds a `Rubric`: the criteria a reward
adapter scores, each marked with what it needs to be checked (``text``: the final reply alone;
``state``: the final environment state; ``verifier``: the bundle's own tests).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from envpipeline.errors import ConfigError
from envpipeline.export.schemas import flatten_schema, schemas_from_messages
from envpipeline.models.task import Strict, TaskRecord
from envpipeline.models.world_task import GatedTask
from envpipeline.models.world_task import Rollout as WorldRollout

Family = Literal["compose", "world", "terminal"]
CheckKind = Literal["text", "state", "verifier"]
TERMINAL_SYSTEM_PROMPT = (
    "You work in a Linux terminal inside a container. Run shell commands to complete the task; the "
    "task is checked by tests after you finish."
)


class ExportError(ConfigError):
    """A task that cannot be exported as asked (not accepted, malformed, unknown format)."""


class RubricCriterion(Strict):
    """One scored criterion, family-neutral."""

    id: Annotated[str, Field(description="stable id within the task")]
    description: Annotated[str, Field(description="what a grader checks, in words")]
    kind: Annotated[str, Field(description="the family's criterion kind, e.g. record_exists")]
    check: Annotated[CheckKind, Field(description="text: final reply; state: final state; verifier: tests")]
    weight: Annotated[float, Field(gt=0, description="prior importance (checklist weight share)")] = 1.0
    expected_text: Annotated[str | None, Field(description="text criteria: the reply must contain it")] = None
    spec: Annotated[str, Field(description="the family-native criterion as JSON")] = "{}"


class RubricChecklistItem(Strict):
    """A weighted partial-credit item over criteria (world tasks)."""

    id: str
    description: str
    weight: Annotated[float, Field(gt=0)]
    criteria: list[str]


class Rubric(Strict):
    """What a reward adapter needs to score one completion of a task."""

    task_id: Annotated[str, Field(description="the task this rubric belongs to")]
    family: Annotated[Family, Field(description="compose, world or terminal")]
    criteria: Annotated[list[RubricCriterion], Field(min_length=1, description="scored criteria")]
    checklist: Annotated[list[RubricChecklistItem], Field(description="weighted items (world)")] = []
    hints: Annotated[list[str], Field(description="one per sub-task (world)")] = []
    reference_output: Annotated[str, Field(description="the gold final reply, if any")] = ""

    def weights(self) -> list[float]:
        """Prior weight of each criterion, in order."""
        return [c.weight for c in self.criteria]


class AcceptedTask(Strict):
    """One accepted task of any family, as stored in the `accepted_tasks` asset."""

    task_id: Annotated[str, Field(description="stable id")]
    family: Annotated[Family, Field(description="compose, world or terminal")]
    seed_key: Annotated[str, Field(description="the seed it came from; splits never share one")]
    instruction: Annotated[str, Field(description="the prompt given to the agent")]
    system_prompt: Annotated[str, Field(description="the system message of the family's agents")]
    difficulty: Annotated[str, Field(description="easy, medium, hard or unknown")]
    skills: Annotated[list[str], Field(description="skills exercised")]
    interfaces: Annotated[list[str], Field(description="services (compose), web/cli/mcp (world), terminal")]
    criteria: Annotated[str, Field(description="the Rubric as JSON")]
    tools: Annotated[str, Field(description="JSON list of flat OpenAI tool schemas")]
    reference_messages: Annotated[str | None, Field(description="JSON SFT trajectory, or None")] = None
    gate_stats: Annotated[str, Field(description="JSON: gate name -> passed, plus counts")]
    provenance: Annotated[str, Field(description="JSON: generator, version, seed, parent, origin")]
    source: Annotated[str, Field(description="where the record was read from")] = ""

    def rubric(self) -> Rubric:
        """The parsed rubric."""
        return Rubric.model_validate_json(self.criteria)

    def tool_schemas(self) -> list[dict[str, Any]]:
        """The parsed tool schemas."""
        return json.loads(self.tools)

    def messages(self) -> list[dict[str, Any]] | None:
        """The parsed SFT trajectory (tool-call arguments as JSON strings), or None."""
        return None if self.reference_messages is None else json.loads(self.reference_messages)


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _gate_stats(gates: Iterable[Any], **extra: Any) -> str:
    gates = list(gates)
    return _json(
        {
            "gates": {g.name: g.passed for g in gates},
            "n_gates": len(gates),
            "n_passed": sum(g.passed for g in gates),
            **extra,
        }
    )


def from_task_record(record: TaskRecord, source: str = "") -> AcceptedTask:
    """A composed task; its SFT trajectory is the reference replayed by ScriptedAgent(error_rate=0)."""
    from envpipeline.agents.metatools import META_TOOL_SCHEMAS, SYSTEM_PROMPT
    from envpipeline.agents.rollouts import sft_trajectory

    if record.status != "accepted":
        raise ExportError(f"task {record.task_id} is {record.status}, only accepted tasks are exported")
    criteria = [
        RubricCriterion(
            id=c.id,
            description=c.description,
            kind=c.kind,
            check="text" if c.kind == "output_contains" else "state",
            expected_text=str(c.match["text"].value) if c.kind == "output_contains" else None,
            spec=c.model_dump_json(),
        )
        for c in record.criteria
    ]
    rubric = Rubric(
        task_id=record.task_id,
        family=record.family,
        criteria=criteria,
        reference_output=record.reference_output,
    )
    messages = sft_trajectory(record)
    meta = record.metadata
    return AcceptedTask(
        task_id=record.task_id,
        family=record.family,
        # each candidate is drawn from its own rng seed; the batch is only a partition
        seed_key=f"{record.seed_key}-{record.provenance.seed}",
        instruction=record.instruction,
        system_prompt=SYSTEM_PROMPT,
        difficulty=str(meta.get("difficulty", "unknown")),
        skills=sorted(set(map(str, meta.get("hops", [])))),
        interfaces=sorted(record.environment.get("services", [])),
        criteria=rubric.model_dump_json(),
        tools=_json([flatten_schema(t) for t in META_TOOL_SCHEMAS]),
        reference_messages=None if messages is None else _json(messages),
        gate_stats=_gate_stats(record.gates),
        provenance=_json(
            {
                **record.provenance.model_dump(),
                "origin": "compose",
                "distractors": record.environment.get("distractors", []),
            }
        ),
        source=source,
    )


def best_hinted_rollout(gated: GatedTask) -> WorldRollout | None:
    """The successful hinted rollout with the highest reward (then fewest tool calls), or None."""
    good = [
        r
        for r in gated.rollouts
        if r.hinted
        and r.verdict == 1
        and r.format_ok
        and r.criteria
        and all(r.criteria.values())
        and r.trajectory
    ]
    return min(good, key=lambda r: (-r.reward, r.tool_calls, r.index), default=None)


def _criterion_weights(gated: GatedTask) -> dict[str, float]:
    weights: dict[str, float] = {}
    for item in gated.task.checklist:
        for cid in item.criteria:
            weights[cid] = weights.get(cid, 0.0) + item.weight / len(item.criteria)
    return weights


def from_gated_task(gated: GatedTask, source: str = "", keep_hints: bool = False) -> AcceptedTask:
    """A WildAWM task; SFT is its best successful hinted rollout, hints stripped unless `keep_hints`.

    Stripping the hints from the user turn makes the trajectory teach the unhinted task (the
    hints stay in the rubric). Tool schemas are inferred from every recorded rollout.
    """
    from envpipeline.worlds.agents import SYSTEM_PROMPT

    if gated.status != "accepted":
        raise ExportError(f"world task {gated.task.task_id} is {gated.status}; only accepted tasks export")
    task = gated.task
    weights = _criterion_weights(gated)
    criteria = [
        RubricCriterion(
            id=c.id,
            description=c.description,
            kind=c.kind,
            check="state",
            weight=weights.get(c.id, 1.0),
            spec=c.model_dump_json(),
        )
        for c in task.criteria
    ]
    rubric = Rubric(
        task_id=task.task_id,
        family="world",
        criteria=criteria,
        hints=task.hints,
        checklist=[RubricChecklistItem(**i.model_dump()) for i in task.checklist],
    )
    best = best_hinted_rollout(gated)
    messages = None
    if best is not None:
        messages = [dict(m) for m in best.trajectory]
        if not keep_hints:
            for m in messages:
                if m.get("role") == "user":
                    m["content"] = task.instruction
    every_call = [m for r in gated.rollouts for m in r.trajectory]
    return AcceptedTask(
        task_id=task.task_id,
        family="world",
        seed_key=task.persona_id,
        instruction=task.instruction,
        system_prompt=SYSTEM_PROMPT,
        difficulty=gated.difficulty or "unknown",
        skills=[task.template],
        interfaces=sorted(set(task.interface_flow)),
        criteria=rubric.model_dump_json(),
        tools=_json(schemas_from_messages(every_call)),
        reference_messages=None if messages is None else _json(messages),
        gate_stats=_gate_stats(
            gated.gates,
            rollouts=len(gated.rollouts),
            rollout_success=sum(r.verdict == 1 for r in gated.rollouts),
        ),
        provenance=_json(
            {
                "generator": "wildawm.templates",
                "generator_version": "1",
                "origin": "world",
                "seed": task.index,
                "parent": None,
                "persona_id": task.persona_id,
                "day": task.day,
                "template": task.template,
                "interface_flow": task.interface_flow,
                "hints": task.hints,
            }
        ),
        source=source,
    )


def from_bundle(
    folder: str | Path, verification: dict[str, Any] | None = None, source: str = ""
) -> AcceptedTask:
    """A verified terminal bundle (Harbor folder): instruction.md and task.toml metadata; no SFT.

    Args:
        folder: the bundle directory.
        verification: gate outcomes of the bundle (e.g. ``{"oracle": True, "nop": True}``), if known.
        source: where it was read from (defaults to the folder).
    """
    from envpipeline.terminal.bundle import read_bundle
    from envpipeline.terminal.seeds import seed_key_for
    from envpipeline.terminal.verify import bundle_fingerprint

    folder = Path(folder)
    bundle = read_bundle(folder)
    meta = bundle.config.metadata
    fingerprint = bundle_fingerprint(folder)
    task_id = f"tb-{hashlib.sha256(fingerprint.encode()).hexdigest()[:16]}"
    rubric = Rubric(
        task_id=task_id,
        family="terminal",
        criteria=[
            RubricCriterion(
                id="tests",
                description="tests/test.sh reports a reward of 1",
                kind="verifier_reward",
                check="verifier",
                spec=_json({"verifier_timeout_sec": bundle.config.verifier.timeout_sec}),
            )
        ],
    )
    gates = verification or {}
    origin = dict(meta.envpipeline)
    return AcceptedTask(
        task_id=task_id,
        family="terminal",
        # a synthesized bundle "<seed>--<action>-s<k>" shares its seed's group
        seed_key=seed_key_for(folder.name.split("--", 1)[0]),
        instruction=bundle.instruction,
        system_prompt=TERMINAL_SYSTEM_PROMPT,
        difficulty=meta.difficulty,
        skills=sorted(set(meta.tags)),
        interfaces=["terminal"],
        criteria=rubric.model_dump_json(),
        tools="[]",
        gate_stats=_json({"gates": gates, "n_gates": len(gates), "n_passed": sum(map(bool, gates.values()))}),
        provenance=_json(
            {
                "generator": f"terminal.{origin.get('family', 'import')}",
                "generator_version": "1",
                "origin": "terminal",
                "seed": origin.get("seed"),
                "parent": None,
                "category": meta.category,
                "fingerprint": fingerprint,
                "bundle": origin,
            }
        ),
        source=source or str(folder),
    )


def load_gated_tasks(path: str | Path) -> list[GatedTask]:
    """GatedTask records of a WildAWM ``tasks.jsonl`` (one per line)."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [GatedTask.model_validate_json(line) for line in lines if line.strip()]


def gated_from_lake_rows(rows: Iterable[dict[str, Any]]) -> list[GatedTask]:
    """GatedTask records of ``gated_world_tasks`` lake rows (JSON in column ``record``)."""
    return [GatedTask.model_validate_json(row["record"]) for row in rows]
