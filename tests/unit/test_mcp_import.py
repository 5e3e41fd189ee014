"""Import from MCP tool specs: parsing, shapes, CRUD semantics, simulated tools, reports."""

from __future__ import annotations

import copy
import json
import random
import re

import jsonschema
import pytest

from envpipeline.errors import PlantingError, SpecError
from envpipeline.services.library.imported import load_spec
from envpipeline.services.links import Hop
from envpipeline.services.mcp_import import parse_tools_list, synthesis_report, synthesize_service
from envpipeline.services.mcp_spec import classify
from envpipeline.services.registry import all_services
from envpipeline.services.worldmodel import OfflineWorldModel, WorldModel


def obj(properties=None, required=()):
    return {"type": "object", "properties": properties or {}, "required": list(required)}


def t(name, properties=None, required=(), output=None, description=None):
    spec = {
        "name": name,
        "description": description or f"{name} tool",
        "inputSchema": obj(properties, required),
    }
    if output is not None:
        spec["outputSchema"] = output
    return spec


S = {"type": "string"}
ISSUES = load_spec("issue_tracker.json")
EXPENSES = load_spec("travel_expenses.json")


@pytest.fixture
def issues():
    cls = synthesize_service("issues_t", ISSUES)
    return cls(cls.generate_state(random.Random(5)))


# ---------------------------------------------------------------------------------- parsing


def test_parse_accepts_result_jsonrpc_list_and_text():
    tools = ISSUES["tools"]
    for payload in (ISSUES, {"jsonrpc": "2.0", "id": 3, "result": ISSUES}, tools, json.dumps(ISSUES)):
        assert [s.name for s in parse_tools_list(payload)] == [x["name"] for x in tools]
    assert parse_tools_list(EXPENSES)[0].name == "create_trip"


@pytest.mark.parametrize(
    ("tools", "culprit"),
    [
        ([t("ok_tool"), {"description": "no name", "inputSchema": obj()}], "tool #1"),
        ([t("list_items"), t("list_items")], "'list_items'"),
        ([{"name": "get_thing", "description": "x"}], "'get_thing'"),
        ([{"name": "get_thing", "inputSchema": {"type": "string"}}], "'get_thing'"),
        ([{"name": "get_thing", "inputSchema": []}], "'get_thing'"),
        ([t("upload_file", {"blob": {"type": "file"}})], "'upload_file'"),
        ([t("bad_union", {"v": {"type": ["string", 7]}})], "'bad_union'"),
        ([t("empty_any_of", {"v": {"anyOf": []}})], "'empty_any_of'"),
        ([t("nested_bad", {"v": {"type": "array", "items": {"oneOf": [{"type": "file"}]}}})], "'nested_bad'"),
        ([t("ghost_required", {"a": S}, required=["b"])], "'ghost_required'"),
        ([t("bad name!")], "'bad name!'"),
    ],
)
def test_bad_specs_raise_spec_error_naming_the_tool(tools, culprit):
    with pytest.raises(SpecError, match=re.escape(culprit)):
        parse_tools_list({"tools": tools})


@pytest.mark.parametrize(
    "payload",
    [
        42,
        "not json",
        '"a string"',
        {"tools": "nope"},
        {"tools": []},
        {"jsonrpc": "2.0", "error": {"code": -1}},
    ],
)
def test_payloads_that_are_not_tool_lists_raise_spec_error(payload):
    with pytest.raises(SpecError):
        parse_tools_list(payload)


# ---------------------------------------------------------------------------------- shapes


