"""Compose and verify cross-service tasks: draft a candidate, run the reference, gate, record."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from envpipeline.agents.environment import ComposedEnvironment
from envpipeline.agents.reference import run_reference
from envpipeline.compose import gates
from envpipeline.compose.author import GENERATOR, GENERATOR_VERSION, ComposeConfig, Draft, draft_task
from envpipeline.models import gates as gate_models
from envpipeline.models.gates import GateResult
from envpipeline.models.task import Provenance, TaskRecord
from envpipeline.redteam.compose import red_team_gate
from envpipeline.services.registry import all_services


def draft_record(seed: int, config: ComposeConfig, seed_key: str = "adhoc") -> TaskRecord:
    """Compose one candidate from `seed`; an uncomposable walk is rejected with its reason."""
    return _record_from_draft(draft_task(seed, config), seed_key)


def _record_from_draft(draft: Draft, seed_key: str) -> TaskRecord:
    seed = draft.seed
    task_hash = draft.task_hash()
    record = TaskRecord(
        task_id=f"cw-{task_hash[:16]}",
        family="compose",
        seed_key=seed_key,
        instruction=draft.instruction,
        environment=draft.environment_ref(),
        criteria=draft.criteria,
        reference_solution=draft.steps,
        reference_output=draft.reference_output,
        metadata={**draft.metadata, "hidden_values": draft.hidden_values()},
        provenance=Provenance(generator=GENERATOR, generator_version=GENERATOR_VERSION, seed=seed),
    )
    if draft.failure is not None:
        gate = GateResult(
            name="composable", passed=False, reason=draft.failure, evidence={"walk": draft.walk}
        )
        record.gates = [gate]
        record.status = "rejected"
        record.reasons = [f"{gate.name}: {gate.reason}"]
    return record


def verify_record(record: TaskRecord, config: ComposeConfig) -> TaskRecord:
    """Run every gate on a stored candidate in a freshly rebuilt environment."""
    if record.status == "rejected":
        return record
    return _judge(record.model_copy(deep=True), config)


def compose_task(seed: int, config: ComposeConfig, seed_key: str = "adhoc") -> TaskRecord:
    """Draft and verify one candidate on its environment as stored (what agents will get)."""
    record = _record_from_draft(draft_task(seed, config), seed_key)
    if record.status == "rejected":
        return record
    return _judge(record, config)


def _judge(record: TaskRecord, config: ComposeConfig) -> TaskRecord:
    """Apply the gates on the environment rebuilt from the record, as every agent and export gets it.

    The red-team gate runs last, on candidates every other gate accepted.
    """
    env = ComposedEnvironment.from_task_environment(record.environment)
    stored = env.snapshot()
    observations, first_pass = run_reference(
        env, record.reference_solution, record.criteria, record.reference_output
    )
    seed = record.provenance.seed  # None only for a record composed elsewhere: it cannot replay
    replay_id = f"cw-{draft_task(seed, config).task_hash()[:16]}" if seed is not None else ""
    exposed = exposed_tools(record.environment.services + record.environment.distractors)
    verdicts = [
        GateResult(name="composable", passed=True, evidence={"walk": record.metadata.get("walk", [])}),
        gates.reference_passes(record.criteria, env, record.reference_output, observations),
        gates.initial_unsatisfied(record.criteria, record.environment.initial_state),
        gates.criteria_reachable(record.criteria, record.reference_solution, first_pass, exposed),
        # an LLM-authored task replays through its procedural draft (`compose.llm_author`)
        gates.replay_deterministic(
            record.metadata.get("authoring", {}).get("procedural_task_id", record.task_id), replay_id
        ),
        gates.chain_hidden(record.instruction, record.metadata.get("hidden_values", [])),
        gates.unique_hops(record.reference_solution, observations),
        gates.ids_discoverable(int(record.metadata.get("undiscoverable_ids", 0))),
    ]
    if all(g.passed for g in verdicts):
        verdicts.append(red_team_gate(record, stored))
    record.gates = [g if g.passed else g.model_copy(update={"reason": _explain(g)}) for g in verdicts]
    record.reasons = [f"{g.name}: {g.reason}" for g in record.gates if not g.passed]
    record.status = "rejected" if record.reasons else "accepted"
    return record


def exposed_tools(service_names: list[str]) -> set[str]:
    """Namespaced tools of the services exposed to the agent."""
    library = all_services()
    return {f"{n}.{t}" for n in service_names for t in library[n].tools}


def _explain(gate: GateResult) -> str:
    """Why a gate failed, in words (from its evidence): its `reason` and the record's reason text."""
    ev = gate.evidence
    if gate.name == "reference_pass":
        failed = [i for i, ok in enumerate(ev.get("pass_vector", [])) if not ok]
        return f"criteria {failed} fail after the reference; failed calls {ev.get('failed_calls')}"
    if gate.name == "initial_unsatisfied":
        return "the initial state already satisfies every criterion"
    if gate.name == "criteria_reachable":
        return f"unreached {ev.get('unreached')}, tools not exposed {ev.get('tools_not_exposed')}"
    if gate.name in ("unique_hops", "ids_discoverable", "red_team"):
        return gate.reason
    if gate.name == "chain_hidden":
        return f"instruction leaks {ev.get('leaked')}"
    return "replay produced a different task"


@dataclass
class BatchResult:
    """The outcome of composing until a target is met or the budget runs out."""

    accepted: list[TaskRecord] = field(default_factory=list)
    rejected: list[TaskRecord] = field(default_factory=list)
    attempts: int = 0
    budget_exhausted: bool = False

    def gate_pass_rates(self) -> dict[str, float]:
        """Share of candidates passing each gate (over candidates that reached it)."""
        return gate_pass_rates(self.accepted + self.rejected)

    def top_reasons(self, n: int = 5) -> list[tuple[str, int]]:
        """The most common rejection reasons (gate names)."""
        return top_reasons(self.rejected, n)


def gate_pass_rates(records: Iterable[TaskRecord]) -> dict[str, float]:
    """Share of records passing each gate, over the records that reached it."""
    return gate_models.gate_pass_rates(r.gates for r in records)


def top_reasons(records: Iterable[TaskRecord], n: int = 5) -> list[tuple[str, int]]:
    """The most common rejection reasons, by gate name."""
    counts = Counter(r.split(":", 1)[0] for rec in records for r in rec.reasons)
    return counts.most_common(n)


def compose_until(
    target: int,
    config: ComposeConfig,
    seeds: Iterable[int],
    seed_key: str = "adhoc",
    on_record: Callable[[TaskRecord], None] | None = None,
) -> BatchResult:
    """Compose candidates from `seeds` until `target` are accepted or the seeds run out."""
    result = BatchResult()
    for record in compose_stream(target, config, seeds, seed_key):
        result.attempts += 1
        (result.accepted if record.status == "accepted" else result.rejected).append(record)
        if on_record is not None:
            on_record(record)
    result.budget_exhausted = len(result.accepted) < target
    return result


def compose_stream(
    target: int, config: ComposeConfig, seeds: Iterable[int], seed_key: str = "adhoc"
) -> Iterator[TaskRecord]:
    """Each judged candidate from `seeds`, in seed order, until `target` were accepted or the seeds
    run out (the records `compose_until` collects, handed over one at a time instead of held)."""
    accepted = 0
    for seed in seeds:
        if accepted >= target:
            return
        record = compose_task(seed, config, seed_key)
        accepted += record.status == "accepted"
        yield record
