"""Confusable distractors: a policy that takes the first plausible record, or guesses, fails the task."""

from __future__ import annotations

import random
from typing import Any

import pytest

from envpipeline.agents.environment import ComposedEnvironment
from envpipeline.compose.distractors import near_miss, plant_twin
from envpipeline.models.task import TaskRecord
from envpipeline.rubric import pass_vector
from envpipeline.services import vocab
from envpipeline.services.links import read_path
from envpipeline.services.registry import get_service


@pytest.mark.parametrize(
    ("value", "kind", "shared"),
    [
        ("Ana Silva", "person", "Ana "),
        ("ana.silva@acme.test", "email", "ana.silva@"),
        ("2026-03-14", "date", "2026-"),
        ("CNF-4821", "code", "CNF-"),
        ("Vendor Review Cobalt", "title", "Vendor Review "),
        ("Lima", "city", ""),
    ],
)
def test_a_near_miss_shares_most_of_the_value_but_is_another_value(value, kind, shared):
    rng = random.Random(1)
    for _ in range(30):
        other = near_miss(value, kind, rng)
        assert other.lower() != value.lower()
        assert other.startswith(shared)


def test_a_twin_differs_from_the_right_record_only_in_its_key_and_value_and_is_listed_first():
    flights = get_service("flights")
    rng = vocab.seeded("twin")
    state = flights.generate_state(rng)
    hop = next(h for h in flights.links() if h.name == "flight_to_city_date")
    plan = hop.plant(state, rng, "Lima")
    changed = plant_twin(state, "Lima", "city", rng, plan.output, "date")
    assert changed is not None and set(changed) == {"destination", "date"}
    env = ComposedEnvironment.from_initial_state({"flights": state.model_dump(mode="json")})
    listed = env.call("flights.search_flights", {})["data"]["flights"]
    twin, right = listed[0], next(f for f in listed if f["destination"] == "Lima")
    assert twin["destination"] != "Lima" and twin["date"] != plan.output
    assert {k for k in right if right[k] != twin[k]} == {"id", "destination", "date"}
    found = env.call("flights.search_flights", {"destination": "Lima"})["data"]["flights"]
    assert [f["date"] for f in found] == [plan.output]  # the key still finds exactly the right one


def test_a_twin_in_an_integer_id_collection_gets_an_integer_id_listed_first():
    """Imported services keep integer ids where their tools take them (Freshdesk's ticket_id); a
    twin there crashed composing with ``--library-scope all`` (a text prefix of an int)."""
    from pydantic import BaseModel

    class Ticket(BaseModel):
        id: int
        subject: str
        requester: str

    class Desk(BaseModel):
        tickets: dict[int, Ticket]

    state = Desk(
        tickets={
            i: Ticket(id=i, subject=s, requester=r)
            for i, s, r in [(1, "Printer jam", "ana@acme.test"), (2, "VPN down", "li@acme.test")]
        }
    )
    changed = plant_twin(state, "li@acme.test", "email", vocab.seeded("int-twin"))
    assert changed is not None and set(changed) == {"requester"}
    first_id, twin = next(iter(state.tickets.items()))
    assert first_id == twin.id == 0 and twin.subject == "VPN down"
    assert twin.requester == changed["requester"] != "li@acme.test"
    assert sorted(state.tickets) == [0, 1, 2]


@pytest.mark.parametrize("day", ["2026-03-10", "2026-12-10"])
def test_a_one_day_leave_twin_is_another_one_day_leave_that_does_not_cover_the_day(day):
    """The key is both the start and the end date: both move, or the twin would end before it starts
    (a later month) or be on leave that day too (December: an earlier month) and make the lookup
    ambiguous."""
    hr = get_service("hr")
    rng = vocab.seeded(f"leave:{day}")
    state = hr.generate_state(rng)
    hop = next(h for h in hr.links() if h.name == "employee_on_leave")
    plan = hop.plant(state, rng, day)
    changed = plant_twin(state, day, "date", rng, plan.output, "person")
    assert changed is not None and {"startDate", "endDate"} <= set(changed)
    twin = next(iter(state.leave_requests.values()))
    assert twin.startDate == twin.endDate != day
    env = ComposedEnvironment.from_initial_state({"hr": state.model_dump(mode="json")})
    on_leave = env.call("hr.list_leave_requests", {"date": day})["data"]["leaveRequests"]
    assert [r["employeeName"] for r in on_leave] == [plan.output]


def test_no_twin_when_the_key_is_not_held_by_exactly_one_record():
    flights = get_service("flights")
    state = flights.generate_state(vocab.seeded("none"))
    assert plant_twin(state, "Nowhere City", "city", random.Random(0)) is None


def _replay(task: TaskRecord, swap: dict[str, str]) -> list[bool]:
    """Run the reference, but read `swap`'s wrong value wherever the right one was read."""
    env = ComposedEnvironment.from_task_environment(task.environment)
    seen: list[dict[str, Any]] = []
    for step in task.reference_solution:
        arguments = dict(step.arguments)
        for name, binding in step.bindings.items():
            try:
                value = read_path(seen[binding.step].get("data"), binding.path)
            except (KeyError, IndexError):
                value = None
            value = swap.get(value, value) if isinstance(value, str) else value
            arguments[name] = binding.template.format(value=value) if binding.template != "{value}" else value
        seen.append(env.call(step.tool, arguments))
    reveal = task.metadata["final_reveal"]
    try:
        answer = read_path(seen[reveal["step"]].get("data"), reveal["path"])
    except (KeyError, IndexError):
        answer = "nothing"
    answer = swap.get(answer, answer) if isinstance(answer, str) else answer
    return pass_vector(task.criteria, env.states, f"Done. The answer is {answer}.")


def test_accepted_tasks_carry_confusable_twins(accepted):
    with_twins = [t for t in accepted if t.metadata.get("confusable_twins")]
    assert len(with_twins) >= 0.8 * len(accepted)


def test_a_first_match_policy_fails(accepted):
    """Reading the twin (listed first, same but for key and value) instead of the right record fails.

    Nearly always: a later lookup whose search forgives a near miss (a shared first name) can still
    land on the right record, so a few swaps stay harmless.
    """
    tried, failed = 0, 0
    for task in accepted:
        values = task.metadata["planted_values"]
        assert all(_replay(task, {}))  # the untouched reference passes
        for twin in task.metadata["confusable_twins"]:
            if len(twin["differs"]) != 2 or twin["link"] not in task.metadata["hops"]:
                continue  # an action's twin differs in its key only
            right = values[twin["visit"] + 1]
            wrong = list(twin["differs"].values())[-1]  # the twin's value of the revealed field
            assert wrong != right
            tried += 1
            failed += not all(_replay(task, {right: wrong}))
    assert tried >= 20
    assert failed >= 0.9 * tried, (failed, tried)


def test_a_guessing_policy_fails(accepted):
    """Guessing the answer from the value pool (and changing nothing) fails every task."""
    rng = random.Random(0)
    for task in accepted:
        env = ComposedEnvironment.from_task_environment(task.environment)
        kind = task.metadata["value_types"][-1]
        guess = vocab.sample_value(kind, rng)
        while guess == task.metadata["planted_values"][-1]:
            guess = vocab.sample_value(kind, rng)
        verdicts = pass_vector(task.criteria, env.states, f"The answer is {guess}.")
        assert not all(verdicts), task.task_id
        final = next(i for i, c in enumerate(task.criteria) if c.kind == "final_answer")
        assert not verdicts[final], (task.task_id, guess)
