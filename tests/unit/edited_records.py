"""A composed task's collateral check as it was before edited and created records were pinned (and
before a created record's options were held as values)."""

from __future__ import annotations

from envpipeline.agents.environment import ComposedEnvironment
from envpipeline.agents.reference import run_reference
from envpipeline.models.task import Criterion, TaskRecord
from envpipeline.redteam.compose import stored_states
from envpipeline.rubric import created_digest, field_records, state_fields, untouched_digest


def record_level(task: TaskRecord) -> TaskRecord:
    """`task` with its state_preserved criterion letting a record the reference edits or creates
    change whole (digests over the other records only, no `allowed_fields` nor `created`):
    renaming or closing the issue whose assignee the task sets then passed, and so did inviting an
    outsider to the event it creates."""
    env = ComposedEnvironment.from_initial_state(stored_states(task))
    run_reference(env, task.reference_solution, [], task.reference_output)

    def loose(criterion: Criterion) -> Criterion:
        if criterion.kind != "state_preserved":
            return criterion
        preserved = {}
        for key in criterion.preserved:
            service, _, field = key.partition(".")
            value = state_fields(env.states[service]).get(field)
            preserved[key] = untouched_digest(value, criterion.allowed.get(key, ()), field)
        return criterion.model_copy(update={"preserved": preserved, "allowed_fields": {}, "created": {}})

    return task.model_copy(update={"criteria": [loose(c) for c in task.criteria]})


def options_as_text(task: TaskRecord) -> TaskRecord:
    """`task` with the options of the records it creates (a priority, a status) read as text, as
    every text field of a created record is: opening the issue closed and urgent then passed."""
    env = ComposedEnvironment.from_initial_state(stored_states(task))
    run_reference(env, task.reference_solution, [], task.reference_output)

    def loose(criterion: Criterion) -> Criterion:
        if criterion.kind != "state_preserved" or not criterion.created_options:
            return criterion
        created = {}
        for key, pins in criterion.created.items():
            service, _, field = key.partition(".")
            records = field_records(field, state_fields(env.states[service]).get(field))
            created[key] = {record: created_digest(records[record], field) for record in pins}
        return criterion.model_copy(update={"created": created, "created_options": {}})

    return task.model_copy(update={"criteria": [loose(c) for c in task.criteria]})
