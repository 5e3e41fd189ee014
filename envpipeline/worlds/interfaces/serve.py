"""Serve one world day: the web app and the MCP server (streamable HTTP) on 127.0.0.1 free ports."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from envpipeline.worlds.interfaces._serving import BackgroundServer
from envpipeline.worlds.interfaces.mcp_server import serve_mcp
from envpipeline.worlds.interfaces.web import serve_web


@dataclass
class Served:
    """The running interfaces of a day folder; `stop()` (or leaving the `with` block) ends both."""

    day_dir: Path
    web_url: str
    mcp_url: str
    _servers: list[BackgroundServer] = field(default_factory=list, repr=False)

    def stop(self) -> None:
        """Stop both servers (idempotent)."""
        while self._servers:
            self._servers.pop().stop()

    def __enter__(self) -> Served:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()


def serve_world(day_dir: str | Path, host: str = "127.0.0.1", web_port: int = 0, mcp_port: int = 0) -> Served:
    """Start the web GUI and the MCP server over `day_dir` (port 0 = any free port)."""
    day_dir = Path(day_dir).resolve()
    web = serve_web(day_dir, host, web_port)
    try:
        mcp = serve_mcp(day_dir, host, mcp_port)
    except BaseException:
        web.stop()
        raise
    return Served(day_dir=day_dir, web_url=web.url, mcp_url=f"{mcp.url}/mcp", _servers=[web, mcp])
