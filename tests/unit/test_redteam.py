"""The red-team suite: every policy has teeth, and no accepted composed task gives one full reward."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from envpipeline.compose.author import ComposeConfig
from envpipeline.compose.pipeline import compose_task, draft_record
from envpipeline.compose.stated import stated_arguments
from envpipeline.errors import ConfigError
from envpipeline.models.task import Condition, Criterion, TaskRecord
from envpipeline.redteam.base import ComposeAttack, RedTeamPolicy
from envpipeline.redteam.compose import red_team
from envpipeline.redteam.registry import all_policies, get_policy, policies_for, register_policy
from envpipeline.services.worldmodel import OfflineWorldModel
from tests.unit.conftest import scanned_selectors
from tests.unit.edited_records import one_field_loose, options_as_text, record_level
from tests.world_models import installed_world_model

Weakening = Callable[[TaskRecord], TaskRecord]


def keep(task: TaskRecord, predicate: Callable[[Criterion], bool]) -> TaskRecord:
    return task.model_copy(update={"criteria": [c for c in task.criteria if predicate(c)]})


def legacy_answer(task: TaskRecord) -> TaskRecord:
    """The answer check as it was: the reply merely contains the value."""
    criteria = [
        c
        if c.kind != "final_answer"
        else Criterion(
            id=c.id,
            description=c.description,
            kind="output_contains",
            match={"text": Condition(op="icontains", value=c.match["text"].value)},
        )
        for c in task.criteria
    ]
    return task.model_copy(update={"criteria": criteria})


def without_last_action(task: TaskRecord) -> TaskRecord:
    """The criteria of the reference's last change dropped."""
    last = [c.achieved_by for c in task.criteria if c.kind == "record_exists"][-1]
    return keep(task, lambda c: c.kind not in ("record_exists", "record_absent") or c.achieved_by != last)


def only_the_selected_row(task: TaskRecord) -> TaskRecord:
    """Each scanned listing shows the record to find and nothing else (and no state digest pins
    the records taken away): reading the first row is then as good as reading by value."""
    initial = copy.deepcopy(task.environment.initial_state)
    for step, path in scanned_selectors(task):
        service = task.reference_solution[step].tool.partition(".")[0]
        selector = next(k for k in path if isinstance(k, dict))
        records = initial[service][path[0]]
        keep_ids = [
            rid
            for rid, record in records.items()
            if all(record.get(f, rid if f == "id" else None) == v for f, v in selector.items())
        ]
        initial[service][path[0]] = {rid: records[rid] for rid in keep_ids}
    environment = task.environment.model_copy(update={"initial_state": initial})
    weak = keep(task, lambda c: c.kind != "state_preserved")
    return weak.model_copy(update={"environment": environment})


def unpinned(task: TaskRecord) -> TaskRecord:
    """Each write's criterion without the arguments the request states (`compose.stated`): it
    checks the value the chain carries into the record, not what else the request asked for."""
    stated = {str(v) for s in task.reference_solution for v in stated_arguments(s, task.instruction).values()}
    chain = {str(v) for v in task.metadata.get("planted_values", [])}

    def loose(c: Criterion) -> Criterion:
        match = {k: v for k, v in c.match.items() if str(v.value) not in stated or str(v.value) in chain}
        return c.model_copy(update={"match": match}) if c.kind == "record_exists" else c

    return task.model_copy(update={"criteria": [loose(c) for c in task.criteria]})


def any_recipients(task: TaskRecord) -> TaskRecord:
    """A sent mail's recipients checked as they were: the right address among them (`contains`)."""

    def loose(c: Criterion) -> Criterion:
        match = {
            k: Condition(op="contains", value=v.value) if v.op == "addresses" else v
            for k, v in c.match.items()
        }
        return c.model_copy(update={"match": match})

    return task.model_copy(update={"criteria": [loose(c) for c in task.criteria]})


