"""Tools outside the curated library carry a value in more of their arguments
(`mcp_carriers.carrier`): the id of a record of a typed collection (planted with that id), an
identifier or free text by name, the name of a thing, a string inside a union, an optional
argument when no required one can; locators and programs carry nothing. Simulated tools, creates
and updates with no typed field use it. An open output schema is answered with a ``result``
string a hop can reveal; a record found in a listing is confirmed through its collection's own get
tool; the whole library's draws weigh services by their tools."""

from __future__ import annotations

import random

from envpipeline.agents.environment import canonical_order
from envpipeline.compose.author import ComposeConfig, draft_task
from envpipeline.compose.variants import links_of, service_weight
from envpipeline.models.task import JSON_TEMPLATE, LIST_TEMPLATE, Binding, fill_template
from envpipeline.rubric import pass_vector
from envpipeline.services.library.imported import load_spec
from envpipeline.services.links import (
    ActionPlan,
    HopPlan,
    Source,
    execute_planned,
    read_path,
    resolve_arguments,
)
from envpipeline.services.mcp_carriers import field_types, scope_arguments
from envpipeline.services.mcp_import import _collections, classify
from envpipeline.services.mcp_spec import CollectionInfo, parse_tools_list
from envpipeline.services.registry import all_services, get_service
from envpipeline.services.worldmodel import OfflineWorldModel, first_string_path

VALUE = "REF-4411"


def _plan(service: str, link_name: str, value: str = VALUE, seed: int = 1):
    cls = get_service(service)
    link = next(link for link in cls.links() if link.name == link_name)
    state = cls.generate_state(random.Random(seed))
    plan = link.plant(state, random.Random(seed), value)
    return cls(canonical_order(state)), plan


def _passes(service, plan: ActionPlan, name: str) -> bool:
    criteria = [c.model_copy(update={"service": name}) for c in plan.criteria]
    return all(pass_vector(criteria, {name: service.state}))


def _only_the_carried_record_passes(name: str, link: str, tool: str, arg: str, collection: str) -> None:
    """The link carries VALUE in `arg`, a record of `collection` planted with that id; the call on
    another record of the collection succeeds but fails the criteria, the planned call passes them."""
    service, plan = _plan(name, link)
    assert isinstance(plan, ActionPlan)
    (call,) = plan.calls
    records = getattr(service.state, collection)
    assert call.arguments[arg] == VALUE and VALUE in records
    other = next(rid for rid in sorted(records) if rid != VALUE)
    assert not _passes(service, plan, name)
    assert service.call(tool, {**call.arguments, arg: other})["success"]
    assert not _passes(service, plan, name)
    assert service.call(tool, call.arguments)["success"]
    assert _passes(service, plan, name)


def test_a_write_on_a_referenced_record_plants_it_and_checks_that_id():
    """Docker's stop_container takes the id of a container (a typed collection): the container is
    planted with the carried id, and stopping another container fails the criterion."""
    _only_the_carried_record_passes(
        "docker", "stop_container_call", "stop_container", "container_id", "containers"
    )


def test_an_optional_argument_carries_when_no_required_one_can():
    """Plane's cycle(action, cycle_id=...): the tool's own id carries the value (not project_id,
    listed first), and the required action is a stated constant."""
    service, plan = _plan("plane", "cycle_call")
    (call,) = plan.calls
    assert call.inputs == {"cycle_id": "{value}"} and call.arguments["cycle_id"] == VALUE
    assert "action" in call.arguments and f"action {call.arguments['action']!r}" in plan.phrase
    assert not _passes(service, plan, "plane")
    assert service.call("cycle", call.arguments)["success"]
    assert _passes(service, plan, "plane")


def test_a_simulated_read_names_the_argument_that_takes_the_value():
    """The request says which argument of Box's text extraction takes the value (a tool may take
    several ids: Plane's cycle), so an agent does not have to guess."""
    _, plan = _plan("box", "box_file_text_extract_tool_lookup")
    assert "with its file id set to that reference code" in plan.phrase
    assert plan.relation.format(of="'X'").endswith("gives for 'X' as its file id")


