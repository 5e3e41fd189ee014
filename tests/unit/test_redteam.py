"""The red-team suite: every policy has teeth, and no accepted composed task gives one full reward."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from envpipeline.errors import ConfigError
from envpipeline.models.task import Condition, Criterion, TaskRecord
from envpipeline.redteam.base import ComposeAttack, RedTeamPolicy
from envpipeline.redteam.compose import red_team
from envpipeline.redteam.registry import all_policies, get_policy, policies_for, register_policy

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
}


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
def test_each_policy_breaks_a_deliberately_weak_task(name: str, accepted: list[TaskRecord]):
    policy = get_policy(name)
    broken = [
        task.task_id
        for task in accepted[:20]
        if any(o.broke for o in red_team(WEAKENINGS[name](task), policies=[policy]))
    ]
    assert broken, f"{name} broke none of 20 weakened tasks: it has no teeth"


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