def test_name_shapes_map_onto_collections():
    specs = parse_tools_list(
        [
            t("create_issue", {"title": S}, ["title"]),
            t("getIssue", {"issueId": S}, ["issueId"]),
            t("list_all_issues"),
            t("find-issues", {"query": S}, ["query"]),
            t("set_issue_status", {"issueId": S, "status": S}, ["issueId"]),
            t("archive_issue", {"issueId": S}, ["issueId"]),
            t("add_label_to_issue", {"issueId": S, "label": S}),
            t("list_categories"),
            t("get_weather", {"city": S}, ["city"]),
            t("summarize_thread", {"issueId": S}),
        ]
    )
    shapes = {s.spec.name: (s.op, s.collection) for s in classify(specs)}
    assert shapes == {
        "create_issue": ("create", "issues"),
        "getIssue": ("get", "issues"),
        "list_all_issues": ("list", "issues"),
        "find-issues": ("search", "issues"),
        "set_issue_status": ("update", "issues"),
        "archive_issue": ("delete", "issues"),
        "add_label_to_issue": ("create", "labels"),
        "list_categories": ("list", "categories"),
        "get_weather": (None, None),
        "summarize_thread": (None, None),
    }


def shapes_of(*tools, service=""):
    """Tool name -> (op, collection) of `tools` classified together."""
    return {s.spec.name: (s.op, s.collection) for s in classify(parse_tools_list(list(tools)), service)}


def test_a_trailing_tool_word_does_not_hide_the_verb():
    shapes = shapes_of(
        t("box_folder_create_tool", {"name": S}, ["name"]),
        t("box_folder_delete_tool", {"folder_id": S}, ["folder_id"]),
        t("box_file_delete_tool", {"file_id": S}, ["file_id"]),
        t("box_file_lock_tool", {"file_id": S}, ["file_id"]),
        service="box",
    )
    assert shapes == {
        "box_folder_create_tool": ("create", "folders"),
        "box_folder_delete_tool": ("delete", "folders"),
        "box_file_delete_tool": ("delete", "files"),
        "box_file_lock_tool": (None, None),  # locking is no CRUD operation
    }


def test_an_id_named_by_the_collections_last_words_is_its_own_unless_it_names_a_collection():
    shapes = shapes_of(
        t("kv_namespace_create", {"title": S}, ["title"]),
        t("kv_namespace_get", {"namespace_id": S}, ["namespace_id"]),
        t("list_files"),
        t("list_shared_link_files"),
        t("get_shared_link_file", {"file_id": S}, ["file_id"]),
    )
    assert shapes["kv_namespace_get"] == ("get", "kv_namespaces")
    # ``file_id`` names a file (``files`` is a collection), not one of the shared links
    assert shapes["get_shared_link_file"] == (None, None)


def test_a_verb_after_the_services_object_words_is_found_inside_the_name():
    shapes = shapes_of(
        t("create_folder", {"name": S}, ["name"]),
        t("web_link_create", {"url": S}, ["url"]),
        t("list_orders"),
        t("list_issues"),
        t("folder_set_description", {"folder_id": S, "description": S}, ["folder_id"]),
        t("web_link_get_by_id", {"web_link_id": S}, ["web_link_id"]),
        t("folder_list_tags", {"folder_id": S}, ["folder_id"]),
        t("cancel_all_orders"),
        t("prepare_query_tuning", {"params": S}, ["params"]),
        t("batch_create_issues", {"issues": {"type": "array"}}, ["issues"]),
    )
    assert shapes == {
        "create_folder": ("create", "folders"),
        "web_link_create": ("create", "web_links"),
        "list_orders": ("list", "orders"),
        "list_issues": ("list", "issues"),
        "folder_set_description": ("update", "folders"),
        "web_link_get_by_id": ("get", "web_links"),
        "folder_list_tags": ("list", "folder_tags"),
        # words before the verb that name no object of the service: a verb, not a noun
        "cancel_all_orders": (None, None),
        "prepare_query_tuning": (None, None),
        "batch_create_issues": (None, None),
    }


