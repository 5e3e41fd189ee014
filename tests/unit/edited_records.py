"""A composed task's collateral check as it was before edited and created records were pinned (and
before a created record's options were held as values), and with one edited field let go."""

from __future__ import annotations

from envpipeline.agents.environment import ComposedEnvironment
from envpipeline.agents.reference import run_reference
from envpipeline.models.task import Criterion, TaskRecord
from envpipeline.redteam.base import ComposeAttack
from envpipeline.redteam.compose import reference_run, stored_states
from envpipeline.redteam.policies.other_fields import edits, extra_arguments
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


def one_field_loose(task: TaskRecord) -> TaskRecord:
    """`task` with one field the reference leaves alone on a record it edits let go: the first
    optional argument `other-fields` sets on an edit that is a field of that record. Set alone it
    passes; set beside the other optional arguments, which stay pinned, it does not."""
    stored = stored_states(task)
    reference = reference_run(task, stored)
    attack = ComposeAttack(task, ComposedEnvironment.from_initial_state(stored), reference)
    for step, tool_def, observation in edits(attack):
        names = list(extra_arguments(tool_def, step.arguments, observation))
        targets = {str(v) for v in step.arguments.values()}
        for criterion in task.criteria:
            for key, records in criterion.allowed_fields.items():
                service, _, field = key.partition(".")
                value = state_fields(reference.final_states[service]).get(field)
                for record in (r for r in records if r in targets):
                    held = field_records(field, value).get(record, {})
                    name = next((n for n in names if n in held and n not in records[record]), None)
                    if name is None:
                        continue
                    loosened = {**records, record: {**records[record], name: None}}
                    digest = untouched_digest(value, criterion.allowed.get(key, ()), field, loosened)
                    loose = criterion.model_copy(
                        update={
                            "allowed_fields": {**criterion.allowed_fields, key: loosened},
                            "preserved": {**criterion.preserved, key: digest},
                        }
                    )
                    criteria = [loose if c is criterion else c for c in task.criteria]
                    return task.model_copy(update={"criteria": criteria})
    return task
