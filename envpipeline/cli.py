"""`envpipeline` command line: one group; each command lives in `envpipeline/commands/`."""

from __future__ import annotations

import envpipeline.arrow_allocator  # noqa: F401  (loads pyarrow with the system allocator, before any command)
import envpipeline.blas_threads  # noqa: F401  (one BLAS thread; arrow_allocator, which loads numpy, imports it first)
from envpipeline.errors import MissingExtraError

try:
    import click
    import rich  # noqa: F401  (the commands print through it)
except ImportError as missing:
    raise MissingExtraError("cli", missing, needed_by="the envpipeline command") from missing

from envpipeline.commands.compose import audit_command, compose_command, services_group
from envpipeline.commands.export import export_command
from envpipeline.commands.failures import DEBUG_ENV, CleanErrorGroup
from envpipeline.commands.redteam import redteam_command
from envpipeline.commands.run import run_command
from envpipeline.commands.select import select_command
from envpipeline.commands.serve_mcp import serve_mcp_command
from envpipeline.commands.terminal import bundle_group, families_group, forge_command
from envpipeline.commands.worlds import worlds_group


@click.group(cls=CleanErrorGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="envpipeline")
@click.option(
    "--debug",
    is_flag=True,
    help=f"Show the Python traceback of an error instead of its one-line message (or set {DEBUG_ENV}=1).",
)
def main(debug: bool) -> None:
    """envpipeline: verified training environments for LLM agents, as a Dagster asset graph.

    A mistake in the input (a missing or unreadable file, a value out of range, a folder that
    cannot be written) ends with one line on stderr and exit status 2.
    """


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
    """Run the CLI (user errors are one line and exit 2: see `envpipeline.commands.failures`).

    SIGTERM is a normal exit here, so the sandbox sessions of a terminated command are removed on
    the way out (`envpipeline.sandbox.reaper`). The interpreter then exits without its last
    garbage collections (`envpipeline.quick_exit`: about 0.8 s once the library is loaded).
    """
    from envpipeline.quick_exit import freeze_for_exit
    from envpipeline.sandbox.reaper import exit_on_sigterm

    exit_on_sigterm()
    try:
        main(standalone_mode=True)
    finally:
        freeze_for_exit()


if __name__ == "__main__":
    entrypoint()
