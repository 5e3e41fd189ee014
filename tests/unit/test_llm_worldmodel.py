"""The LLM world model over real HTTP: a scripted OpenAI-compatible server plays the simulator.

A synthesized service's simulated tool is answered by the model: the request carries the tool
spec, the arguments and the service state; a reply breaking the output schema is repaired with the
validation errors, and refused after the repairs run out; the same call is answered once (memory,
then disk across instances); tokens are the server's.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from envpipeline.errors import LLMError
from envpipeline.llm import LLMClient, LLMConfig
from envpipeline.services import mcp_values
from envpipeline.services.library.imported import load_spec
from envpipeline.services.links import Hop
from envpipeline.services.llm_worldmodel import (
    LLMWorldModel,
    WorldModelConfig,
    WorldModelError,
    build_world_model,
    install_world_model,
)
from envpipeline.services.mcp_import import ImportedService, synthesize_service
from envpipeline.services.registry import all_services
from envpipeline.services.worldmodel import OfflineWorldModel, WorldModel
from tests.llm_server import Reply, ScriptedLLMServer, llm_server_fixture  # noqa: F401 - the fixture

pytestmark = pytest.mark.llm

GOOD = {"policyRef": "PD-LIS-2026", "dailyAllowance": 95.5, "currency": "EUR"}
#: breaks the schema twice: a missing field and an amount above its maximum
BAD = {"policyRef": "PD-LIS-2026", "dailyAllowance": 9000}


def client(server: ScriptedLLMServer, cache_dir: Path | None = None) -> LLMClient:
    config = LLMConfig(
        model="openai/world-model",
        api_base=server.api_base,
        num_retries=0,
        temperature=0.0,
        timeout_sec=5.0,
        cache_dir=cache_dir,
    )
    return LLMClient(config)


def expenses_with(model: WorldModel) -> ImportedService:
    cls = synthesize_service("expenses_llm", load_spec("travel_expenses.json"), model)
    return cls(cls.generate_state(random.Random(3)))


def user_text(request: dict[str, Any]) -> str:
    return request["messages"][1]["content"]


def test_a_valid_reply_is_the_tools_response_and_the_request_holds_spec_arguments_and_state(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.push(json.dumps(GOOD))
    model = LLMWorldModel(client(llm_server))
    service = expenses_with(model)
    state = service.state.model_dump(mode="json")
    obs = service.call("lookup_per_diem", {"city": "Lisbon"})
    assert obs == {"success": True, "data": GOOD}
    (request,) = llm_server.requests
    text = user_text(request)
    assert "Tool spec" in text and "lookup_per_diem" in text
    assert '{"city":"Lisbon"}' in text  # the canonical arguments
    assert "dailyAllowance" in text and "maximum" in text  # the output schema is the contract
    assert request["response_format"] == {"type": "json_object"}
    assert request["messages"][0]["content"].startswith("You are the world model")
    # the service state reaches the model when the caller passes it (the protocol's `state`)
    llm_server.push(json.dumps(GOOD))
    model.simulate("expenses_llm", "lookup_per_diem", {"city": "Porto"}, None, state=state)
    trip = next(iter(state["trips"]))
    assert trip in user_text(llm_server.requests[-1])
    assert model.usage().prompt_tokens == 22 and model.usage().completion_tokens == 14
    assert model.stats.llm_answers == 2 and model.stats.repairs == 0


def test_a_reply_breaking_the_output_schema_is_repaired_with_the_validation_errors(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.push(json.dumps(BAD), "not json at all", json.dumps(GOOD))
    model = LLMWorldModel(client(llm_server), max_repairs=2)
    obs = expenses_with(model).call("lookup_per_diem", {"city": "Lisbon"})
    assert obs["data"] == GOOD
    first_repair = llm_server.requests[1]["messages"]
    assert first_repair[-2] == {"role": "assistant", "content": json.dumps(BAD)}
    feedback = first_repair[-1]["content"]
    assert "'currency' is a required property" in feedback and "dailyAllowance" in feedback
    assert "no JSON object" in llm_server.requests[2]["messages"][-1]["content"]
    assert model.stats.repairs == 2 and model.usage().calls == 3


def test_replies_that_never_fit_are_refused_clearly_and_the_call_fails_alike_again(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.push(json.dumps(BAD), json.dumps(BAD))
    model = LLMWorldModel(client(llm_server), max_repairs=1)
    service = expenses_with(model)
    with pytest.raises(WorldModelError, match=r"expenses_llm\.lookup_per_diem after 2 replies.*currency"):
        service.call("lookup_per_diem", {"city": "Lisbon"})
    with pytest.raises(WorldModelError):
        service.call("lookup_per_diem", {"city": "Lisbon"})
    assert len(llm_server.requests) == 2 and model.stats.failures == 1
    assert issubclass(WorldModelError, LLMError)


def test_a_non_object_schema_is_answered_as_result_and_no_schema_needs_a_non_empty_object(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.push('{"value": 3}', '{"result": 3}', "{}", '{"summary": "all quiet"}')
    model = LLMWorldModel(client(llm_server), max_repairs=1)
    assert model.simulate("s", "count", {}, {"type": "integer"}) == {"result": 3}
    assert model.simulate("s", "summarize", {"x": 1}, None) == {"summary": "all quiet"}
    assert "empty object" in llm_server.requests[3]["messages"][-1]["content"]


def test_the_same_call_is_answered_once_in_memory_and_on_disk_across_instances(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm_server.push(json.dumps(GOOD))
    first = LLMWorldModel(client(llm_server), answers_dir=tmp_path / "answers")
    service = expenses_with(first)
    one = service.call("lookup_per_diem", {"city": "Lisbon"})
    service.call("create_trip", load_example(service, "create_trip"))  # the state changes ...
    again = service.call("lookup_per_diem", {"city": "Lisbon"})
    assert one == again and len(llm_server.requests) == 1  # ... the same call, the same answer
    assert first.stats.memory_hits == 1
    second = LLMWorldModel(client(llm_server), answers_dir=tmp_path / "answers")
    assert second.simulate("expenses_llm", "lookup_per_diem", {"city": "Lisbon"}, None) == GOOD
    assert len(llm_server.requests) == 1 and second.stats.disk_hits == 1
    assert second.usage().calls == 0
    # another argument is another call
    llm_server.push(json.dumps({**GOOD, "policyRef": "PD-OPO"}))
    assert (
        second.simulate("expenses_llm", "lookup_per_diem", {"city": "Porto"}, None)["policyRef"] == "PD-OPO"
    )


def load_example(service: ImportedService, tool: str) -> dict[str, Any]:
    return type(service).example_arguments(service.state)[tool]


def test_the_request_cache_counts_cached_calls_as_free(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.push(json.dumps(GOOD))
    config = WorldModelConfig(
        kind="llm", model="openai/world-model", api_base=llm_server.api_base, cache_dir=tmp_path
    )
    built = build_world_model(config)
    assert isinstance(built, LLMWorldModel)
    built.simulate("expenses", "lookup_per_diem", {"city": "Lisbon"}, None)
    # a fresh model without the answers store but with the same requests cache: a cache hit
    rebuilt = LLMWorldModel(built.llm, answers_dir=None)
    assert rebuilt.simulate("expenses", "lookup_per_diem", {"city": "Lisbon"}, None) == GOOD
    usage = built.usage()
    assert (usage.calls, usage.cached_calls, usage.prompt_tokens) == (2, 1, 11)
    assert (tmp_path / "answers").is_dir() and (tmp_path / "requests").is_dir()


def test_the_config_chooses_offline_by_default_and_llm_needs_a_model() -> None:
    assert isinstance(build_world_model(WorldModelConfig()), OfflineWorldModel)
    with pytest.raises(ValueError, match="needs a model"):
        WorldModelConfig(kind="llm")
    with pytest.raises(ValueError):
        WorldModelConfig(kind="oracle")  # type: ignore[arg-type]


@pytest.fixture
def restored_library() -> Iterator[None]:
    imported = {n: c for n, c in all_services().items() if issubclass(c, ImportedService)}
    before = {n: c.world_model for n, c in imported.items()}
    yield
    for name, cls in imported.items():
        cls.world_model = before[name]


@pytest.mark.usefixtures("restored_library")
def test_installing_the_model_reaches_library_tools_and_their_simulated_hops(
    llm_server: ScriptedLLMServer,
) -> None:
    model = LLMWorldModel(client(llm_server))
    changed = install_world_model(model)
    assert {"issues", "expenses"} <= set(changed) and "calendar" not in changed
    cls = all_services()["expenses"]
    llm_server.push(json.dumps(GOOD))
    hop = next(link for link in cls.links() if link.name == "lookup_per_diem_lookup")
    assert isinstance(hop, Hop)
    plan = hop.plant(cls.generate_state(random.Random(0)), random.Random(0), "Lisbon")
    assert plan.output == "PD-LIS-2026"  # the planted value is the model's answer
    service = cls(cls.generate_state(random.Random(0)))
    assert service.call("lookup_per_diem", {"city": "Lisbon"})["data"] == GOOD  # same call, same answer
    assert len(llm_server.requests) == 1


def simulator(body: dict[str, Any]) -> str:
    """A scripted world model: a schema-valid response, with a recognisable policy reference."""
    text = body["messages"][1]["content"]
    marker = "Output schema (the response must validate against it):\n"
    if marker not in text:
        return json.dumps({"result": "ok"})
    schema = json.loads(text.split(marker, 1)[1].split("\n", 1)[0])
    digest = hashlib.sha256(text.split("Arguments:\n", 1)[1].split("\n", 1)[0].encode()).hexdigest()
    response = mcp_values.sample(schema, random.Random(digest))
    if "policyRef" in response:
        response["policyRef"] = f"WM-{digest[:6].upper()}"
    return json.dumps(response)


@pytest.mark.usefixtures("restored_library")
def test_compose_with_the_llm_world_model_plants_the_models_answers(tmp_path: Path) -> None:
    from envpipeline.cli import main
    from envpipeline.compose.variants import reset_link_caches

    out = tmp_path / "out"
    # seed 207: the first whose task walks through expenses' simulated per-diem lookup and passes
    # every gate (it moves when the library's links change: look for the next such seed)
    args = ["compose", "--tasks", "1", "--seed", "207", "--max-attempts", "1", "--out", str(out)]
    try:
        with ScriptedLLMServer(default=simulator) as server:
            llm = ["--world-model", "llm", "--model", "openai/wm", "--api-base", server.api_base]
            result = CliRunner().invoke(main, [*args, "--home", str(tmp_path / "home"), *llm])
    finally:
        reset_link_caches()  # the library's links go back to the offline model
    assert result.exit_code == 0, result.output
    (line,) = (out / "accepted.jsonl").read_text().splitlines()
    task = json.loads(line)
    assert "lookup_per_diem_lookup" in task["metadata"]["hops"]
    planted = [v for v in task["metadata"]["hidden_values"] if str(v).startswith("WM-")]
    assert planted, task["metadata"]["hidden_values"]  # the hop's value is the model's answer
    assert server.requests and all(r["model"] == "wm" for r in server.requests)
    assert any((out / "llm-cache" / "world-model" / "answers").rglob("*.json"))
