"""A mail a task asks for goes to exactly the people it names, and a world event it adds invites
nobody it did not ask for.

The sent-mail criteria (world templates, and the composed mail service's send and forward) asked
that the recipients *contain* the right address, so a copy to a stranger ('noor.kim@acme.test,
outsider@elsewhere.example') passed: the `cc-outsider` policy broke 10 of the 22 world templates
of personas 1-10 (5 days each) and 3 of 110 accepted curated composed tasks of seeds 0-119.
Recipients are now compared as a set of addresses (the ``addresses`` condition), in process and
in the exported criterion script.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from envpipeline.models.criteria import Condition
from envpipeline.rubric import condition_holds as rubric_condition_holds
from envpipeline.worlds.criteria import check, condition_holds
from envpipeline.worlds.task_builder import to
from envpipeline.worlds.worldstore import WorldStore
from tests.world_fixture import day_pair, run_criterion_script

NOOR = "noor.kim@acme.test"


@pytest.mark.parametrize(
    ("recipients", "holds"),
    [
        (NOOR, True),
        ("Noor.Kim@acme.test", True),
        (f" {NOOR} ", True),
        (f"{NOOR}, outsider@elsewhere.example", False),
        (f"outsider@elsewhere.example;{NOOR}", False),
        (f"{NOOR}x", False),
        ("", False),
        (None, False),
    ],
)
def test_recipients_are_exactly_the_addresses_asked_for(recipients: str | None, holds: bool) -> None:
    condition = to(NOOR)
    assert condition == Condition(op="addresses", value=NOOR)
    assert condition_holds(recipients, condition.model_dump()) is holds
    assert rubric_condition_holds(recipients, condition) is holds


def test_several_addresses_in_any_order_and_a_list_field() -> None:
    condition = to("a@x.test", "b@y.test").model_dump()
    assert condition_holds("b@y.test, a@x.test", condition)
    assert condition_holds("a@x.test;b@y.test", condition)
    assert not condition_holds("a@x.test", condition), "one of the two left out"
    assert rubric_condition_holds(["B@y.test", "a@x.test"], to("a@x.test", "b@y.test"))


@pytest.fixture
def days(tmp_path: Path) -> tuple[Path, Path]:
    return day_pair(tmp_path)


@pytest.mark.parametrize(
    ("to_field", "passes"), [(NOOR, True), (f"{NOOR}, outsider@elsewhere.example", False)]
)
def test_a_copy_to_a_stranger_fails_the_sent_mail_criterion_and_its_script(
    days: tuple[Path, Path], tmp_path: Path, to_field: str, passes: bool
) -> None:
    initial, final = days
    WorldStore(final).mail_send(to_field, "Itinerary Lisbon", "Flight TP 1234 on 2026-03-08.")
    criterion = {
        "id": "c3",
        "kind": "row_added",
        "description": f"a sent email to {NOOR} carries the itinerary",
        "app": "mail",
        "table": "messages",
        "where": {
            "folder": {"op": "eq", "value": "sent"},
            "recipients": to(NOOR).model_dump(),
            "body": {"op": "contains", "value": "TP 1234"},
        },
    }
    assert check(criterion, initial, final) is passes
    run = run_criterion_script(criterion, initial, final, tmp_path)
    assert run.returncode == (0 if passes else 1), run.stdout + run.stderr
