"""LLM spec-to-service synthesis over real HTTP: the model plans, the generated contract decides.

A good plan (roles the name-based guess misses, seeded value pools) builds a service that passes
the contract and joins the library; a plan whose state ignores its seed, one with pools of the
wrong type, or a CRUD role the spec cannot serve is repaired with the reasons and refused when the
repairs run out (it never joins); malformed JSON is repaired.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from envpipeline.errors import ServiceError, SpecError
from envpipeline.llm import LLMClient, LLMConfig
from envpipeline.services import registry
from envpipeline.services.contract import check_service
from envpipeline.services.llm_synthesis import (
    LLMSynthesisResult,
    SynthesizerConfig,
    contract_failures,
    join_library,
    synthesize_by_config,
    synthesize_with_llm,
)
from envpipeline.services.mcp_import import synthesis_report, synthesize_service
from envpipeline.services.registry import all_services
from tests.llm_server import ScriptedLLMServer, llm_server_fixture  # noqa: F401 - the fixture

pytestmark = pytest.mark.llm


def tool(name: str, description: str, props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    schema = {"type": "object", "properties": props, "required": required}
    return {"name": name, "description": description, "inputSchema": schema}


def text(description: str) -> dict[str, str]:
    return {"type": "string", "description": description}


WIKI = {
    "tools": [
        tool(
            "publish_page",
            "Publish a new wiki page.",
            {"title": text("page title"), "body": text("page text"), "space": text("space name")},
            ["title", "body"],
        ),
        tool("fetch_page", "Fetch one page by id.", {"pageId": text("page id")}, ["pageId"]),
        tool("browse_pages", "Browse the pages of a space.", {"space": text("space name")}, []),
        tool("find_pages", "Full-text search over pages.", {"query": text("text to find")}, ["query"]),
        tool(
            "revise_page",
            "Change a page's body.",
            {"pageId": text("page id"), "body": text("new text")},
            ["pageId"],
        ),
        tool("summarize_page", "Summarize a page with AI.", {"pageId": text("page id")}, ["pageId"]),
    ]
}
ROLES = {
    "publish_page": {"role": "create", "collection": "pages"},
    "fetch_page": {"role": "get", "collection": "pages"},
    "browse_pages": {"role": "list", "collection": "pages"},
    "find_pages": {"role": "search", "collection": "pages"},
    "revise_page": {"role": "update", "collection": "pages"},
    "summarize_page": {"role": "simulated", "collection": None},
}
POOLS = {
    "space": ["Engineering", "Sales", "People"],
    "title": ["Onboarding Guide", "Release Checklist", "Incident Runbook"],
}
GOOD = {
    "title": "Team Wiki",
    "domain": "software",
    "tools": ROLES,
    "collections": {"pages": {"records": 5, "values": POOLS}},
}
#: one record of single-value pools: every seed builds the same state
SEED_BLIND = {
    **GOOD,
    "collections": {"pages": {"records": 1, "values": {"space": ["Eng"], "title": ["T"], "body": ["B"]}}},
}
WRONG_TYPE = {**GOOD, "collections": {"pages": {"records": 3, "values": {"title": [7, 8]}}}}


def llm(server: ScriptedLLMServer) -> LLMClient:
    return LLMClient(
        LLMConfig(model="openai/builder", api_base=server.api_base, num_retries=0, timeout_sec=5)
    )


def test_the_name_based_guess_simulates_what_the_model_makes_crud() -> None:
    report = synthesis_report(synthesize_service("wiki_guess", WIKI))
    assert set(report.simulated_tools) >= {"publish_page", "browse_pages", "revise_page"}


@pytest.fixture
def library_restored() -> Iterator[None]:
    """The registry as it was: a service joined here must not change other tests' library."""
    before = set(all_services())
    yield
    for name in set(all_services()) - before:
        registry._REGISTRY.unregister(name)  # pyright: ignore[reportPrivateUsage]