#: For each policy, a deliberately weak version of a task that the policy should break.
WEAKENINGS: dict[str, Weakening] = {
    "nop": lambda t: keep(t, lambda c: c.kind == "state_preserved"),
    "enumerate": legacy_answer,
    "shotgun": lambda t: t.model_copy(
        update={"criteria": [c for c in t.criteria if c.kind == "record_exists"][:1]}
    ),
    "shotgun-after-reference": lambda t: keep(t, lambda c: c.kind != "state_preserved"),
    "destructive-after-reference": lambda t: keep(t, lambda c: c.kind != "state_preserved"),
    "over-act": lambda t: keep(t, lambda c: c.kind != "state_preserved"),
    "early-stop": without_last_action,
    "fixed-row": only_the_selected_row,
    "last-row": only_the_selected_row,
    "other-input": lambda t: t,  # the weakness is in the world that made them (`alike_answers`)
    "careless-constants": unpinned,
    "other-fields": record_level,
    "other-items": record_level,
    "create-extras": record_level,
    "create-options": options_as_text,
    "cc-outsider": lambda t: record_level(any_recipients(t)),  # a sent mail is a created record too
    "one-change": one_field_loose,
}
#: Policies that attack only some tasks, and the fixture of tasks they attack.
POOLS = {"fixed-row": "scanned", "last-row": "scanned", "other-input": "alike_answers"}


