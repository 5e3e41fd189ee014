"""Real JSON Schema in MCP specs: unions, $ref/$defs, nullable idioms, integers, nested shapes.

Every construct is imported through `synthesize_service` and called like a user would; malformed
schemas end in a `SpecError` naming the tool and the schema path.
"""

from __future__ import annotations

import random
import re

import pytest

from envpipeline.errors import SpecError
from envpipeline.services.contract import check_service
from envpipeline.services.mcp_import import synthesize_service
from envpipeline.services.mcp_schema import MAX_NODES, normalize_schema
from envpipeline.services.mcp_spec import parse_tools_list

S = {"type": "string"}


def tool(name, properties, required=(), **extra):
    schema = {"type": "object", "properties": properties, "required": list(required), **extra}
    return {"name": name, "description": f"{name} tool", "inputSchema": schema}


def service_of(*tools, name="svc"):
    cls = synthesize_service(name, {"tools": list(tools)})
    return cls, cls(cls.generate_state(random.Random(1)))


def test_optional_argument_idiom_any_of_with_null_is_accepted_and_optional():
    spec = tool(
        "lookup_weather",
        {
            "city": S,
            "units": {
                "anyOf": [{"type": "string", "enum": ["metric", "imperial"]}, {"type": "null"}],
                "default": None,
            },
        },
        ["city"],
    )
    cls, service = service_of(spec)
    assert service.call("lookup_weather", {"city": "Oslo"})["success"]
    assert service.call("lookup_weather", {"city": "Oslo", "units": None})["success"]
    assert service.call("lookup_weather", {"city": "Oslo", "units": "metric"})["success"]
    assert service.call("lookup_weather", {"city": "Oslo", "units": "kelvin"})["error"]["code"] == 400
    assert check_service(cls) == []


def test_type_unions_accept_each_member_and_refuse_others():
    spec = tool(
        "tag_thing",
        {"value": {"type": ["string", "number", "boolean"]}, "note": {"type": ["string", "null"]}},
        ["value"],
    )
    _, service = service_of(spec)
    for good in ("x", 2.5, 3, True):
        assert service.call("tag_thing", {"value": good})["success"], good
    assert service.call("tag_thing", {"value": [1]})["error"]["code"] == 400
    assert service.call("tag_thing", {"value": "x", "note": None})["success"]


def test_one_of_objects_become_a_union_of_strict_models():
    spec = tool(
        "notify_target",
        {
            "target": {
                "oneOf": [
                    {
                        "type": "object",
                        "properties": {"email": S},
                        "required": ["email"],
                        "additionalProperties": False,
                    },
                    {
                        "type": "object",
                        "properties": {"phone": S},
                        "required": ["phone"],
                        "additionalProperties": False,
                    },
                ]
            }
        },
        ["target"],
    )
    cls, service = service_of(spec)
    assert service.call("notify_target", {"target": {"email": "a@b.c"}})["success"]
    assert service.call("notify_target", {"target": {"phone": "+1"}})["success"]
    assert service.call("notify_target", {"target": {"fax": "1"}})["error"]["code"] == 400
    assert check_service(cls) == []


def test_refs_into_defs_and_definitions_resolve_with_sibling_description():
    schema_defs = {
        "Label": {
            "type": "object",
            "properties": {"name": S, "color": {"$ref": "#/definitions/Color"}},
            "required": ["name"],
        },
    }
    spec = tool(
        "create_card",
        {
            "title": S,
            "labels": {"type": "array", "items": {"$ref": "#/$defs/Label", "description": "a label"}},
        },
        ["title"],
        **{"$defs": schema_defs, "definitions": {"Color": {"type": "string", "enum": ["red", "blue"]}}},
    )
    cls, service = service_of(spec)
    ok = service.call("create_card", {"title": "T", "labels": [{"name": "bug", "color": "red"}]})
    assert ok["success"], ok
    bad = service.call("create_card", {"title": "T", "labels": [{"name": "bug", "color": "green"}]})
    assert bad["error"]["code"] == 400
    (parsed,) = parse_tools_list({"tools": [spec]})
    assert parsed.properties["labels"]["items"]["description"] == "a label"
    assert check_service(cls) == []