@pytest.mark.usefixtures("library_restored")
def test_a_good_plan_builds_a_service_that_passes_the_contract_and_joins(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.push(json.dumps(GOOD))
    result = synthesize_with_llm("wiki_llm", WIKI, llm(llm_server))
    assert result.accepted and result.reasons == [] and len(result.attempts) == 1
    cls = result.service
    assert cls is not None and check_service(cls) == []
    report = result.report()
    assert report is not None and report.simulated_tools == ["summarize_page"]
    assert report.collections == {"pages": sorted(t for t in ROLES if t != "summarize_page")}
    state = cls.generate_state(random.Random(1)).model_dump()["pages"]
    assert len(state) <= 5 and {r["space"] for r in state.values()} <= set(POOLS["space"])
    service = cls(cls.generate_state(random.Random(1)))
    created = service.call("publish_page", {"title": "Q3 Plan", "body": "Draft", "space": "Sales"})
    assert (
        created["success"]
        and service.call("revise_page", {"pageId": created["data"]["page"]["id"], "body": "Final"})["success"]
    )
    assert result.total_tokens == 18
    # the request showed the tools and the name-based guess
    request = llm_server.requests[0]["messages"][1]["content"]
    assert "browse_pages" in request and '"simulated"' in request
    assert join_library(result) is cls and all_services()["wiki_llm"] is cls


def test_a_state_that_ignores_its_seed_is_repaired_then_refused_and_never_joins(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.push(json.dumps(SEED_BLIND), json.dumps(SEED_BLIND))
    result = synthesize_with_llm("wiki_blind", WIKI, llm(llm_server), max_repairs=1)
    assert not result.accepted and len(result.attempts) == 2
    assert result.reasons == ["contract: generate_state ignores its seed"]
    assert "generate_state ignores its seed" in llm_server.requests[1]["messages"][-1]["content"]
    with pytest.raises(
        ServiceError, match=r"wiki_blind.*failed its contract \(2 model replies\).*ignores its seed"
    ):
        join_library(result)
    assert "wiki_blind" not in all_services()


def test_malformed_json_wrong_pools_and_unservable_roles_are_repaired_into_a_passing_service(
    llm_server: ScriptedLLMServer,
) -> None:
    no_id = {**GOOD, "tools": {**ROLES, "find_pages": {"role": "get", "collection": "pages"}}}
    llm_server.push("{'title': oops", json.dumps(WRONG_TYPE), json.dumps(no_id), json.dumps(GOOD))
    result = synthesize_with_llm("wiki_fixed", WIKI, llm(llm_server), max_repairs=3)
    assert result.accepted and [bool(a.failures) for a in result.attempts] == [True, True, True, False]
    feedback = [r["messages"][-1]["content"] for r in llm_server.requests[1:]]
    assert "JSON" in feedback[0]
    assert "contract" in feedback[1] and "title" in feedback[1]  # the pool of numbers for a string field
    assert "find_pages: a get on 'pages' needs a required id argument" in feedback[2]


def test_a_plan_that_does_not_cover_the_spec_is_named_and_a_bad_spec_is_the_callers_error(
    llm_server: ScriptedLLMServer,
) -> None:
    partial = {
        **GOOD,
        "tools": {k: v for k, v in ROLES.items() if k != "fetch_page"} | {"nope": {"role": "simulated"}},
    }
    llm_server.push(json.dumps(partial))
    result = synthesize_with_llm("wiki_partial", WIKI, llm(llm_server), max_repairs=0)
    assert not result.accepted
    assert set(result.reasons) >= {"tools.nope: no such tool in the spec", "tools.fetch_page: not planned"}
    with pytest.raises(SpecError):
        synthesize_with_llm("wiki_bad", {"tools": [{"name": ""}]}, llm(llm_server))
    assert len(llm_server.requests) == 1  # the malformed spec never reached the model


def test_the_config_chooses_the_synthesizer_and_both_are_held_to_the_contract(
    llm_server: ScriptedLLMServer,
) -> None:
    assert synthesize_by_config("wiki_proc", WIKI, SynthesizerConfig()).accepted
    # the procedural path is held to the contract too: a synthesized service whose only collection
    # is fixed (the simulated tools' seeded history aside) fails it and never joins
    blind = synthesize_service("wiki_proc_blind", WIKI)
    records = blind.generate_state(random.Random(1)).model_dump()["pages"]
    state_model = blind.state_model
    blind.generate_state = classmethod(  # type: ignore[method-assign]
        lambda cls, rng: state_model.model_validate({"pages": records})
    )
    assert contract_failures(blind) == ["generate_state ignores its seed"]
    refused = LLMSynthesisResult("wiki_proc_blind", None, None, [])
    refused.procedural_failures = contract_failures(blind)
    assert not refused.accepted
    with pytest.raises(ServiceError, match="'wiki_proc_blind' failed its contract"):
        join_library(refused)
    llm_server.push(json.dumps(GOOD))
    config = SynthesizerConfig(kind="llm", model="openai/builder", api_base=llm_server.api_base)
    assert synthesize_by_config("wiki_cfg", WIKI, config).accepted
    with pytest.raises(ValueError, match="needs a model"):
        SynthesizerConfig(kind="llm")


def test_services_import_cli_synthesizes_from_the_models_plan_and_refuses_a_failing_one(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from envpipeline.cli import main

    spec = tmp_path / "wiki_cli.json"
    spec.write_text(json.dumps(WIKI))
    llm = ["--synthesizer", "llm", "--model", "openai/builder", "--api-base", llm_server.api_base]
    llm_server.push(json.dumps(GOOD))
    ok = CliRunner().invoke(main, ["services", "import", str(spec), "--json", *llm])
    assert ok.exit_code == 0, ok.output
    (report,) = json.loads(ok.output)
    assert report["synthesizer"] == "llm" and report["contract"] == "passed"
    assert set(report["implemented"]) | set(report["simulated"]) == {t["name"] for t in WIKI["tools"]}
    # a plan whose only collection ignores the seed, twice: refused with the contract's reason
    llm_server.push(json.dumps(SEED_BLIND), json.dumps(SEED_BLIND), json.dumps(SEED_BLIND))
    bad = CliRunner().invoke(main, ["services", "import", str(spec), "--name", "wiki_cli_blind", *llm])
    assert bad.exit_code == 1
    assert "wiki_cli_blind" in bad.output and "ignores its seed" in bad.output
    assert "wiki_cli_blind" not in all_services()