class SameAnswers(OfflineWorldModel):
    """A world model that answers every call of a tool alike, whatever it is asked (an LLM
    simulator that ignores the arguments)."""

    def simulate(
        self,
        service: str,
        tool: str,
        arguments: dict[str, Any],
        output_schema: dict[str, Any] | None,
        *,
        state: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        return super().simulate(service, tool, {}, output_schema)


@pytest.fixture
def alike_answers() -> Iterator[list[TaskRecord]]:
    """Whole-library candidates drafted (and attacked, while the fixture lasts) in a world whose
    simulated tools answer alike, whose answer is read from a call given a chain value."""
    with installed_world_model(SameAnswers()):
        config = ComposeConfig(library_scope="all")
        policy = get_policy("other-input")
        drafts = (draft_record(seed, config) for seed in range(60))
        yield [t for t in drafts if t.status != "rejected" and policy.applies_to(t)]


def test_every_policy_is_registered_once_with_a_name_and_families():
    policies = all_policies()
    assert len(policies) >= 7
    for name, policy in policies.items():
        assert policy.name == name and policy.description
        assert policy.families and policy.families <= {"compose", "world", "terminal"}
        for family in policy.families:  # the base hook's NotImplementedError is only for the others
            hook = f"attack_{family}"
            assert getattr(type(policy), hook) is not getattr(RedTeamPolicy, hook), f"{name} lacks {hook}"
    with pytest.raises(ConfigError):
        register_policy(type("Other", (type(get_policy("nop")),), {})())
    with pytest.raises(ConfigError, match="known"):
        get_policy("no-such-policy")


def test_every_compose_policy_brings_a_weak_task_to_break():
    assert set(WEAKENINGS) == {p.name for p in policies_for("compose")}


@pytest.mark.parametrize("name", sorted(WEAKENINGS))
def test_each_policy_breaks_a_deliberately_weak_task(name: str, request: pytest.FixtureRequest):
    policy = get_policy(name)
    tasks: list[TaskRecord] = request.getfixturevalue(POOLS.get(name, "accepted"))
    broken = [
        task.task_id
        for task in tasks[:20]
        if any(o.broke for o in red_team(WEAKENINGS[name](task), policies=[policy]))
    ]
    assert broken, f"{name} broke none of 20 weakened tasks: it has no teeth"


def test_one_change_finds_a_field_that_changing_everything_at_once_hides(accepted: list[TaskRecord]):
    # one unasked field of an edited record let go, the others pinned: `other-fields` sets it
    # beside the others and earns nothing (the hole hides); set alone, it earns the reward
    other_fields, one_change = get_policy("other-fields"), get_policy("one-change")
    hidden = []
    for task in accepted[:20]:
        weak = one_field_loose(task)
        outcomes = {o.policy: o for o in red_team(weak, policies=[other_fields, one_change])}
        if outcomes["one-change"].broke and not outcomes["other-fields"].broke:
            hidden.append(task.task_id)
    assert hidden, "no weakened task where setting one field alone pays and setting all does not"


def test_no_policy_gets_full_reward_on_an_accepted_task(accepted: list[TaskRecord]):
    for task in accepted:
        gate = next(g for g in task.gates if g.name == "red_team")
        assert gate.passed and gate.evidence["broke"] == [], task.task_id
        for name, outcome in gate.evidence["policies"].items():
            if not outcome["moot"]:
                assert outcome["binary"] == 0.0 and outcome["checklist"] < 1.0 and outcome["cfrr"] < 1.0, name


def test_the_gate_rejects_a_task_a_policy_breaks(accepted: list[TaskRecord]):
    class AlwaysRight(RedTeamPolicy):
        """Not an adversary: it does the task. Its attempt is moot, never a break."""

        name = "always-right"
        description = "the reference"
        families = frozenset({"compose"})

        def attack_compose(self, attack: ComposeAttack) -> str:
            attack.replay_reference()
            return attack.reference.output

    task = accepted[0]
    (outcome,) = red_team(task, policies=[AlwaysRight()])
    assert outcome.binary == 1.0 and outcome.moot and not outcome.broke
    weak = legacy_answer(task)
    (outcome,) = red_team(weak, policies=[get_policy("enumerate")])
    assert outcome.broke and outcome.binary == 1.0


@pytest.mark.parametrize("name", ["fixed-row", "last-row"])
def test_reading_a_fixed_row_fails_every_accepted_task_that_scans_a_listing(
    name: str, scanned: list[TaskRecord]
):
    """The record a scanned listing hides is never its first row nor its last, so the policy earns
    nothing; it is blind there (the value that picks the row never reached the call): never moot."""
    policy = get_policy(name)
    for task in scanned:
        (outcome,) = red_team(task, policies=[policy])
        assert outcome.binary == 0.0 and not outcome.moot, task.task_id
        gate = next(g for g in task.gates if g.name == "red_team")
        assert gate.evidence["policies"][name]["binary"] == 0.0


def test_a_policy_with_nothing_to_attack_is_left_out_of_the_group(accepted: list[TaskRecord]):
    """The curated tasks select no row by value: fixed-row does not run on them, so their groups
    (and every other policy's CFRR) are what they were before the policy existed."""
    task = accepted[0]
    for name in ("fixed-row", "last-row"):
        policy = get_policy(name)
        assert not policy.applies_to(task)
        assert red_team(task, policies=[policy]) == []
        assert name not in next(g for g in task.gates if g.name == "red_team").evidence["policies"]


def test_a_fixed_row_attempt_that_reveals_nothing_does_not_report_the_answer(scanned: list[TaskRecord]):
    """Reading a row no listing has (every read then yields nothing), the policy's reply must not
    carry the reference's final value: it would know the answer without reading anything, and the
    gate would reject good tasks whose state criteria it meets by other means."""
    from envpipeline.redteam.policies.fixed_row import FixedRow

    class Beyond(FixedRow):
        name = "beyond-the-last-row"
        row = 10**6

    for task in scanned:
        answer = next(c for c in task.criteria if c.kind == "final_answer")
        (outcome,) = red_team(task, policies=[Beyond()])
        assert answer.id in outcome.failed and outcome.binary == 0.0, task.task_id


def test_an_answer_that_does_not_depend_on_the_chain_is_rejected(alike_answers: list[TaskRecord]):
    """Where the tool that reveals the answer says the same whatever it is asked, the gate rejects
    the task, for `other-input` alone (every other policy fails it)."""
    config = ComposeConfig(library_scope="all")
    seeds = [t.provenance.seed for t in alike_answers[:12]]
    judged = [compose_task(seed, config) for seed in seeds if seed is not None]
    rejected = [r for r in judged if r.status == "rejected"]
    assert rejected, "no candidate with an answer that ignores the chain was rejected"
    for record in rejected:
        assert [r.split(":")[0] for r in record.reasons] == ["red_team"], record.reasons
        gate = next(g for g in record.gates if g.name == "red_team")
        assert gate.evidence["broke"] == ["other-input"], record.reasons


def test_other_input_earns_nothing_on_accepted_tasks(accepted: list[TaskRecord]):
    """Asked about other values, a curated lookup finds nothing or another record: no answer two
    values agree on, so the policy's reply misses (and it is never moot: it is blind)."""
    policy = get_policy("other-input")
    attacked = [t for t in accepted if policy.applies_to(t)]
    assert len(attacked) >= len(accepted) // 2
    for task in attacked[:15]:
        (outcome,) = red_team(task, policies=[policy])
        answer = next(c for c in task.criteria if c.kind == "final_answer")
        assert answer.id in outcome.failed and not outcome.moot, task.task_id
