"""Executable criteria: what a task's verifier checks, per family (one tagged union over `kind`)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from envpipeline.models.base import Strict

ConditionOp = Literal["eq", "ne", "contains", "icontains", "addresses"]
#: An item of a record's field that a task may change: a value of a list field, a key of an object.
AllowedItem = str | int | float | bool | None
#: Kinds of value a final answer can ask for (`envpipeline.models.value_pools` recognises each).
#: ``code`` is a generic reference code; the domain codes below are never consumed as one another.
ValueKind = Literal[
    "person",
    "email",
    "city",
    "date",
    "code",
    "title",
    "booking_code",
    "flight_number",
    "ticket_code",
    "order_number",
    "sku",
    "advisory_code",
    "employee_code",
]


class Condition(Strict):
    """One field condition of a criterion."""

    op: Annotated[
        ConditionOp,
        Field(
            description="comparison: eq, ne, contains, icontains; addresses: the field lists exactly "
            "the value's e-mail addresses (comma- or semicolon-separated, any order or case)"
        ),
    ]
    value: Annotated[Any, Field(description="the expected value")]


class Criterion(Strict):
    """An executable check on the final joint state or the recorded outputs."""

    id: Annotated[str, Field(description="stable id within the task, e.g. c1")]
    description: Annotated[str, Field(description="what a grader checks, in words")]
    kind: Annotated[
        Literal["record_exists", "record_absent", "output_contains", "final_answer", "state_preserved"],
        Field(
            description="record_exists/record_absent: a record matching all conditions "
            "does/does not exist; output_contains: the final answer contains the value (legacy); "
            "final_answer: the reply names the value and no other value of its kind; "
            "state_preserved: nothing changed outside the records the task allows"
        ),
    ]
    service: Annotated[str | None, Field(description="service namespace; None for outputs")] = None
    collection: Annotated[
        str | None,
        Field(
            description="state collection, e.g. events; simulated.records.<family>: the recorded "
            "calls of a simulated tool family (tool, arguments, response)"
        ),
    ] = None
    match: Annotated[
        dict[str, Condition],
        Field(description="field name -> condition (a.b: field b inside field a); other fields ignored"),
    ] = {}
    value_kind: Annotated[
        ValueKind | None,
        Field(
            description="final_answer: the kind of value asked for (person, email, city, date, code, "
            "title, or a domain code: booking_code, flight_number, ticket_code, order_number, sku, "
            "advisory_code, employee_code)"
        ),
    ] = None
    max_chars: Annotated[
        int | None, Field(gt=0, description="final_answer: the longest reply that can pass")
    ] = None
    preserved: Annotated[
        dict[str, str],
        Field(
            description="state_preserved: '<service>.<field>' -> digest of its records outside `allowed` "
            "(`envpipeline.rubric.untouched_digest`)"
        ),
    ] = {}
    allowed: Annotated[
        dict[str, list[str]],
        Field(description="state_preserved: '<service>.<field>' -> record keys the task may change"),
    ] = {}
    allowed_fields: Annotated[
        dict[str, dict[str, dict[str, list[AllowedItem] | None]]],
        Field(
            description="state_preserved: '<service>.<field>' -> allowed record key -> field -> what "
            "of it may change: null, the whole field; a list, only these items (the members of a "
            "list: a value, or an object as its canonical JSON text; the keys of an object) may be "
            "added, removed or changed. A record the task edits; its other fields and items are "
            "pinned. Left out of dumps when empty, so criteria made before it keep their form",
        ),
    ] = {}
    created: Annotated[
        dict[str, dict[str, str]],
        Field(
            description="state_preserved: '<service>.<field>' -> allowed record key the task creates "
            "-> digest of what of it is pinned (`envpipeline.rubric.created_digest`): the record as "
            "the reference leaves it but for its text (flags, numbers, empty values, a list's "
            "members in any order and case, an object's keys; a simulated tool's recorded call by "
            "its tool and non-text arguments). A created record that is not there is the write "
            "criteria's to miss. Left out of dumps when empty, so criteria made before it keep "
            "their form",
        ),
    ] = {}
    created_options: Annotated[
        dict[str, list[str]],
        Field(
            description="state_preserved: '<service>.<field>' -> the fields of the records it "
            "creates (a simulated call's arguments) that take one of a few options (a priority, a "
            "status: `envpipeline.services.options`), pinned as their value in any case rather "
            "than as text. Left out of dumps when empty",
        ),
    ] = {}
    achieved_by: Annotated[
        str | None, Field(description="namespaced tool that makes this criterion pass")
    ] = None

    @model_serializer(mode="wrap")
    def _without_empty_pins(self, handler: SerializerFunctionWrapHandler) -> Any:
        """Dumps leave `allowed_fields`, `created` and `created_options` out when empty: a
        criterion keeps the form (and a task its id) it had before the fields existed.
        (``Field(exclude_if=...)`` needs pydantic 2.12; the runtime supports 2.11.)"""
        data = handler(self)
        if isinstance(data, dict):
            for name in ("allowed_fields", "created", "created_options"):
                if not getattr(self, name):
                    data.pop(name, None)
        return data


class VerifierCriterion(Strict):
    """A terminal bundle's own tests: they pass when ``tests/test.sh`` writes a reward of 1."""

    id: Annotated[str, Field(description="stable id within the task")] = "tests"
    description: Annotated[str, Field(description="what a grader checks, in words")] = (
        "tests/test.sh reports a reward of 1"
    )
    kind: Annotated[Literal["verifier_reward"], Field(description="the bundle's verifier reward")] = (
        "verifier_reward"
    )
    verifier_timeout_sec: Annotated[float, Field(gt=0, description="the verifier's wall timeout")] = 120.0