def test_a_union_with_a_string_and_a_thing_name_carry():
    """telegram's chat_id (integer or string) carries a code; Heroku's app, a name (a title)."""
    link = next(link for link in get_service("telegram").links() if link.name == "archive_chat_call")
    assert link.consumes == "code"
    hop = next(link for link in get_service("heroku_platform").links() if link.name == "pg_info_lookup")
    assert hop.consumes == "title"


def test_locators_and_programs_carry_nothing():
    """A URL, a path, a selector or a program to run holding a reference code would be nonsense.
    (Such a read may still start a chain asked about a URL or a path the request states: a source,
    `mcp_sources`, carries no value.)"""
    for service, tool in [("web_fetch", "fetch"), ("filesystem_mcp", "read_media_file")]:
        links = get_service(service).links()
        names = [link.name for link in links if not isinstance(link, Source)]
        assert not any(name.startswith(tool) for name in names), names
    fetch = next(link for link in get_service("web_fetch").links() if link.name == "fetch_source")
    assert isinstance(fetch, Source)
    (call,) = fetch.plant(get_service("web_fetch").generate_state(random.Random(1)), random.Random(1)).calls
    assert call.arguments["url"].startswith("http") and not call.inputs
    selectors = [
        n.name for n in get_service("puppeteer_browser").links() if n.name.startswith("puppeteer_click")
    ]
    assert selectors == []  # nor does a click on a stated selector start a chain: it reads nothing
    _, plan = _plan("blender", "execute_blender_code_call")  # the program a tool runs: not the code
    assert plan.calls[0].inputs == {"user_prompt": "{value}"}


def test_an_open_output_schema_is_answered_with_a_result_a_hop_reveals():
    """Box answers with an open object; the offline world model fills its ``result``, so extracting
    a file's text is a hop, and another file gets another answer. (Locking a file answers so too,
    but it writes: no hop, `test_mcp_roundtrip_state`.)"""
    schema = {"type": "object", "additionalProperties": True}
    assert first_string_path(schema) == ("result",)
    answer = OfflineWorldModel().simulate("box", "box_file_text_extract_tool", {"file_id": "F1"}, schema)
    assert isinstance(answer["result"], str)
    assert first_string_path({"type": "object", "additionalProperties": {"type": "integer"}}) is None
    service, plan = _plan("box", "box_file_text_extract_tool_lookup")
    assert isinstance(plan, HopPlan)
    (observation,) = execute_planned(service, plan.calls, VALUE)
    assert str(read_path(observation["data"], plan.calls[0].reveals or ())) == plan.output
    assert VALUE in service.state.files
    assert not service.call("box_file_text_extract_tool", {"file_id": "F-0001"})["success"]  # no such file
    other = next(f for f in sorted(service.state.files) if f != VALUE)
    answer = service.call("box_file_text_extract_tool", {"file_id": other})
    assert answer["success"] and answer["data"]["result"] != plan.output


def test_whole_library_draws_weigh_services_by_their_tools():
    """Over the whole library a service of many tools is drawn more often than one of a few, so
    that its references reach them."""
    library = all_services()
    big, small = "box", "time_zones"
    assert service_weight(library[big]) > 10 * service_weight(library[small])
    config = ComposeConfig(library_scope="all", service_draws=1)
    walks = [set(draft_task(seed, config).walk) for seed in range(60)]
    assert sum(big in w for w in walks) > 3 * max(1, sum(small in w for w in walks))


def test_a_create_with_no_typed_field_carries_a_referenced_record():
    """Box's file_tag_add(file_id, tag): the tag is created on the file whose id is carried (the
    file planted with it); a tag added to another file fails the criterion."""
    _only_the_carried_record_passes(
        "box", "box_file_tag_add_tool_with_file_id", "box_file_tag_add_tool", "file_id", "files"
    )