def test_info_details_rename_and_upload_are_crud_verbs():
    shapes = shapes_of(
        t("file_upload", {"file_name": S, "content": S}, ["file_name"]),
        t("file_info", {"file_id": S}, ["file_id"]),
        t("task_details", {"task_id": S}, ["task_id"]),
        t("file_rename", {"file_id": S, "new_name": S}, ["file_id", "new_name"]),
        t("pipelines_info", {"pipeline": S}, ["pipeline"]),
        t("doc_merge", {"doc_id": S, "other_doc_id": S}, ["doc_id"]),
        t("list_docs"),
    )
    assert shapes == {
        "file_upload": ("create", "files"),
        "file_info": ("get", "files"),
        "task_details": ("get", "tasks"),
        "file_rename": ("update", "files"),
        # one pipeline's info, not a list of pipelines; no id argument names it
        "pipelines_info": (None, None),
        "doc_merge": (None, None),
        "list_docs": ("list", "docs"),
    }


def test_an_id_named_by_the_collections_first_words_is_its_own():
    shapes = shapes_of(
        t("create_email_activity", {"subject": S}, ["subject"]),
        t("get_email_activity", {"email_id": S}, ["email_id"]),
        t("create_task_comment", {"text": S}, ["text"]),
        t("list_tasks"),
        t("delete_task_comment", {"task_id": S}, ["task_id"]),
        t("get_server_info", {"server_id": S}, ["server_id"]),
        t("set_ticket_status", {"ticket_id": S, "status": S}, ["ticket_id", "status"]),
        t("get_ticket_status", {"ticket_id": S}, ["ticket_id"]),
    )
    assert shapes["get_email_activity"] == ("get", "email_activities")
    # ``task_id`` names a task (``tasks`` is a collection), not one of its comments
    assert shapes["delete_task_comment"] == (None, None)
    assert shapes["get_server_info"] == ("get", "servers")  # a server's info
    # ticket statuses are never listed nor created: a ticket's status, not records with ticket ids
    assert shapes["get_ticket_status"] == shapes["set_ticket_status"] == (None, None)


def test_shipped_specs_group_tools_by_collection():
    cls = all_services()["issues"]
    assert cls.collections["issues"] == [
        "create_issue",
        "delete_issue",
        "get_issue",
        "list_issues",
        "search_issues",
        "update_issue",
    ]
    assert cls.collections["comments"] == ["add_comment", "list_comments"]
    assert all_services()["expenses"].collections["trips"] == ["create_trip", "get_trip", "list_trips"]


def test_args_models_are_typed_and_strict(issues):
    model = issues.tools["create_issue"].args_model
    fields = model.model_fields
    assert fields["title"].is_required() and not fields["assignee"].is_required()
    assert fields["title"].description == "one-line issue title"
    assert (
        issues.call("create_issue", {"title": "X", "projectKey": "P-1", "priority": "asap"})["error"]["code"]
        == 400
    )
    assert (
        issues.call("create_issue", {"title": "X", "projectKey": "P-1", "colour": "red"})["error"]["code"]
        == 400
    )
    assert issues.call("list_issues", {"limit": "many"})["error"]["code"] == 400


# ---------------------------------------------------------------------------------- CRUD


def test_create_then_get_update_delete(issues):
    created = issues.call(
        "create_issue", {"title": "Flaky login test", "projectKey": "WEB-1", "labels": ["ci"]}
    )
    issue = created["data"]["issue"]
    assert issue["status"] == "open" and issue["priority"] == "medium", "schema defaults apply"
    got = issues.call("get_issue", {"issueId": issue["id"]})
    assert got == {"success": True, "data": {"issue": issue}}
    updated = issues.call("update_issue", {"issueId": issue["id"], "status": "closed"})
    assert updated["data"]["issue"]["status"] == "closed" and updated["data"]["updated"] == ["status"]
    assert issues.call("update_issue", {"issueId": issue["id"]})["error"]["code"] == 400
    assert issues.call("delete_issue", {"issueId": issue["id"]})["data"] == {"deleted": issue["id"]}
    assert issues.call("get_issue", {"issueId": issue["id"]})["error"]["code"] == 404


