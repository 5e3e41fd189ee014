"""What the gating workers' fork server imports once, before it forks them (`gate_processes`).

A gating worker is forked from ``multiprocessing``'s fork server. Python 3.11's fork server never
imports the caller's ``__main__`` (its ``preload`` drops the main module's path), so without this
module every worker imported the project on its own when it unpickled its first task: about 1 s
of CPU a worker, both workers at once, at the start of every `gate_all` that used processes (12%
of the CPU of gating 70 tasks, measured with py-spy). Importing this module in the fork server
instead imports once what a worker needs, including what the gates import inside function bodies
(the scripted agents, the web, MCP and CLI interfaces and their servers, every red-team and
rollout policy), and the workers fork with it imported.

Importing never fails the server: a module that cannot be imported is left to the worker that
needs it, which then fails with its own error. Last, ``gc.freeze()`` moves what was imported out of
the collector's reach, so that a worker's collections do not touch, and copy, the pages it shares
with the server.
"""

from __future__ import annotations

import contextlib
import gc
import importlib

#: Modules a gating worker imports (the gates import most of them inside function bodies).
GATE_WORKER_MODULES = (
    "envpipeline.worlds.gate_processes",
    "envpipeline.worlds.agents",
    "envpipeline.worlds.interfaces.web",
    "envpipeline.worlds.interfaces.web_life",
    "envpipeline.worlds.interfaces.mcp_server",
    "envpipeline.worlds.interfaces.cli",
    "envpipeline.policies.scripted",
    # the scripted agents' HTTP and MCP clients, and the servers they talk to (uvicorn picks its
    # loop and protocols when a server starts: "auto")
    "anyio.from_thread",
    "anyio._backends._asyncio",
    "anyio.streams.stapled",
    "anyio.streams.tls",
    "httpx",
    "httpcore",
    "httpcore._backends.anyio",
    "h2.connection",
    "certifi",
    "encodings.idna",
    "mcp",
    "rich.logging",
    "uvicorn",
    "uvicorn.loops.auto",
    "uvicorn.loops.uvloop",
    "uvicorn.protocols.http.auto",
    "uvicorn.protocols.websockets.auto",
    "uvicorn.protocols.websockets.websockets_sansio_impl",
    "uvicorn.lifespan.on",
    "jsonschema",
)


def preload() -> None:
    """Import `GATE_WORKER_MODULES`, load the policy registries, then freeze what was imported."""
    for name in GATE_WORKER_MODULES:
        with contextlib.suppress(Exception):
            importlib.import_module(name)
    with contextlib.suppress(Exception):  # the registries whose plug-ins the gates load
        from envpipeline.policies.registry import POLICIES
        from envpipeline.redteam.registry import all_policies

        POLICIES.all()
        all_policies()
    gc.freeze()


preload()