def test_an_update_with_no_typed_field_writes_the_value_into_text():
    """Box's file_set_description(file_id, description): the carried code becomes the description
    of a named file; writing it on another file fails."""
    service, plan = _plan("box", "box_file_set_description_tool_description")
    (call,) = plan.calls
    assert call.arguments["description"] == VALUE and call.inputs == {"description": "{value}"}
    rid = call.arguments["file_id"]
    assert f"'{rid}'" in plan.phrase
    other = next(f for f in sorted(service.state.files) if f != rid)
    assert service.call("box_file_set_description_tool", {**call.arguments, "file_id": other})["success"]
    assert not _passes(service, plan, "box")
    assert service.call("box_file_set_description_tool", call.arguments)["success"]
    assert _passes(service, plan, "box")


def test_a_listing_hop_is_confirmed_through_the_collections_own_get_tool():
    """Outside the curated services a record found in a listing by value can be opened with its
    collection's get tool whatever its name (Box's ``..._get_job_by_id_tool``); a hop that reveals
    the id gets no such variant (opening by the id just found to read it confirms nothing)."""
    hops, _ = links_of(get_service("box"))
    names = [h.name for h in hops]
    variant = next(h for h in hops if h.name.endswith("_via_box_docgen_get_job_by_id_tool"))
    assert not any(n.endswith("_to_id_via_box_docgen_get_job_by_id_tool") for n in names)
    cls = get_service("box")
    state = cls.generate_state(random.Random(2))
    value = "REF-7714" if variant.consumes == "code" else "Quarterly Ledger Maple"
    plan = variant.plant(state, random.Random(2), value)
    assert plan.calls[-1].tool == "box_docgen_get_job_by_id_tool" and plan.calls[-1].bind
    observations = execute_planned(cls(canonical_order(state)), plan.calls, value)
    assert all(o["success"] for o in observations)
    assert str(read_path(observations[-1]["data"], plan.calls[-1].reveals or ())) == plan.output


def test_a_record_the_curated_rule_types_no_field_of_is_typed_by_name():
    """Close's call activities have a note and no typed field: the note is a title, so the get
    tool reveals it and the search finds the activity by it; ids, references, URLs and numbers
    stay untyped."""
    cls = get_service("close_crm")
    assert field_types(_info("close_crm", "call_activities")) == {"title": "note"}
    service, plan = _plan("close_crm", "close_get_call_activity_to_note")
    assert isinstance(plan, HopPlan)
    (observation,) = execute_planned(service, plan.calls, VALUE)
    assert read_path(observation["data"], plan.calls[0].reveals or ()) == plan.output
    names = [link.name for link in cls.links()]
    assert "close_search_call_activities_note_to_id" in names
    typed = field_types(_info("box", "web_links"))
    assert "url" not in typed.values() and "parent_folder_id" not in typed.values()


def _info(service: str, collection: str) -> CollectionInfo:
    """One collection of a corpus service, as the synthesis derives it."""
    shapes = classify(parse_tools_list(load_spec(f"corpus/{service}.json")), service)
    return _collections(service, shapes)[collection]


def test_a_hop_never_reveals_a_value_drawn_from_a_few():
    """An enum, a constant, a status or a currency is guessed without the call: a simulated read
    reveals the first string that could be anything, and a read with no such string is no hop
    (MongoDB's `disconnect` answers 'removed' or 'disconnected'; `explain` names one of three
    methods)."""
    outcome = {"type": "string", "enum": ["removed", "disconnected"]}
    schema = {
        "type": "object",
        "properties": {"outcome": outcome, "status": {"type": "string"}, "ticket": {"type": "string"}},
    }
    assert first_string_path(schema) == ("ticket",)
    assert first_string_path({"type": "object", "properties": {"outcome": outcome}}) is None
    assert first_string_path(outcome) is None
    assert (
        first_string_path({"type": "object", "properties": {"kind": {"const": "x", "type": "string"}}})
        is None
    )
    names = {link.name for link in all_services()["mongodb_mcp"].links()}
    assert "connect_lookup" in names
    assert not {"disconnect_lookup", "explain_lookup"} & names


