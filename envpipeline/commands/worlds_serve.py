"""`envpipeline worlds serve PERSONA --day D`: the web app and the MCP server of one world day."""

from __future__ import annotations

import signal
import threading
from pathlib import Path

import click

from envpipeline.commands.common import home_option, resolve_home
from envpipeline.errors import ConfigError


@click.command("serve")
@click.argument("persona")
@click.option(
    "--day", "day", type=click.IntRange(min=0), required=True, help="World day to serve (0 = initial)."
)
@click.option(
    "--root",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder of built worlds (<persona>/day-<dd>/). Default: <home>/worlds.",
)
@home_option
@click.option(
    "--web-port",
    default=0,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Web app port (0 = any free port).",
)
@click.option(
    "--mcp-port",
    default=0,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="MCP server port (0 = any free port).",
)
def serve_command(
    persona: str, day: int, root: Path | None, home: Path | None, web_port: int, mcp_port: int
) -> None:
    """Serve PERSONA's world on --day: storefront + webmail and the MCP server, on 127.0.0.1.

    Writes go to that day folder's databases. Blocks until Ctrl-C.
    """
    from envpipeline.worlds.interfaces.serve import serve_world

    root = (root or resolve_home(home) / "worlds").resolve()
    day_dir = root / persona / f"day-{day:02d}"
    if not (day_dir / "apps").is_dir():
        built = sorted(p.name for p in (root / persona).glob("day-*")) if (root / persona).is_dir() else []
        hint = f"built days: {', '.join(built)}" if built else f"no world for {persona!r} under {root}"
        raise ConfigError(f"{day_dir} is not a world day folder ({hint})")
    stop = threading.Event()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
    served = serve_world(day_dir, web_port=web_port, mcp_port=mcp_port)
    try:
        click.echo(f"world:  {day_dir}")
        click.echo(f"web:    {served.web_url}/")
        click.echo(f"mcp:    {served.mcp_url}")
        click.echo("Press Ctrl-C to stop.", err=True)
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        click.echo("stopping", err=True)
        served.stop()