def test_an_update_changes_only_what_it_is_given():
    # Box's update tool declares `requires_all_assignees_to_complete: bool = False`; an update of
    # the due date alone switched the flag off, so the reference "changed" it, the collateral check
    # let it be anything, and an agent that set it alone earned the reward (6 of 297 accepted
    # whole-library tasks of seeds 0-299, all through such defaults)
    cls = all_services()["box"]
    service = cls(cls.generate_state(random.Random(3)))
    task_id = next(k for k, v in service.state.tasks.items() if v.requires_all_assignees_to_complete)
    observation = service.call("box_task_update_tool", {"task_id": task_id, "due_at": "2026-06-28"})
    assert observation["data"]["updated"] == ["due_at"]
    assert service.state.tasks[task_id].requires_all_assignees_to_complete is True
    sent = service.call(
        "box_task_update_tool", {"task_id": task_id, "requires_all_assignees_to_complete": False}
    )
    assert sent["data"]["updated"] == ["requires_all_assignees_to_complete"], "a default sent is sent"
    assert service.state.tasks[task_id].requires_all_assignees_to_complete is False


def test_unknown_ids_are_404_and_missing_arguments_400(issues):
    for tool in ("get_issue", "update_issue", "delete_issue", "list_comments", "summarize_thread"):
        obs = issues.call(
            tool,
            {"issueId": "issue_999", "status": "closed"}
            if tool == "update_issue"
            else {"issueId": "issue_999"},
        )
        assert obs["error"]["code"] == 404, tool
        assert "issue_999" in obs["error"]["message"]
    assert (
        issues.call("add_comment", {"issueId": "nope", "body": "hi", "authorEmail": "a@b.c"})["error"]["code"]
        == 404
    )
    missing = issues.call("create_issue", {"projectKey": "WEB-1"})
    assert missing["error"]["code"] == 400 and "title" in missing["error"]["message"]
    assert issues.call("get_issue", {})["error"]["code"] == 400


def test_search_is_case_insensitive_substring_and_list_filters(issues):
    issues.call(
        "create_issue", {"title": "Crash in PDF Export", "projectKey": "DOC-7", "assignee": "Noor Haddad"}
    )
    hits = issues.call("search_issues", {"query": "pdf export"})["data"]["issues"]
    assert [h["title"] for h in hits] == ["Crash in PDF Export"]
    assert issues.call("search_issues", {"query": "  "})["error"]["code"] == 400
    listed = issues.call("list_issues", {"assignee": "Noor Haddad"})["data"]["issues"]
    assert listed and all(i["assignee"] == "Noor Haddad" for i in listed)
    assert len(issues.call("list_issues", {"limit": 1})["data"]["issues"]) == 1
    issue_id = next(iter(issues.state.issues))
    issues.call("add_comment", {"issueId": issue_id, "body": "repro attached", "authorEmail": "a@b.c"})
    comments = issues.call("list_comments", {"issueId": issue_id})["data"]["comments"]
    assert comments and {c["issueId"] for c in comments} == {issue_id}


def test_generated_state_is_seeded_sized_and_referentially_sound():
    cls = all_services()["expenses"]
    state = cls.generate_state(random.Random(3))
    assert state == cls.generate_state(random.Random(3))
    for name in ("trips", "expenses"):
        assert 3 <= len(getattr(state, name)) <= 6
    assert all(e.tripId in state.trips for e in state.expenses.values())
    trip = next(iter(state.trips.values()))
    assert "@" in trip.travelerEmail and trip.startDate <= trip.endDate
    assert trip.travelerEmail.split("@")[0] == trip.travelerName.lower().replace(" ", ".")


# ---------------------------------------------------------------------------------- simulated


