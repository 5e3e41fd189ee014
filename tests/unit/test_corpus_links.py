"""Links that reach the rest of the corpus: simulated reads with several required arguments (the
carried value goes into the first argument that can take it, the others are constants the request
states), and creates that need a parent record (named, and checked)."""

from __future__ import annotations

import random

from envpipeline.agents.environment import canonical_order
from envpipeline.rubric import pass_vector
from envpipeline.services.library.imported import load_spec
from envpipeline.services.links import HopPlan, execute_planned, read_path
from envpipeline.services.mcp_import import synthesize_service
from envpipeline.services.registry import get_service


def _planted(service: str, link_name: str, seed: int = 1) -> tuple[object, HopPlan]:
    cls = get_service(service)
    link = next(link for link in cls.links() if link.name == link_name)
    state = cls.generate_state(random.Random(seed))
    plan = link.plant(state, random.Random(seed), "REF-4411")
    assert isinstance(plan, HopPlan)
    return cls(canonical_order(state)), plan


def test_a_simulated_read_states_its_other_required_arguments_and_answers_as_planted():
    service, plan = _planted("alphavantage", "fx_daily_lookup")
    (call,) = plan.calls
    assert call.arguments["from_symbol"] == "REF-4411" and call.inputs == {"from_symbol": "{value}"}
    to_symbol = call.arguments["to_symbol"]
    assert f"with its from symbol set to that reference code with to symbol {to_symbol!r}" in plan.phrase
    assert plan.relation.format(of="'X'").endswith(
        f"gives for 'X' as its from symbol with to symbol {to_symbol!r}"
    )
    (observation,) = execute_planned(service, plan.calls, "REF-4411")
    assert observation["success"] and str(read_path(observation["data"], call.reveals)) == plan.output


def test_another_constant_gets_another_answer():
    """The constants are part of the question: the same carried value with another stated
    constant is a different call of the world model."""
    service, plan = _planted("alphavantage", "fx_daily_lookup")
    (call,) = plan.calls
    other = {**call.arguments, "to_symbol": "ZZ-9999"}
    answer = service.call("fx_daily", other)  # type: ignore[attr-defined]
    assert answer["success"] and str(read_path(answer["data"], call.reveals)) != plan.output


def test_curated_services_keep_their_link_set():
    """The default generator's records depend on the curated services' links: the imported ones
    among them (issues) get neither listing hops nor constant-stating simulated hops, which the
    same spec gets outside the curated library."""
    curated = [link.name for link in get_service("issues").links()]
    wide = synthesize_service("issues", load_spec("issue_tracker.json"), title="Issue Tracker")
    wide.curated = False
    extended = [link.name for link in wide.links()]
    assert set(curated) < set(extended)
    assert any(n.startswith("list_issues_") for n in extended)
    assert not any(n.startswith("list_issues_") for n in curated)


def test_a_create_that_needs_a_parent_record_names_one_and_checks_it():
    """Asana creates a task in a project: the request names the project, and a task created
    elsewhere fails the criterion."""
    cls = get_service("asana")
    link = next(link for link in cls.links() if link.name == "asana_create_task_with_name")
    state = cls.generate_state(random.Random(1))
    plan = link.plant(state, random.Random(1), "Quarterly Ledger Maple")
    (call,) = plan.calls
    project = call.arguments["project_id"]
    assert project in state.projects and f"project id '{project}'" in plan.phrase
    (criterion,) = plan.criteria
    assert criterion.match["project_id"].value == project
    service = cls(canonical_order(state))
    other = next(p for p in sorted(state.projects) if p != project)
    assert service.call("asana_create_task", {**call.arguments, "project_id": other})["success"]
    checked = criterion.model_copy(update={"service": "asana"})
    assert not pass_vector([checked], {"asana": service.state})[0]
    assert service.call("asana_create_task", call.arguments)["success"]
    assert pass_vector([checked], {"asana": service.state})[0]
