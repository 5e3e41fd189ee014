"""Imported services round-trip the library's own schemas and keep simulated state."""

from __future__ import annotations

import random

import pytest

from envpipeline.services.contract import check_service
from envpipeline.services.mcp_import import synthesis_report, synthesize_service
from envpipeline.services.mcp_store import is_write
from envpipeline.services.registry import all_services

S = {"type": "string"}


def exported_tools(service_cls):
    """The tools of one service as `services list --json` exports them, as an MCP tools/list."""
    return [
        {
            "name": t.name,
            "description": schema["description"],
            "inputSchema": schema["parameters"],
        }
        for t in service_cls.tools.values()
        for schema in [t.json_schema(service_cls.name)["function"]]
    ]


@pytest.mark.parametrize("name", sorted(all_services()))
def test_every_library_service_schema_re_imports_and_passes_the_contract(name):
    tools = exported_tools(all_services()[name])
    cls = synthesize_service(f"rt_{name}", {"tools": tools})
    assert len(cls.tools) == len(tools)
    assert check_service(cls) == []


def test_round_trip_keeps_integer_arguments_integers():
    tools = [t for svc in all_services().values() for t in exported_tools(svc)]
    ints = [
        (t["name"], p)
        for t in tools
        for p, s in t["inputSchema"].get("properties", {}).items()
        if "integer" in str(s)
    ]
    assert ints, "the library has integer arguments to round-trip"


def tool(name, properties, required=(), read_only=None):
    spec = {
        "name": name,
        "description": name,
        "inputSchema": {"type": "object", "properties": properties, "required": list(required)},
    }
    if read_only is not None:
        spec["annotations"] = {"readOnlyHint": read_only}
    return spec


STATUS_SPEC = [
    tool(
        "set_ticket_status",
        {"ticketId": S, "status": {"type": "string", "enum": ["open", "closed"]}},
        ["ticketId", "status"],
    ),
    tool("get_ticket_status", {"ticketId": S}, ["ticketId"]),
]


def test_simulated_write_then_read_answers_what_was_written():
    cls = synthesize_service("desk", {"tools": STATUS_SPEC})
    assert synthesis_report(cls).simulated_tools == ["get_ticket_status", "set_ticket_status"]
    service = cls(cls.generate_state(random.Random(2)))
    ticket = service.state.simulated.known["ticket_id"][0]
    first = service.call("get_ticket_status", {"ticketId": ticket})
    assert first == service.call("get_ticket_status", {"ticketId": ticket}), "the same read twice agrees"
    for status in ("closed", "open", "closed"):
        assert service.call("set_ticket_status", {"ticketId": ticket, "status": status})["success"]
        assert service.call("get_ticket_status", {"ticketId": ticket})["data"]["status"] == status
    other = service.state.simulated.known["ticket_id"][1]
    assert "status" not in service.call("get_ticket_status", {"ticketId": other})["data"], (
        "writes stay per ticket"
    )
    dumped = service.state.model_dump(mode="json")["simulated"]["records"]["ticket_status"]
    assert [c["arguments"].get("status") for c in dumped if c["tool"] == "set_ticket_status"][-3:] == [
        "closed",
        "open",
        "closed",
    ]


def test_simulated_unknown_ids_are_404_and_writes_change_state_reads_do_not():
    cls = synthesize_service("desk", {"tools": STATUS_SPEC})
    assert cls.tools["set_ticket_status"].writes and not cls.tools["get_ticket_status"].writes
    service = cls(cls.generate_state(random.Random(2)))
    assert service.call("get_ticket_status", {"ticketId": "nope"})["error"]["code"] == 404
    before = service.state.model_dump(mode="json")
    service.call("get_ticket_status", {"ticketId": service.state.simulated.known["ticket_id"][0]})
    assert service.state.model_dump(mode="json") == before
    assert check_service(cls) == []


def test_read_only_hint_overrides_the_verb():
    specs = [
        tool("publish_preview", {"draftId": S}, ["draftId"], read_only=True),
        tool("fetch_and_store", {"url": S}, ["url"], read_only=False),
    ]
    cls = synthesize_service("hints", {"tools": specs})
    assert not cls.tools["publish_preview"].writes and cls.tools["fetch_and_store"].writes


def test_a_vendor_prefixed_or_destructive_simulated_tool_is_a_write():
    """The verb is read after the service's prefix (``jira_delete_issue`` deletes), a
    ``destructiveHint`` makes a write of a name without a known verb, and an HTTP method before a
    read verb does not (``API-post-search`` searches). Each such write is recorded; a read is not."""
    destructive = tool("jira_transition_issue", {"issueKey": S, "transition": S}, ["issueKey"])
    destructive["annotations"] = {"destructiveHint": True}
    search = tool("API-post-search", {"query": S})
    search["annotations"] = {"destructiveHint": True}  # as Notion's server marks every POST
    specs = [
        tool("jira_delete_issue", {"issueKey": S}, ["issueKey"]),
        tool("jira_get_issue", {"issueKey": S}, ["issueKey"]),
        tool("get_open_position", {"symbol": S}, ["symbol"]),
        destructive,
        search,
    ]
    cls = synthesize_service("jira", {"tools": specs})
    writes = {n for n, d in cls.tools.items() if d.writes}
    assert writes == {"jira_delete_issue", "jira_transition_issue"}
    assert all(d.simulated for d in cls.tools.values())
    service = cls(cls.generate_state(random.Random(4)))
    before = service.state.model_dump(mode="json")
    assert service.call("API-post-search", {"query": "login bug"})["success"]
    assert service.state.model_dump(mode="json") == before, "a search records nothing"

    def deletes() -> list[dict]:
        records = service.state.model_dump(mode="json")["simulated"]["records"]
        return [c["arguments"] for f in records.values() for c in f if c["tool"] == "jira_delete_issue"]

    seeded = deletes()  # the world's history before the episode
    assert service.call("jira_delete_issue", {"issueKey": "PROJ-7"})["success"]
    assert deletes() == [*seeded, {"issueKey": "PROJ-7"}]
    assert check_service(cls) == []


