"""The schema cache behind describe_tool / list_tools: same answers as a fresh build, never stale."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from pydantic import Field

from envpipeline.agents.environment import ComposedEnvironment
from envpipeline.agents.metatools import MetaToolbox, _dumps
from envpipeline.export.runtime import envtool
from envpipeline.models.base import Strict
from envpipeline.services.base import Service, ToolArgs, ToolDef, tool
from envpipeline.services.registry import all_services
from envpipeline.services.schema_cache import build_tool_listing


@pytest.fixture(scope="module")
def curated_env() -> ComposedEnvironment:
    """Every curated service of the library, each with its generated state."""
    library = {n: cls for n, cls in all_services().items() if cls.curated}
    return ComposedEnvironment(
        {n: cls(cls.generate_state(random.Random(f"cache:{n}"))) for n, cls in library.items()}
    )


def _fresh_describe(tool_def: ToolDef, namespace: str) -> dict[str, Any]:
    """describe_tool's answer as it was built before the cache: the schema built afresh."""
    return {"success": True, "data": tool_def.build_json_schema(namespace)["function"]}


def _fresh_listing(namespace: str, service: Any) -> dict[str, Any]:
    tools = [{"name": f"{namespace}.{n}", "description": t.description} for n, t in service.tools.items()]
    return {"success": True, "data": {"tools": tools}}


def test_describe_tool_answers_are_byte_identical_to_a_fresh_build_for_every_curated_tool(curated_env):
    box = MetaToolbox(curated_env)
    checked = 0
    for namespace, service in curated_env.services.items():
        for local, tool_def in service.tools.items():
            name = f"{namespace}.{local}"
            fresh = _dumps(_fresh_describe(tool_def, namespace))
            for _ in range(2):  # the first answer fills the cache, the second reads it
                assert box.dispatch("describe_tool", json.dumps({"tool": name})) == fresh, name
            assert box.describe_tool(name) == _fresh_describe(tool_def, namespace)
            assert tool_def.json_schema(namespace) == tool_def.build_json_schema(namespace)
            envtool_fresh = _fresh_describe(tool_def, namespace)
            assert json.dumps(envtool.describe_tool(curated_env, name), sort_keys=True) == json.dumps(
                envtool_fresh, sort_keys=True
            )
            checked += 1
    assert checked > 100  # the whole curated library, not a sample


def test_list_tools_answers_are_byte_identical_to_a_fresh_build_for_every_curated_service(curated_env):
    box = MetaToolbox(curated_env)
    for namespace, service in curated_env.services.items():
        fresh = _fresh_listing(namespace, service)
        for _ in range(2):
            assert box.dispatch("list_tools", {"service": namespace}) == _dumps(fresh), namespace
        assert box.list_tools(namespace) == fresh
        assert envtool.list_tools(curated_env, namespace) == fresh


def test_editing_an_answer_never_changes_a_later_one(curated_env):
    box = MetaToolbox(curated_env)
    namespace = sorted(curated_env.services)[0]
    name = f"{namespace}.{next(iter(curated_env.services[namespace].tools))}"
    before = box.dispatch("describe_tool", {"tool": name})
    answer = box.describe_tool(name)
    answer["data"]["parameters"]["properties"]["injected"] = {"type": "string"}
    answer["data"]["description"] = "edited"
    listing = box.list_tools(namespace)
    listing["data"]["tools"].clear()
    assert box.dispatch("describe_tool", {"tool": name}) == before
    assert box.describe_tool(name) != answer
    assert box.list_tools(namespace)["data"]["tools"]


class _NoteState(Strict):
    notes: dict[str, str] = {}


class _ReadArgs(ToolArgs):
    note_id: str = Field(description="the note")


class _ReadArgsWithLimit(ToolArgs):
    note_id: str = Field(description="the note")
    limit: int = Field(10, description="at most this many lines")


class _Notes(Service[_NoteState]):
    name = "cachetest"
    title = "Cache test"
    domain = "test"

    @tool(writes=False)
    def read(self, args: _ReadArgs) -> dict[str, Any]:
        """Read one note."""
        return {"note": self.state.notes.get(args.note_id)}


def _box() -> MetaToolbox:
    return MetaToolbox(ComposedEnvironment({"cachetest": _Notes(_NoteState())}))


def _described(box: MetaToolbox, name: str = "cachetest.read") -> dict[str, Any]:
    return json.loads(box.dispatch("describe_tool", {"tool": name}))["data"]


def _listed(box: MetaToolbox) -> list[dict[str, Any]]:
    return json.loads(box.dispatch("list_tools", {"service": "cachetest"}))["data"]["tools"]


def test_a_replaced_tool_is_described_and_listed_afresh(monkeypatch):
    box = _box()
    assert set(_described(box)["parameters"]["properties"]) == {"note_id"}
    assert _listed(box)[0]["description"] == "Read one note."
    original = _Notes.tools["read"]
    replaced = ToolDef("read", "Read one note, a few lines.", _ReadArgsWithLimit, original.func, False)
    monkeypatch.setitem(_Notes.tools, "read", replaced)
    described = _described(box)
    assert set(described["parameters"]["properties"]) == {"note_id", "limit"}
    assert described["description"] == "Read one note, a few lines."
    assert described == replaced.build_json_schema("cachetest")["function"]
    listed = _listed(box)
    assert listed == build_tool_listing("cachetest", _Notes.tools)
    assert listed[0]["description"] == "Read one note, a few lines."


def test_a_tool_added_to_a_service_is_listed(monkeypatch):
    box = _box()
    assert [t["name"] for t in box.list_tools("cachetest")["data"]["tools"]] == ["cachetest.read"]
    original = _Notes.tools["read"]
    monkeypatch.setitem(_Notes.tools, "peek", ToolDef("peek", "Peek.", _ReadArgs, original.func, False))
    assert [t["name"] for t in _listed(box)] == ["cachetest.read", "cachetest.peek"]
    assert _described(box, "cachetest.peek")["description"] == "Peek."


def test_a_rebuilt_arguments_model_is_described_afresh():
    class _Args(ToolArgs):
        note_id: str = Field(description="the note")

    tool_def = ToolDef("read", "Read one note.", _Args, _Notes.tools["read"].func, False)
    properties = tool_def.json_schema("cachetest")["function"]["parameters"]["properties"]
    assert properties["note_id"]["description"] == "the note"
    _Args.model_fields["note_id"].description = "the note's id"
    _Args.model_rebuild(force=True)
    properties = tool_def.json_schema("cachetest")["function"]["parameters"]["properties"]
    assert properties["note_id"]["description"] == "the note's id"
    assert tool_def.json_schema("cachetest") == tool_def.build_json_schema("cachetest")


def test_the_same_tool_under_another_namespace_is_named_for_it():
    tool_def = _Notes.tools["read"]
    assert tool_def.json_schema("cachetest")["function"]["name"] == "cachetest.read"
    assert tool_def.json_schema("other")["function"]["name"] == "other.read"


def test_unknown_names_keep_their_404_answers():
    box = _box()
    assert json.loads(box.dispatch("describe_tool", {"tool": "cachetest.nope"})) == {
        "success": False,
        "error": {"code": 404, "message": "unknown tool 'cachetest.nope'"},
    }
    assert json.loads(box.dispatch("list_tools", {"service": "nope"})) == {
        "success": False,
        "error": {"code": 404, "message": "unknown service 'nope'"},
    }