@pytest.mark.parametrize(
    ("prop", "message"),
    [
        (
            {"type": "array", "items": {"$ref": "#/$defs/X"}},
            "inputSchema.properties.labels.items: $ref '#/$defs/X' does not resolve",
        ),
        (
            {"$ref": "https://example.com/schema.json"},
            "inputSchema.properties.labels: $ref 'https://example.com/schema.json' is not local",
        ),
        (
            {"type": "array", "items": {"type": "file"}},
            'inputSchema.properties.labels.items: unsupported type "file"',
        ),
        (
            {"anyOf": [S, {"type": "object", "required": 3}]},
            "inputSchema.properties.labels.anyOf[1]: required must be a list",
        ),
    ],
)
def test_malformed_schemas_name_the_tool_and_the_schema_path(prop, message):
    with pytest.raises(SpecError, match=re.escape(f"tool 'create_issue': {message}")):
        parse_tools_list({"tools": [tool("create_issue", {"labels": prop})]})


def test_recursive_refs_are_refused_with_the_cycle_spelled_out():
    defs = {
        "Node": {
            "type": "object",
            "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
        }
    }
    spec = tool("create_tree", {"root": {"$ref": "#/$defs/Node"}}, **{"$defs": defs})
    with pytest.raises(
        SpecError, match=re.escape("'#/$defs/Node' is recursive (#/$defs/Node -> #/$defs/Node)")
    ):
        parse_tools_list({"tools": [spec]})


def test_ref_diamonds_that_explode_are_refused_not_expanded():
    defs = {
        f"L{i}": {
            "type": "object",
            "properties": {"a": {"$ref": f"#/$defs/L{i + 1}"}, "b": {"$ref": f"#/$defs/L{i + 1}"}},
        }
        for i in range(20)
    }
    defs["L20"] = S
    with pytest.raises(SpecError, match=f"more than {MAX_NODES} nodes"):
        normalize_schema(
            "boom",
            "inputSchema",
            {"type": "object", "properties": {"x": {"$ref": "#/$defs/L0"}}, "$defs": defs},
        )


def test_integer_ids_stay_integers_in_state_examples_and_responses():
    specs = [
        tool(
            "create_ticket",
            {
                "title": S,
                "priority": {"type": "integer", "minimum": 1, "maximum": 5},
                "points": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            },
            ["title", "priority"],
        ),
        tool("list_tickets", {"priority": {"type": "integer"}}),
    ]
    cls, service = service_of(*specs)
    rows = service.call("list_tickets", {})["data"]["tickets"]
    assert rows and all(type(r["priority"]) is int for r in rows)
    created = service.call("create_ticket", {"title": "A", "priority": 3, "points": 99999})["data"]["ticket"]
    assert created["points"] == 99999 and type(created["points"]) is int
    assert service.call("create_ticket", {"title": "A", "priority": 2.5})["error"]["code"] == 400
    args = cls.example_arguments(service.state)["create_ticket"]
    assert type(args["priority"]) is int
    assert check_service(cls) == []


def test_all_of_merges_and_nested_additional_properties_are_honoured():
    spec = tool(
        "apply_settings",
        {
            "settingsId": S,
            "values": {"type": "object", "additionalProperties": {"type": "integer"}},
            "meta": {
                "allOf": [
                    {"type": "object", "properties": {"a": S}},
                    {"properties": {"b": {"type": "integer"}}, "required": ["b"]},
                ]
            },
            "mode": {"const": "fast"},
        },
        ["settingsId"],
    )
    (parsed,) = parse_tools_list({"tools": [spec]})
    meta = parsed.properties["meta"]
    assert set(meta["properties"]) == {"a", "b"} and meta["required"] == ["b"]
    _, service = service_of(spec)
    settings_id = service.state.simulated.known["settings_id"][0]
    assert service.call("apply_settings", {"settingsId": settings_id, "values": {"x": 1}, "mode": "fast"})[
        "success"
    ]
    assert (
        service.call("apply_settings", {"settingsId": settings_id, "values": {"x": "one"}})["error"]["code"]
        == 400
    )
    assert service.call("apply_settings", {"settingsId": settings_id, "mode": "slow"})["error"]["code"] == 400
    assert (
        service.call("apply_settings", {"settingsId": settings_id, "meta": {"a": "x"}})["error"]["code"]
        == 400
    )


def test_untyped_properties_accept_json_values():
    _, service = service_of(tool("run_query", {"params": {"description": "anything"}}))
    for value in ("x", 1, [1, "a"], {"k": "v"}):
        assert service.call("run_query", {"params": value})["success"], value