def test_a_list_of_free_strings_carries_the_value_as_its_one_item():
    """Spotify's save_tracks(track_ids: [...]) carries the code as the one track id: the request
    says so, the reference (and its exported replay) fills a one-item list, and saving another
    track fails the criterion."""
    service, plan = _plan("spotify", "spotify_save_tracks_for_current_user_call")
    assert isinstance(plan, ActionPlan)
    (call,) = plan.calls
    assert call.arguments["track_ids"] == [VALUE] and call.inputs == {"track_ids": LIST_TEMPLATE}
    assert "as the only item of its track ids" in plan.phrase
    assert Binding(step=0, path=["result"], template=LIST_TEMPLATE).fill(VALUE) == [VALUE]
    assert resolve_arguments(call, VALUE, [])["track_ids"] == [VALUE]
    assert service.call("spotify_save_tracks_for_current_user", {"track_ids": ["REF-0001"]})["success"]
    assert not _passes(service, plan, "spotify")
    assert service.call("spotify_save_tracks_for_current_user", call.arguments)["success"]
    assert _passes(service, plan, "spotify")
    # a read takes its list the same way: Google Maps' distance matrix from one origin, a city
    _, hop = _plan("google_maps_legacy", "maps_distance_matrix_lookup", "Lisbon")
    assert isinstance(hop, HopPlan) and hop.calls[0].arguments["origins"] == ["Lisbon"]


def test_a_list_of_paths_carries_nothing():
    names = {link.name for link in get_service("obsidian").links()}
    assert "obsidian_batch_get_file_contents_lookup" not in names  # filepaths: a list of paths
    names = {link.name for link in get_service("playwright_browser").links()}
    assert "browser_file_upload_call" not in names  # paths


def test_a_property_of_an_object_argument_carries_where_no_argument_can():
    """Neon's tools take everything in one ``params`` object: run_sql carries the code in
    ``params.projectId``, its other required property stated (the SQL); the binding template is
    JSON around the value, so the reference, Binding.fill and the exported replay build the same
    object; running it on another project fails the criterion."""
    service, plan = _plan("neon_postgres", "run_sql_call")
    assert isinstance(plan, ActionPlan)
    (call,) = plan.calls
    params = call.arguments["params"]
    assert params["projectId"] == VALUE and set(params) == {"projectId", "sql"}
    template = call.inputs["params"]
    assert template.startswith(JSON_TEMPLATE) and fill_template(template, VALUE) == params
    assert (
        "with the project id in its params set to" in plan.phrase
        and f"params sql {params['sql']!r}" in plan.phrase
    )
    other = {**params, "projectId": "REF-0001"}
    assert service.call("run_sql", {"params": other})["success"]
    assert not _passes(service, plan, "neon_postgres")
    assert service.call("run_sql", call.arguments)["success"]
    assert _passes(service, plan, "neon_postgres")
    _, hop = _plan("neon_postgres", "describe_project_lookup")
    assert isinstance(hop, HopPlan) and hop.calls[0].arguments == {"params": {"projectId": VALUE}}
    assert "as the project id in its params" in hop.relation


def test_a_service_scope_carries_only_where_nothing_else_can():
    """Nearly every GitHub tool requires ``owner`` and ``repo``: where a call works, not what it
    makes. Deleting a file carries the value in its commit message and a branch is created named
    after it, the owner and the repository stated; merging a pull request (a number, nothing else
    to carry) still carries the owner. The scopes type no record field for field hops either."""
    shapes = classify(parse_tools_list(load_spec("corpus/github_mcp.json")), "github_mcp")
    assert {"owner", "repo"} <= scope_arguments(shapes)
    _, plan = _plan("github_mcp", "delete_file_call")
    (call,) = plan.calls
    assert call.inputs == {"message": "{value}"} and call.arguments["message"] == VALUE
    assert {"owner", "repo"} <= set(call.arguments) and "(owner '" in plan.phrase
    links = {link.name: link for link in get_service("github_mcp").links()}
    assert "create_branch_with_branch" in links and "create_branch_with_owner" not in links
    assert links["merge_pull_request_call"].consumes == "person"
