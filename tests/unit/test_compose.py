"""Composing and verifying cross-service tasks: what the gates accept and what they reject."""

from __future__ import annotations

import pytest

from envpipeline.compose.pipeline import compose_task, draft_record, verify_record
from envpipeline.models.task import Condition, Criterion

REQUIRED_GATES = ("reference_pass", "initial_unsatisfied", "criteria_reachable", "replay_deterministic")


def test_seeds_yield_accepted_tasks(composed, accepted):
    assert len(accepted) >= len(composed) // 4, [r.reasons for r in composed if r.reasons][:5]


def test_accepted_tasks_span_several_criteria_and_services(accepted, compose_config):
    for task in accepted:
        services = {c.service for c in task.criteria if c.service}
        assert len(task.criteria) >= max(compose_config.min_actions + 1, 3), task.task_id
        assert len(services) >= compose_config.min_action_services, task.task_id
        if compose_config.services >= 5:
            assert len(task.criteria) >= 4 and len(services) >= 3, task.task_id
        assert any(c.kind == "final_answer" for c in task.criteria)
        assert any(c.kind == "state_preserved" for c in task.criteria)
        assert len({c.id for c in task.criteria}) == len(task.criteria), "criterion ids are unique"


def test_accepted_tasks_pass_every_gate(accepted):
    for task in accepted:
        gates = {g.name: g.passed for g in task.gates}
        for name in REQUIRED_GATES:
            assert gates.get(name) is True, (task.task_id, name, gates)
        assert task.reasons == []


def test_same_seed_gives_the_same_task(accepted, compose_config):
    for task in accepted[:5]:
        seed = task.provenance.seed
        again = compose_task(seed, compose_config)
        assert again.task_id == task.task_id
        assert again.instruction == task.instruction
        assert draft_record(seed, compose_config).task_id == task.task_id


def test_different_seeds_give_different_tasks(accepted):
    assert len({t.task_id for t in accepted}) == len(accepted)


def test_hidden_values_stay_out_of_the_instruction(accepted):
    for task in accepted:
        hidden = task.metadata["hidden_values"]
        assert hidden, task.task_id
        for value in hidden:
            assert str(value).lower() not in task.instruction.lower(), (task.task_id, value)


def test_rejected_tasks_say_why(composed):
    rejected = [r for r in composed if r.status == "rejected"]
    for record in rejected:
        assert record.reasons, record.task_id
        failed = {g.name for g in record.gates if not g.passed}
        assert {r.split(":", 1)[0] for r in record.reasons} <= failed


def _assert_failed_gates_say_why(record):
    failed = [g for g in record.gates if not g.passed]
    assert failed, record.task_id
    assert all(g.reason for g in failed), [g.name for g in failed if not g.reason]
    assert record.reasons == [f"{g.name}: {g.reason}" for g in failed]
    assert all(g.reason == "" for g in record.gates if g.passed)


def test_failed_gates_carry_their_reason(composed, accepted, compose_config):
    for record in composed:
        if record.status == "rejected":
            _assert_failed_gates_say_why(record)
    task = accepted[0]
    judged = verify_record(task.model_copy(update={"reference_output": "I am done."}), compose_config)
    _assert_failed_gates_say_why(judged)
    reference = next(g for g in judged.gates if g.name == "reference_pass")
    assert not reference.passed and reference.reason.startswith("criteria [")


def _tamperable(task):
    for k, criterion in enumerate(task.criteria):
        if criterion.kind != "record_exists":
            continue
        for field, cond in criterion.match.items():
            if cond.op in ("eq", "contains", "icontains"):
                return k, field
    return None


def test_tampered_expected_value_fails_reference_pass(accepted, compose_config):
    task = next(t for t in accepted if _tamperable(t) is not None)
    k, field = _tamperable(task)
    criterion = task.criteria[k]
    bad = Condition(op=criterion.match[field].op, value="zz-tampered-value-zz")
    criteria = list(task.criteria)
    criteria[k] = criterion.model_copy(update={"match": {**criterion.match, field: bad}})
    judged = verify_record(task.model_copy(update={"criteria": criteria}), compose_config)
    assert judged.status == "rejected"
    assert any(r.startswith("reference_pass") for r in judged.reasons), judged.reasons
    # the untouched task still verifies
    assert verify_record(task, compose_config).status == "accepted"


def test_tampered_final_answer_fails_reference_pass(accepted, compose_config):
    task = accepted[0]
    judged = verify_record(task.model_copy(update={"reference_output": "I am done."}), compose_config)
    assert judged.status == "rejected"
    assert any(r.startswith("reference_pass") for r in judged.reasons), judged.reasons


def test_criteria_true_from_the_start_fail_initial_unsatisfied(accepted, compose_config):
    task = accepted[0]
    anchor = next(c for c in task.criteria if c.service is not None)
    trivially_true = Criterion(
        id="c1",
        description="a record that never exists is absent",
        kind="record_absent",
        service=anchor.service,
        collection=anchor.collection,
        match={"id": Condition(op="eq", value="zz-no-such-record-zz")},
    )
    judged = verify_record(task.model_copy(update={"criteria": [trivially_true]}), compose_config)
    assert judged.status == "rejected"
    assert [r.split(":", 1)[0] for r in judged.reasons] == ["initial_unsatisfied"], judged.reasons


def test_verify_leaves_a_rejected_record_alone(composed, compose_config):
    rejected = next((r for r in composed if r.status == "rejected" and r.gates[0].name == "composable"), None)
    if rejected is None:
        pytest.skip("every seed composed")
    assert verify_record(rejected, compose_config) == rejected
