"""`envpipeline serve-mcp TASK_ID [--transport stdio|http]`: an accepted composed task as an MCP server."""

from __future__ import annotations

from pathlib import Path

import click

from envpipeline.commands.common import home_option, resolve_home


@click.command("serve-mcp")
@click.argument("task_id")
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio (for a client that spawns the server) or streamable HTTP on 127.0.0.1 (path /mcp).",
)
@home_option
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP bind address.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="HTTP port.")
@click.option(
    "--scoring/--no-scoring",
    default=True,
    show_default=True,
    help="Offer the `score` tool (it grades against the task's criteria: leave it out when the "
    "client is the agent under evaluation).",
)
def serve_mcp_command(
    task_id: str, transport: str, home: Path | None, host: str, port: int, scoring: bool
) -> None:
    """Serve the tools of accepted composed task TASK_ID over MCP (provider-safe names, JSON observations).

    The task is read from the lake (asset verified_composed_tasks); each client session acts on its
    own copy of the task's initial state, `reset` restores it and `score` grades it (checklist share
    and binary). Blocks until the client disconnects (stdio) or Ctrl-C.
    """
    from envpipeline.export.mcp_serve import load_task, run_http, run_stdio

    # an unknown TASK_ID is an UnknownTaskError: one line and exit 2 (envpipeline.commands.failures)
    task = load_task(task_id, resolve_home(home))
    if transport == "stdio":
        run_stdio(task, scoring=scoring)
    else:
        click.echo(f"serving {task_id} on http://{host}:{port}/mcp (Ctrl-C to stop)", err=True)
        run_http(task, host=host, port=port, scoring=scoring)
