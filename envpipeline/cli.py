"""`envpipeline` command line: one group; each command lives in `envpipeline/commands/`."""

from __future__ import annotations

import sys

import click

from envpipeline.commands.common import console
from envpipeline.commands.compose import audit_command, compose_command, services_group
from envpipeline.commands.export import export_command
from envpipeline.commands.redteam import redteam_command
from envpipeline.commands.run import run_command
from envpipeline.commands.select import select_command
from envpipeline.commands.serve_mcp import serve_mcp_command
from envpipeline.commands.terminal import bundle_group, families_group, forge_command
from envpipeline.commands.worlds import worlds_group
from envpipeline.errors import EnvpipelineError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="envpipeline")
def main() -> None:
    """envpipeline: verified training environments for LLM agents, as a Dagster asset graph."""


for command in (
    run_command,
    services_group,
    compose_command,
    audit_command,
    families_group,
    bundle_group,
    forge_command,
    select_command,
    export_command,
    worlds_group,
    serve_mcp_command,
    redteam_command,
):
    main.add_command(command)


def entrypoint() -> None:
    """Run the CLI with clean error messages for envpipeline errors."""
    try:
        main(standalone_mode=True)
    except EnvpipelineError as e:
        console.print(f"[red]error:[/] {e}")
        sys.exit(2)


if __name__ == "__main__":
    entrypoint()
