"""Listing hops of imported services: every list and search tool finds a record by a known value.

A scanned listing hides the record among others and the reference selects it by value (a selector
in its path), so the store's order cannot give it away and two records holding the value make the
hop ambiguous.
"""

from __future__ import annotations

import random

from envpipeline.agents.environment import canonical_order
from envpipeline.compose.gates import unique_hops
from envpipeline.export.runtime import solve
from envpipeline.models.task import Binding, ToolCallStep
from envpipeline.redteam.compose import reference_run, stored_states
from envpipeline.services.links import HopPlan, Source, execute_planned, read_path, selected
from envpipeline.services.registry import all_services, get_service
from tests.unit.conftest import scanned_selectors

ROWS = {
    "coupons": [
        {"id": "REF-1001", "name": "Budget Planning Raven"},
        {"id": "REF-2002", "name": "Quarterly Ledger Maple"},
        {"id": "coupon_1", "name": "Sprint Demo Ember"},
    ]
}


def _plant(service: str, link_name: str, value: str, seed: int = 1) -> tuple[object, HopPlan]:
    cls = get_service(service)
    link = next(link for link in cls.links() if link.name == link_name)
    state = cls.generate_state(random.Random(seed))
    plan = link.plant(state, random.Random(seed), value)
    assert isinstance(plan, HopPlan)
    return cls(canonical_order(state)), plan


def test_a_scanned_listing_hides_the_record_among_others_and_selects_it_by_value():
    for seed in range(20):
        service, plan = _plant("stripe_payments", "list_coupons_name_to_id", "Quarterly Ledger Maple", seed)
        (call,) = plan.calls
        assert call.arguments == {} and call.reveals == ("coupons", {"name": "Quarterly Ledger Maple"}, "id")
        (observation,) = execute_planned(service, plan.calls, "Quarterly Ledger Maple")
        rows = observation["data"]["coupons"]
        assert len(rows) >= 5, "the generated records and two to four planted beside the record"
        assert "Quarterly Ledger Maple" not in (rows[0]["name"], rows[-1]["name"]), "never first nor last"
        assert read_path(observation["data"], call.reveals) == plan.output
        assert "'list_coupons'" in plan.phrase and "Quarterly Ledger Maple" not in plan.phrase


def test_a_listing_states_its_required_arguments_in_the_phrase_and_the_goal_relation():
    """Jira's watchers are listed per issue: the request must say which issue, at every style."""
    service, plan = _plant("jira", "jira_get_issue_watchers_name_to_id", "Quarterly Ledger Maple")
    (call,) = plan.calls
    key = call.arguments["issue_key"]
    assert f"issue key {key!r}" in plan.phrase
    assert f"listed with issue key {key!r}" in plan.relation.format(of="'X'")
    (observation,) = execute_planned(service, plan.calls, "Quarterly Ledger Maple")
    assert observation["success"] and read_path(observation["data"], call.reveals) == plan.output


def test_every_list_and_search_tool_of_the_corpus_takes_part_in_a_link_where_its_shape_allows():
    """Before listing hops 6 of 457 corpus list tools and 7 of 104 search tools served a link."""
    linked, listings = set(), 0
    for name, cls in all_services().items():
        if cls.curated:
            continue
        listings += sum(op in ("list", "search") for op in cls.operations.values())
        for link in cls.links():
            if isinstance(link, Source):  # a read that takes no argument: never a list or search tool
                continue
            plan = link.plant(cls.generate_state(random.Random(0)), random.Random(0), "REF-4411")
            linked |= {
                f"{name}.{c.tool}" for c in plan.calls if cls.operations.get(c.tool) in ("list", "search")
            }
    assert listings > 500
    assert len(linked) >= 0.8 * listings


def test_two_rows_holding_the_value_make_a_selected_hop_ambiguous():
    steps = [
        ToolCallStep(tool="s.list_coupons", arguments={}),
        ToolCallStep(
            tool="t.get",
            arguments={"id": None},
            bindings={"id": Binding(step=0, path=["coupons", {"name": "Quarterly Ledger Maple"}, "id"])},
        ),
    ]
    one = {"success": True, "data": ROWS}
    assert unique_hops(steps, [one, {"success": True}]).passed
    twice = {"coupons": [*ROWS["coupons"], {"id": "REF-3003", "name": "Quarterly Ledger Maple"}]}
    gate = unique_hops(steps, [{"success": True, "data": twice}, {"success": True}])
    assert not gate.passed and gate.evidence["ambiguous"] == [{"step": 1, "argument": "id", "candidates": 2}]


def test_the_exported_reference_reads_selectors_as_verification_does():
    path = ["coupons", {"name": "Quarterly Ledger Maple"}, "id"]
    assert solve.read_path(ROWS, path) == read_path(ROWS, path) == "REF-2002"
    assert solve.read_path(ROWS, ["coupons", 0, "id"]) == "REF-1001"
    for reader in (solve.read_path, read_path):
        try:
            reader(ROWS, ["coupons", {"name": "Nobody"}, "id"])
        except KeyError:
            continue
        raise AssertionError("a selector that matches no row must raise KeyError")


def test_in_accepted_tasks_the_scanned_record_is_never_the_first_nor_the_last_row(scanned):
    """After every planting of the task (twins, other hops and actions on the same service) and in
    the store's order, the row a scanned selector picks is not the listing's first nor its last."""
    for task in scanned:
        run = reference_run(task, stored_states(task))
        for step, path in scanned_selectors(task):
            rows = run.observations[step]["data"][path[0]]
            selector = next(k for k in path if isinstance(k, dict))
            assert len(rows) >= 3 and len(selected(rows, selector)) == 1, task.task_id
            assert selected([rows[0], rows[-1]], selector) == [], task.task_id
