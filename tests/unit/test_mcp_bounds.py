"""MCP importer bounds: hostile schemas end in a `SpecError` naming the tool, never a crash."""

from __future__ import annotations

import json
import random
import resource

import pytest

from envpipeline.errors import SpecError
from envpipeline.services.mcp_bounds import MAX_SCHEMA_DEPTH
from envpipeline.services.mcp_import import synthesize_service

S = {"type": "string"}


def tool(name, properties, required=(), output=None):
    spec = {
        "name": name,
        "description": f"{name} tool",
        "inputSchema": {"type": "object", "properties": properties, "required": list(required)},
    }
    if output is not None:
        spec["outputSchema"] = output
    return spec


def items_service(**extra_properties):
    """create/get/list items, the create tool carrying `extra_properties`."""
    return {
        "tools": [
            tool("create_item", {"title": S, **extra_properties}, ["title"]),
            tool("get_item", {"itemId": S}, ["itemId"]),
            tool("list_items", {}),
        ]
    }


def nested(depth):
    schema = dict(S)
    for _ in range(depth):
        schema = {"type": "object", "properties": {"inner": schema}}
    return schema


def test_a_300_deep_schema_is_a_spec_error_not_a_recursion_error():
    with pytest.raises(SpecError, match=rf"create_item.*nested more than {MAX_SCHEMA_DEPTH} levels"):
        synthesize_service("deep", items_service(payload=nested(300)))


def test_deep_nesting_counts_through_arrays_and_output_schemas():
    array_chain = dict(S)
    for _ in range(300):
        array_chain = {"type": "array", "items": array_chain}
    with pytest.raises(SpecError, match="nested more than"):
        synthesize_service("deep", items_service(tags=array_chain))
    payload = items_service()
    payload["tools"].append(tool("summarize_items", {}, output=nested(300)))
    with pytest.raises(SpecError, match="summarize_items.*outputSchema"):
        synthesize_service("deep", payload)


def test_schemas_within_the_depth_limit_still_import():
    cls = synthesize_service("shallow", items_service(payload=nested(MAX_SCHEMA_DEPTH - 2)))
    service = cls(cls.generate_state(random.Random(0)))
    assert service.call("create_item", {"title": "kept"})["success"]


def test_a_deeply_nested_payload_text_is_a_spec_error():
    text = '{"tools": ' + "[" * 100_000 + "]" * 100_000 + "}"
    with pytest.raises(SpecError, match="nested too deeply"):
        synthesize_service("deep", text)


@pytest.mark.parametrize("odd", [{"a": 1}, [1, 2], float("nan")], ids=["object", "array", "nan"])
def test_enums_holding_non_scalars_are_spec_errors(odd):
    with pytest.raises(SpecError, match="create_item.*kind.*enum value"):
        synthesize_service("enums", items_service(kind={"enum": [odd, "plain"]}))


def test_scalar_enums_of_mixed_types_import_and_validate():
    cls = synthesize_service("enums", items_service(kind={"enum": ["a", 2, True, None]}))
    service = cls(cls.generate_state(random.Random(0)))
    assert service.call("create_item", {"title": "x", "kind": 2})["success"]
    assert service.call("create_item", {"title": "x", "kind": "zzz"})["error"]["code"] == 400


@pytest.mark.parametrize(
    ("keyword", "value", "message"),
    [
        ("minLength", 10**12, "minLength 1000000000000 is above"),
        ("minLength", 2 * 10**8, "minLength 200000000 is above"),
        ("minLength", -1, "minLength must be a non-negative integer"),
        ("maxLength", "long", "maxLength must be a non-negative integer"),
    ],
)
def test_huge_or_malformed_string_sizes_are_spec_errors(keyword, value, message):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(SpecError, match=f"create_item.*title: {message}"):
        synthesize_service("sizes", items_service(title={"type": "string", keyword: value}))
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 50_000, "the refusal must come before anything of that size is allocated"


def test_huge_item_counts_and_unsatisfiable_ranges_are_spec_errors():
    with pytest.raises(SpecError, match="minItems 1000000000 is above"):
        synthesize_service("sizes", items_service(tags={"type": "array", "items": S, "minItems": 10**9}))
    with pytest.raises(SpecError, match="minLength 5 is above maxLength 2"):
        synthesize_service("sizes", items_service(code={"type": "string", "minLength": 5, "maxLength": 2}))
    with pytest.raises(SpecError, match="minimum must be a number"):
        synthesize_service("sizes", items_service(count={"type": "integer", "minimum": "0"}))


def test_huge_sizes_in_an_output_schema_are_refused_before_any_call():
    payload = items_service()
    payload["tools"].append(
        tool("summarize_items", {}, output={"type": "object", "properties": {"text": {"minLength": 10**12}}})
    )
    with pytest.raises(SpecError, match="summarize_items.*outputSchema.text: minLength"):
        synthesize_service("sizes", payload)


def test_a_wrong_type_default_is_refused_at_import():
    with pytest.raises(SpecError, match="tool 'create_item': property 'count': default 'many'"):
        synthesize_service("defaults", items_service(count={"type": "integer", "default": "many"}))
    with pytest.raises(SpecError, match="default 'z'"):
        synthesize_service("defaults", items_service(kind={"enum": ["a", "b"], "default": "z"}))


def test_fitting_defaults_still_apply():
    cls = synthesize_service("defaults", items_service(count={"type": "integer", "default": 3}))
    service = cls(cls.generate_state(random.Random(0)))
    assert service.call("create_item", {"title": "x"})["data"]["item"]["count"] == 3


def test_arguments_that_do_not_fit_the_record_are_an_observation_not_an_exception():
    """Two create tools disagree on a field's type: the record keeps the first's; a call with the
    second's type is the caller's 400, never an exception out of `Service.call`."""
    payload = {
        "tools": [
            tool("create_item", {"title": S, "size": {"type": "integer"}}, ["title"]),
            tool("add_item", {"title": S, "size": S}, ["title"]),
            tool("list_items", {}),
        ]
    }
    cls = synthesize_service("clash", json.dumps(payload))
    service = cls(cls.generate_state(random.Random(0)))
    observation = service.call("add_item", {"title": "x", "size": "large"})
    assert observation["success"] is False and observation["error"]["code"] == 400
    assert "size" in observation["error"]["message"]