def test_simulated_tools_are_flagged_deterministic_and_schema_conformant():
    cls = all_services()["expenses"]
    assert {n for n, d in cls.tools.items() if d.simulated} == {"convert_currency_live", "lookup_per_diem"}
    assert not any(d.writes for d in cls.tools.values() if d.simulated)
    specs = {s.name: s for s in parse_tools_list(EXPENSES)}
    a, b = (cls(cls.generate_state(random.Random(1))) for _ in range(2))
    for amount in (1.5, 20.0, 999.99):
        args = {"amount": amount, "fromCurrency": "EUR", "toCurrency": "JPY"}
        before = a.state.model_dump()
        first, second = a.call("convert_currency_live", args), b.call("convert_currency_live", dict(args))
        assert first == second and first["success"]
        assert a.state.model_dump() == before, "simulated tools do not change the state"
        jsonschema.validate(first["data"], specs["convert_currency_live"].output_schema)
    cities = [a.call("lookup_per_diem", {"city": c})["data"] for c in ("Lisbon", "Lima", "Cork")]
    for data in cities:
        jsonschema.validate(data, specs["lookup_per_diem"].output_schema)
    assert len({d["policyRef"] for d in cities}) == 3


def test_offline_world_model_covers_schema_kinds_and_falls_back():
    schema = {
        "type": "object",
        "properties": {
            "ok": {"type": "boolean"},
            "count": {"type": "integer", "minimum": 5, "maximum": 7},
            "score": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
            "kind": {"enum": ["a", "b"]},
            "when": {"type": "string", "format": "date"},
            "tags": {"type": "array", "items": {"type": "string", "maxLength": 4}, "minItems": 2},
            "owner": {
                "type": "object",
                "properties": {"email": S, "age": {"type": ["integer", "null"]}},
                "required": ["email"],
                "additionalProperties": False,
            },
            "note": {"type": ["string", "null"], "minLength": 3},
        },
        "required": ["ok", "count", "score", "kind", "when", "tags", "owner", "note"],
        "additionalProperties": False,
    }
    model = OfflineWorldModel()
    assert isinstance(model, WorldModel)
    for i in range(40):
        response = model.simulate("svc", "analyze", {"i": i}, schema)
        jsonschema.validate(response, schema)
        assert response == model.simulate("svc", "analyze", {"i": i}, copy.deepcopy(schema))
    fallback = model.simulate("svc", "do_magic", {"x": 1}, None)
    assert fallback["simulated"] is True and isinstance(fallback["result"], str)
    assert fallback == model.simulate("svc", "do_magic", {"x": 1}, None)
    others = {model.simulate("svc", "do_magic", {"x": x}, None)["result"] for x in range(20)}
    assert len(others) > 10, "different arguments give different responses"


def test_custom_world_model_receives_validated_arguments():
    calls = []
    states = []

    class Recorder:
        def simulate(self, service, tool, arguments, output_schema, *, state=None):
            calls.append((service, tool, arguments, output_schema))
            states.append(state)
            return {"answer": 42}

    cls = synthesize_service(
        "oracle", [t("ask_oracle", {"from": S, "question": S}, ["question"])], Recorder()
    )
    service = cls(cls.generate_state(random.Random(0)))
    assert service.call("ask_oracle", {"question": "why?", "from": "me"}) == {
        "success": True,
        "data": {"answer": 42},
    }
    assert calls == [("oracle", "ask_oracle", {"from": "me", "question": "why?"}, None)]
    assert states == [service.state.model_dump(mode="json")], "the world model sees the dumped state"
    assert service.call("ask_oracle", {"from": "me"})["error"]["code"] == 400


def test_simulated_read_tool_with_one_typed_argument_gets_a_code_hop():
    cls = all_services()["expenses"]
    hop = next(link for link in cls.links() if link.name == "lookup_per_diem_lookup")
    assert isinstance(hop, Hop) and (hop.consumes, hop.produces) == ("city", "code")
    plan = hop.plant(cls.generate_state(random.Random(0)), random.Random(0), "Lisbon")
    schema = parse_tools_list(EXPENSES)[-1].output_schema
    expected = cls.world_model.simulate("expenses", "lookup_per_diem", {"city": "Lisbon"}, schema)
    assert plan.output == expected["policyRef"] and "Lisbon" not in plan.phrase


