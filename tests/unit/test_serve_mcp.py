"""`envpipeline serve-mcp`: an accepted composed task served over MCP, driven by the official client.

Tool names are the provider-safe forms (`safe_tool_name`: ``calendar__update_event``), each client
session has its own state, ``reset`` and ``score`` drive an episode, and arguments the service
rejects (missing, mistyped) are the 400 observation the SFT data teaches.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client, StdioServerParameters

from envpipeline.cli import main
from envpipeline.compose.recording import record_verified
from envpipeline.export.mcp_serve import EPISODE_META, RESET_TOOL, SCORE_TOOL, create_task_server, serve_http
from envpipeline.export.tool_names import VALID_TOOL_NAME, original_tool_name, safe_tool_name
from envpipeline.models.task import TaskRecord
from envpipeline.services.links import read_path

REPO = Path(__file__).resolve().parents[2]


async def solve_over_mcp(client: Client, task: TaskRecord, meta: dict | None = None) -> None:
    """Run the reference solution through MCP tool calls (bindings read from structured content)."""
    observations: list[dict] = []
    for step in task.reference_solution:
        arguments = dict(step.arguments)
        for name, binding in step.bindings.items():
            value = read_path(observations[binding.step]["data"], binding.path)
            arguments[name] = value if binding.template == "{value}" else binding.template.format(value=value)
        result = await client.call_tool(safe_tool_name(step.tool), arguments, meta=meta)
        assert not result.is_error, result.content[0].text
        assert json.loads(result.content[0].text) == result.structured_content
        observations.append(result.structured_content)


def test_in_memory_tools_calls_and_errors(accepted: list[TaskRecord]) -> None:
    task = accepted[0]
    server = create_task_server(task)

    async def scenario() -> None:
        async with Client(server) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert all(VALID_TOOL_NAME.match(name) for name in tools)
            services = set(task.environment.services) | set(task.environment.distractors)
            service_tools = set(tools) - {RESET_TOOL, SCORE_TOOL}
            assert {str(original_tool_name(name)).split(".")[0] for name in service_tools} == services
            # the first reference call that has required arguments (a listing call may come first)
            step = next(
                s
                for s in task.reference_solution
                if tools[safe_tool_name(s.tool)].input_schema.get("required")
            )
            schema = tools[safe_tool_name(step.tool)].input_schema
            assert schema["type"] == "object" and schema["additionalProperties"] is False
            assert set(step.arguments) <= set(schema["properties"])
            await solve_over_mcp(client, task)
            missing = await client.call_tool(safe_tool_name(step.tool), {})
            assert missing.is_error
            assert missing.structured_content == json.loads(missing.content[0].text)
            assert missing.structured_content["success"] is False
            assert missing.structured_content["error"]["code"] == 400
            assert "missing" in missing.structured_content["error"]["message"]
            unknown_id = next(
                name for name in tools if name.endswith(("__get_event", "__get_message", "__get_issue"))
            )
            id_arg = next(iter(tools[unknown_id].input_schema["required"]))
            not_found = await client.call_tool(unknown_id, {id_arg: "no-such-id"})
            assert not_found.is_error
            assert json.loads(not_found.content[0].text)["error"]["code"] == 404

    anyio.run(scenario)


def test_http_transport(accepted: list[TaskRecord]) -> None:
    task = accepted[0]
    server = serve_http(task)
    try:

        async def scenario() -> None:
            async with Client(f"{server.url}/mcp") as client:
                assert len((await client.list_tools()).tools) > 10
                await solve_over_mcp(client, task)

        anyio.run(scenario)
    finally:
        server.stop()


@pytest.fixture()
def home(accepted: list[TaskRecord], tmp_path: Path) -> Path:
    from envpipeline.store.lake import Lake

    record_verified(Lake(tmp_path), "p0", accepted[:2], "fp", f"test-{uuid.uuid4().hex[:6]}")
    return tmp_path


def test_stdio_command_with_the_official_client(accepted: list[TaskRecord], home: Path) -> None:
    task = accepted[1]
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "envpipeline.cli", "serve-mcp", task.task_id, "--home", str(home)],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        cwd=str(REPO),
    )

    async def scenario() -> None:
        with anyio.fail_after(60):
            async with Client(params) as client:
                names = {t.name for t in (await client.list_tools()).tools}
                assert safe_tool_name(task.reference_solution[0].tool) in names
                await solve_over_mcp(client, task)

    anyio.run(scenario)


def test_unknown_task_is_a_clean_cli_error(home: Path) -> None:
    result = CliRunner().invoke(main, ["serve-mcp", "cw-missing", "--home", str(home)])
    assert result.exit_code != 0 and "cw-missing" in result.output


def task_with_notes(accepted: list[TaskRecord]) -> TaskRecord:
    for task in accepted:
        if "notes" in set(task.environment.services) | set(task.environment.distractors):
            return task
    pytest.skip("no accepted task has the notes service")


async def find_notes(client: Client, query: str, meta: dict | None = None) -> list:
    result = await client.call_tool("notes__search_notes", {"query": query}, meta=meta)
    assert not result.is_error, result.content[0].text
    data = result.structured_content["data"]
    return data["notes"] if isinstance(data, dict) else data


def test_two_http_sessions_have_their_own_state(accepted: list[TaskRecord]) -> None:
    task = task_with_notes(accepted)
    server = serve_http(task)
    try:

        async def scenario() -> None:
            url = f"{server.url}/mcp"
            async with Client(url, mode="legacy") as first, Client(url, mode="legacy") as second:
                created = await first.call_tool(
                    "notes__create_note", {"title": "Zanzibar h5 plan", "body": "x"}
                )
                assert not created.is_error, created.content[0].text
                assert len(await find_notes(first, "Zanzibar")) == 1
                assert await find_notes(second, "Zanzibar") == []  # the second client sees no note
                again = await second.call_tool("notes__create_note", {"title": "Zanzibar other", "body": "y"})
                assert not again.is_error
                assert len(await find_notes(first, "Zanzibar")) == 1
                assert len(await find_notes(second, "Zanzibar")) == 1

        anyio.run(scenario)
    finally:
        server.stop()


def test_reset_restores_the_initial_state(accepted: list[TaskRecord]) -> None:
    task = task_with_notes(accepted)

    async def scenario() -> None:
        async with Client(create_task_server(task), mode="legacy") as client:
            await client.call_tool("notes__create_note", {"title": "Zanzibar reset", "body": "x"})
            assert len(await find_notes(client, "Zanzibar")) == 1
            reset = await client.call_tool(RESET_TOOL, {})
            assert not reset.is_error and reset.structured_content["success"] is True
            assert await find_notes(client, "Zanzibar") == []

    anyio.run(scenario)


def test_score_is_one_after_the_reference_and_zero_for_a_nop(accepted: list[TaskRecord]) -> None:
    task = accepted[0]
    server = create_task_server(task)

    async def scenario() -> None:
        async with Client(server, mode="legacy") as solver, Client(server, mode="legacy") as idle:
            await solve_over_mcp(solver, task)
            solved = await solver.call_tool(SCORE_TOOL, {"answer": task.reference_output})
            assert solved.structured_content["data"]["checklist"] == 1.0
            assert solved.structured_content["data"]["binary"] == 1
            nop = await idle.call_tool(SCORE_TOOL, {})
            assert nop.structured_content["data"]["binary"] == 0
            assert nop.structured_content["data"]["checklist"] < 1.0
            await solver.call_tool(RESET_TOOL, {})  # after a reset the solver scores as a nop
            reset = await solver.call_tool(SCORE_TOOL, {"answer": task.reference_output})
            assert reset.structured_content["data"]["binary"] == 0

    anyio.run(scenario)


def test_a_mistyped_argument_is_the_400_observation(accepted: list[TaskRecord]) -> None:
    task = task_with_notes(accepted)

    async def scenario() -> None:
        async with Client(create_task_server(task)) as client:
            wrong = await client.call_tool("notes__create_note", {"title": {"not": "a string"}})
            assert wrong.is_error
            observation = json.loads(wrong.content[0].text)
            assert observation == wrong.structured_content
            assert observation["success"] is False and observation["error"]["code"] == 400
            assert "Error executing tool" not in wrong.content[0].text

    anyio.run(scenario)


def test_stateless_clients_are_isolated_by_their_episode(accepted: list[TaskRecord]) -> None:
    """The 2026-07-28 protocol has no session: clients name an episode in the request's _meta."""
    task = task_with_notes(accepted)
    server = serve_http(task)
    one, two = {EPISODE_META: "one"}, {EPISODE_META: "two"}
    try:

        async def scenario() -> None:
            async with Client(f"{server.url}/mcp") as first, Client(f"{server.url}/mcp") as second:
                created = await first.call_tool("notes__create_note", {"title": "Zanzibar one"}, meta=one)
                assert not created.is_error, created.content[0].text
                assert len(await find_notes(first, "Zanzibar", one)) == 1
                assert await find_notes(second, "Zanzibar", two) == []
                await solve_over_mcp(second, task, two)
                scored = await second.call_tool(SCORE_TOOL, {"answer": task.reference_output}, meta=two)
                assert scored.structured_content["data"]["binary"] == 1
                idle = await first.call_tool(SCORE_TOOL, {}, meta=one)
                assert idle.structured_content["data"]["binary"] == 0

        anyio.run(scenario)
    finally:
        server.stop()


def test_no_scoring_leaves_the_grader_out(accepted: list[TaskRecord]) -> None:
    task = accepted[0]

    async def names(server) -> set[str]:
        async with Client(server) as client:
            return {t.name for t in (await client.list_tools()).tools}

    assert SCORE_TOOL in anyio.run(names, create_task_server(task))
    hidden = anyio.run(names, create_task_server(task, scoring=False))
    assert SCORE_TOOL not in hidden and RESET_TOOL in hidden
