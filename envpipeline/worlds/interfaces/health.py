"""Live health of a world day: the web app and the MCP server start, answer, and stop.

`check_live(day_dir)` serves the day folder (`serve_world`), requests ``GET /`` and ``GET /mail``,
lists the MCP tools with the official client over streamable HTTP, and stops both. It only reads:
the day folder is unchanged afterwards (no page it requests writes).
"""

from __future__ import annotations

import time
from pathlib import Path

from envpipeline.errors import MissingExtraError
from envpipeline.models.gates import GateResult
from envpipeline.worlds.interfaces.mcp_server import TOOL_NAMES
from envpipeline.worlds.interfaces.serve import serve_world

try:
    import anyio
    import httpx
    from mcp import Client
except ImportError as missing:
    raise MissingExtraError("worlds", missing, needed_by=__name__) from missing

CHECK_NAME = "live_health"


async def _list_tools(url: str, timeout: float) -> list[str]:
    with anyio.fail_after(timeout):
        async with Client(url, read_timeout_seconds=timeout) as client:
            return sorted(tool.name for tool in (await client.list_tools()).tools)


def check_live(day_dir: str | Path, timeout: float = 15.0) -> GateResult:
    """Start both interfaces over `day_dir` and check they answer; `reason` names what failed."""
    started = time.monotonic()
    evidence: dict[str, object] = {}
    failures: list[str] = []
    try:
        served = serve_world(day_dir)
    except Exception as e:
        return GateResult(
            name=CHECK_NAME, passed=False, reason=f"interfaces did not start: {e}", evidence=evidence
        )
    with served:
        evidence.update(web_url=served.web_url, mcp_url=served.mcp_url)
        with httpx.Client(base_url=served.web_url, timeout=timeout) as http:
            for path in ("/", "/mail"):
                try:
                    response = http.get(path)
                    evidence[f"web GET {path}"] = response.status_code
                    if response.status_code != 200 or (path == "/" and "<form" not in response.text):
                        failures.append(f"web GET {path} answered {response.status_code}")
                except httpx.HTTPError as e:
                    failures.append(f"web GET {path} failed: {e!r}")
        try:
            tools = anyio.run(_list_tools, served.mcp_url, timeout)
            evidence["mcp_tools"] = tools
            missing = sorted(set(TOOL_NAMES) - set(tools))
            if missing:
                failures.append(f"MCP tools missing: {', '.join(missing)}")
        except Exception as e:
            failures.append(f"MCP tools/list failed: {e!r}")
    evidence["seconds"] = round(time.monotonic() - started, 3)
    if failures:
        return GateResult(name=CHECK_NAME, passed=False, reason="; ".join(failures), evidence=evidence)
    return GateResult(
        name=CHECK_NAME,
        passed=True,
        reason=f"web / and /mail answered 200; MCP listed {len(TOOL_NAMES)} tools",
        evidence=evidence,
    )