def test_a_hop_reads_its_value_where_the_seeded_history_puts_it():
    # Box's template lookup answers an open object; the seeded history (the episode's world before
    # the task) once held a sampled object there, and a hop asked about its arguments found no
    # value where the world model puts it: the whole run stopped with a KeyError at seed 1055
    output = {"type": "object", "additionalProperties": True}
    cls = synthesize_service(
        "templates_t", [t("get_template_by_name", {"template_name": S}, ["template_name"], output)]
    )
    (hop,) = cls.links()
    assert isinstance(hop, Hop)
    state = cls.generate_state(random.Random(0))
    (seeded,) = state.simulated.records["template_name"]
    plan = hop.plant(state, random.Random(0), seeded.arguments["template_name"])
    assert plan.output == seeded.response["result"]


def test_a_simulated_answer_without_the_value_a_hop_reveals_is_a_planting_error():
    class Silent:
        def simulate(self, service, tool, arguments, output_schema, *, state=None):
            return {"simulated": True}

    cls = synthesize_service(
        "templates_s", [t("get_template_by_name", {"template_name": S}, ["template_name"])], Silent()
    )
    (hop,) = cls.links()
    with pytest.raises(
        PlantingError, match="'get_template_by_name' of templates_s answered without a value at result"
    ):
        hop.plant(cls.generate_state(random.Random(0)), random.Random(0), "Quarterly Review")


# ---------------------------------------------------------------------------------- reports


def test_synthesis_reports_of_the_shipped_specs():
    issues_report = synthesis_report(all_services()["issues"])
    assert (issues_report.tools, issues_report.simulated_tools) == (11, ["summarize_thread"])
    assert issues_report.simulated_share == pytest.approx(1 / 11, abs=1e-4)
    expenses_report = synthesis_report(all_services()["expenses"])
    assert expenses_report.simulated_tools == ["convert_currency_live", "lookup_per_diem"]
    assert expenses_report.simulated_share == pytest.approx(2 / 11, abs=1e-4)
    assert synthesis_report(all_services()["calendar"]).simulated_share == 0.0
    with pytest.raises(ValueError):
        type(issues_report).model_validate({**issues_report.model_dump(), "tools": "11"})


def test_links_cover_several_value_types():
    for name in ("issues", "expenses"):
        links = all_services()[name].links()
        hops = [x for x in links if isinstance(x, Hop)]
        actions = [x for x in links if not isinstance(x, Hop)]
        assert len(hops) >= 3 and len(actions) >= 2, name
        assert len({x.consumes for x in links}) >= 3 and len({h.produces for h in hops}) >= 2


def test_searches_pick_on_field_values_what_they_would_pick_on_dumped_rows():
    """A list/search dumps only the records it returns (flat records are matched on their fields);
    it must select exactly what matching every dumped row selects."""
    from envpipeline.services.base import text_hit
    from envpipeline.services.mcp_import import _matches, _selected_rows
    from envpipeline.services.mcp_spec import dump_record, texts

    for name in ("issues", "expenses"):
        cls = all_services()[name]
        state = cls.generate_state(random.Random(5))
        for collection in cls.collections:
            records = getattr(state, collection)
            dumped = [dump_record(r) for r in records.values()]
            words = sorted({w.lower()[:4] for row in dumped for t in texts(row) for w in t.split() if w})
            fields = sorted({k for row in dumped for k, v in row.items() if isinstance(v, (str, int, bool))})
            record_cls = type(next(iter(records.values())))
            for query in [None, *words[:12], "no-such-text"]:
                for field in [None, *fields]:
                    filters = {field: dumped[0][field]} if field else {}
                    naive = [
                        row
                        for row in dumped
                        if _matches(row, filters) and (query is None or text_hit(query, tuple(texts(row))))
                    ]
                    assert _selected_rows(records, record_cls, filters, query) == naive, (name, query, field)