def test_the_shipped_corpus_records_its_prefixed_deletes_and_updates():
    """Simulated tools of the shipped corpus that delete, update, buy or kill under a vendor prefix
    write, and so serve no lookup hop (a purchase is not a way to look a value up)."""
    library = all_services()
    for service, tool_name in [
        ("jira", "jira_delete_issue"),
        ("jira", "jira_update_issue"),
        ("google_meet", "google_meet_delete_meeting"),
        ("todoist", "todoist_update_task"),
        ("spotify", "spotify_remove_user_saved_tracks"),
        ("twilio", "twilio_purchase_phone_number"),  # verbs no spec marks (`ACTION_WORDS`)
        ("cloudflare_browser", "kill_browser_session"),
        ("freshdesk", "freshdesk_bulk_create_agents"),  # a verb after "bulk" or "batch"
        ("jira", "jira_batch_create_issues"),
        ("salesforce", "bulk_delete_records"),
    ]:
        definition = library[service].tools[tool_name]
        assert definition.simulated and definition.writes, f"{service}.{tool_name}"
        assert f"{tool_name}_lookup" not in {link.name for link in library[service].links()}
        assert f"{tool_name}_source" not in {link.name for link in library[service].links()}
    assert not library["jira"].tools["jira_batch_get_changelogs"].writes


def test_a_name_that_opens_with_a_noun_is_read_through_its_description():
    """A simulated tool whose name opens with a noun (``reddit_upvote``, ``box_file_lock_tool``,
    Outlook's ``outlookMail_send_draft``, Heroku's ``ps_restart``) writes when its description or
    a verb inside its name says so: it is recorded and serves no lookup and no chain start (before,
    70 corpus writes of this kind were reads; chains asked the agent to upvote a post or push files
    to look a value up). Reads of the same build stay reads."""
    library = all_services()
    for service, tool_name in [
        ("reddit", "reddit_upvote"),  # "Upvotes a post."
        ("box", "box_file_lock_tool"),  # "Define a lock on a file ...": the verb inside the name
        ("box", "box_shared_link_file_remove_tool"),
        ("outlook", "outlookMail_send_draft"),
        ("heroku_platform", "ps_restart"),
        ("github_legacy", "push_files"),
        ("spotify", "spotify_follow_playlist"),
        ("todoist", "todoist_complete_task"),  # "Mark a task as complete ..."
        ("freshdesk", "freshdesk_restore_ticket"),
        ("twilio", "twilio_make_call"),  # "Initiate a phone call ..."
    ]:
        definition = library[service].tools[tool_name]
        assert definition.simulated and definition.writes, f"{service}.{tool_name}"
        names = {link.name for link in library[service].links()}
        assert {f"{tool_name}_lookup", f"{tool_name}_source"}.isdisjoint(names), f"{service}.{tool_name}"
    for service, tool_name in [
        ("azure_devops", "pipelines_run"),  # "Retrieve pipeline run data ..."
        ("cloudflare_graphql", "graphql_complete_schema"),  # "Fetch the complete ... schema"
        ("cloudflare_dex", "dex_test_statistics"),  # "Analyze Cloudflare DEX Test Results ..."
        ("box", "box_users_locate_by_email_tool"),  # "Locate a user by their email address."
    ]:
        assert not library[service].tools[tool_name].writes, f"{service}.{tool_name}"


def test_is_write_reads_a_noun_first_name_through_its_description():
    assert is_write("reddit_upvote", None, frozenset({"reddit"}), "Upvotes a post.")
    assert not is_write("pipelines_run", None, frozenset(), "Retrieve pipeline run data for a project.")
    assert is_write("pipelines_run", None)  # no description: the verb inside the name
    assert not is_write("dex_statistics", None, frozenset(), "Statistics of a test.")  # no verb at all
    assert is_write("dex_statistics", {"destructiveHint": True}, frozenset(), "Analyze the results.")
    assert not is_write("file_lock", {"readOnlyHint": True})  # the spec's hint decides


def test_simulated_list_answers_with_ids_the_get_accepts():
    list_out = {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "items": {"type": "object", "properties": {"threadId": S, "subject": S}},
            }
        },
    }
    specs = [
        {**tool("poll_inbox", {"all": {"type": "boolean"}}), "outputSchema": list_out},
        tool("peek_thread", {"threadId": S}, ["threadId"]),
    ]
    cls = synthesize_service("inbox", {"tools": specs})
    service = cls(cls.generate_state(random.Random(4)))
    items = service.call("poll_inbox", {"all": True})["data"]["items"]
    assert items
    for item in items:
        assert service.call("peek_thread", {"threadId": item["threadId"]})["success"]
    assert check_service(cls) == []


def test_all_simulated_services_depend_on_their_seed():
    cls = synthesize_service(
        "clock",
        {"tools": [tool("convert_time", {"time": S, "target_timezone": S}, ["time", "target_timezone"])]},
    )
    a = cls.generate_state(random.Random(1)).model_dump(mode="json")
    assert a != cls.generate_state(random.Random(2)).model_dump(mode="json")
    assert check_service(cls) == []
