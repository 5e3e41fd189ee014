"""`envpipeline serve-mcp`: an accepted composed task served over MCP, driven by the official client."""

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
from envpipeline.export.mcp_serve import create_task_server, serve_http
from envpipeline.models.task import TaskRecord
from envpipeline.services.links import read_path

REPO = Path(__file__).resolve().parents[2]


async def solve_over_mcp(client: Client, task: TaskRecord) -> None:
    """Run the reference solution through MCP tool calls (bindings read from structured content)."""
    observations: list[dict] = []
    for step in task.reference_solution:
        arguments = dict(step.arguments)
        for name, binding in step.bindings.items():
            value = read_path(observations[binding.step]["data"], binding.path)
            arguments[name] = value if binding.template == "{value}" else binding.template.format(value=value)
        result = await client.call_tool(step.tool, arguments)
        assert not result.is_error, result.content[0].text
        assert json.loads(result.content[0].text) == result.structured_content
        observations.append(result.structured_content)


def test_in_memory_tools_calls_and_errors(accepted: list[TaskRecord]) -> None:
    task = accepted[0]
    server = create_task_server(task)

    async def scenario() -> None:
        async with Client(server) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            services = set(task.environment.services) | set(task.environment.distractors)
            assert {name.split(".")[0] for name in tools} == services
            step = task.reference_solution[0]
            schema = tools[step.tool].input_schema
            assert schema["type"] == "object" and schema["additionalProperties"] is False
            assert set(step.arguments) <= set(schema["properties"])
            await solve_over_mcp(client, task)
            missing = await client.call_tool(step.tool, {})
            assert missing.is_error
            unknown_id = next(
                name for name in tools if name.endswith((".get_event", ".get_message", ".get_issue"))
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
                assert task.reference_solution[0].tool in names
                await solve_over_mcp(client, task)

    anyio.run(scenario)


def test_unknown_task_is_a_clean_cli_error(home: Path) -> None:
    result = CliRunner().invoke(main, ["serve-mcp", "cw-missing", "--home", str(home)])
    assert result.exit_code != 0 and "cw-missing" in result.output
