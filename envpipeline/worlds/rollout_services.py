"""Reusable interfaces for scripted world rollouts: one web server, MCP server and shell per slot.

A scripted rollout (`agents.ScriptedAgent.run`) acts on its own copy of W0 through a web server, an
MCP server and a CLI shell. Started per rollout, those cost a uvicorn start and stop, an MCP server
built tool by tool, and a sandbox session (a keeper process, a disk volume and its mount) -- most
of a gate's time. A `ServicePool` keeps `RolloutServices` slots instead: each holds a `LifeStore`
that both servers act through, and a shell. `lease(day_dir)` hands out an idle slot rebound to
`day_dir` (the store follows it; the shell empties ``/app`` and ``/tmp`` and uploads the new
``home/`` before its next command), so one slot serves one rollout at a time and parallel
rollouts get different slots. A slot also keeps its clients: an HTTP client of its web server, and
an MCP client session on its own event-loop thread (`run_mcp`), opened once per persona the slot
serves (a session per rollout cost its handshake, a tool listing and the compilation of every
output-schema validator: about 4.7 ms of CPU a rollout, 11 rollouts a task). The pool is used
where `sharing(pool)` installed it (`ScriptedAgent.run` asks `active_pool()`), for the sandbox it
was made with.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from envpipeline.sandbox.base import Sandbox
from envpipeline.sandbox.local import LocalSandbox
from envpipeline.worlds.agent_session import Shell, open_shell
from envpipeline.worlds.interfaces._serving import BackgroundServer
from envpipeline.worlds.lifestore import LifeStore

if TYPE_CHECKING:
    import httpx
    from anyio.from_thread import BlockingPortal
    from mcp import Client
    from mcp.server.mcpserver import MCPServer

T = TypeVar("T")


class RolloutServices:
    """One slot: a store, the web server and MCP server over it, and a shell; rebound per rollout."""

    def __init__(self, day_dir: Path, sandbox: Sandbox | None, opener: ThreadPoolExecutor) -> None:
        from envpipeline.worlds.interfaces.web import create_web_app

        self.store = LifeStore(day_dir)
        self.web = BackgroundServer(create_web_app(self.store), name="world-web")
        self.web.start()
        self.sandbox = sandbox
        self._opener = opener
        self._mcp: MCPServer | None = None
        self._mcp_persona = ""
        self._shell: Shell | None = None
        self._http: httpx.Client | None = None
        self._portal: tuple[AbstractContextManager[BlockingPortal], BlockingPortal] | None = None
        self._client: tuple[AbstractContextManager[Client], Client] | None = None
        self._client_persona = ""

    def bind(self, day_dir: Path) -> None:
        """Act on `day_dir` from now on (servers through the store, the shell at its next command)."""
        self.store.rebind(day_dir)
        if self._shell is not None:
            self._shell.rebind(day_dir)

    @property
    def mcp(self) -> MCPServer:
        """The MCP server over the store (built once; its instructions follow the bound persona)."""
        from envpipeline.worlds.interfaces.mcp_server import create_mcp_server, follow_persona

        persona = self.store.persona_id
        if self._mcp is None:
            self._mcp = create_mcp_server(self.store)
        elif persona != self._mcp_persona:
            follow_persona(self._mcp, persona)
        self._mcp_persona = persona
        return self._mcp

    @property
    def http(self) -> httpx.Client:
        """An HTTP client of the slot's web server (plain HTTP to 127.0.0.1, no redirects followed;
        the web app sets no cookies, so nothing passes from one rollout to the next)."""
        if self._http is None:
            import httpx

            self._http = httpx.Client(base_url=self.web.url, timeout=20, follow_redirects=False, verify=False)
        return self._http

    def run_mcp(self, work: Callable[[Client], Awaitable[T]]) -> T:
        """`work(client)` on the slot's event-loop thread, with an MCP client session of the server
        over the bound day (opened at first use and again when the slot serves another persona,
        whose introduction the session holds; closed when `work` raises, in case it broke)."""
        from mcp import Client

        persona = self.store.persona_id
        if self._client is not None and persona != self._client_persona:
            self._close_client()
        if self._portal is None:
            from anyio.from_thread import start_blocking_portal

            opening = start_blocking_portal()
            self._portal = (opening, opening.__enter__())
        portal = self._portal[1]
        if self._client is None:
            entering = portal.wrap_async_context_manager(Client(self.mcp))
            self._client = (entering, entering.__enter__())
            self._client_persona = persona
        try:
            return portal.call(work, self._client[1])
        except BaseException:
            self._close_client()
            raise

    def _close_client(self) -> None:
        if self._client is not None:
            entering, self._client = self._client[0], None
            entering.__exit__(None, None, None)

    @property
    def shell(self) -> Shell:
        """The shell over the bound day's home/ (a sandbox session opened at first use, by the
        pool's own thread: a sandbox keeper dies with the thread that started it, and the thread
        of one rollout ends long before the slot does)."""
        if self._shell is None:
            self._shell = self._opener.submit(open_shell, self.store.day_dir, self.sandbox).result()
        return self._shell

    def close(self) -> None:
        """Close the clients and the event-loop thread, stop the web server and the shell."""
        self._close_client()
        if self._portal is not None:
            opening, self._portal = self._portal[0], None
            opening.__exit__(None, None, None)
        if self._http is not None:
            self._http.close()
            self._http = None
        self.web.stop()
        if self._shell is not None:
            self._shell.close()
            self._shell = None


class ServicePool:
    """Idle `RolloutServices` slots, made on demand; `close()` (or leaving `with`) ends them all."""

    def __init__(self, sandbox: Sandbox | None = None) -> None:
        self._own = _local_sandbox() if sandbox is None else None
        self.sandbox = sandbox if sandbox is not None else self._own
        self._idle: list[RolloutServices] = []
        self._all: list[RolloutServices] = []
        self._lock = threading.Lock()
        self._opener = ThreadPoolExecutor(max_workers=1, thread_name_prefix="world-shells")

    @contextmanager
    def lease(self, day_dir: Path) -> Iterator[RolloutServices]:
        """An idle slot bound to `day_dir` (a new one when none is idle), returned afterwards."""
        with self._lock:
            services = self._idle.pop() if self._idle else None
        if services is None:
            services = RolloutServices(day_dir, self.sandbox, self._opener)
            with self._lock:
                self._all.append(services)
        else:
            services.bind(day_dir)
        try:
            yield services
        finally:
            with self._lock:
                self._idle.append(services)

    def serves(self, sandbox: Sandbox | None) -> bool:
        """Whether a rollout asking for `sandbox` (None: the default) may use this pool."""
        return sandbox is None or sandbox is self.sandbox

    def close(self) -> None:
        """Stop every slot, the spare sandbox session and the opener thread (idempotent)."""
        with self._lock:
            slots, self._all, self._idle = self._all, [], []
        for services in slots:
            services.close()
        if self._own is not None:
            self._own.close()
        self._opener.shutdown()

    def __enter__(self) -> ServicePool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _local_sandbox() -> LocalSandbox | None:
    """One local sandbox for every slot (its spare keeper is reused), or None (direct shell)."""
    return LocalSandbox() if LocalSandbox.available() else None


_active: list[ServicePool] = []
_active_lock = threading.Lock()


@contextmanager
def sharing(pool: ServicePool) -> Iterator[ServicePool]:
    """Let scripted rollouts (in any thread) use `pool` until the block ends."""
    with _active_lock:
        _active.append(pool)
    try:
        yield pool
    finally:
        with _active_lock:
            _active.remove(pool)


def active_pool() -> ServicePool | None:
    """The pool installed by the innermost `sharing` block, if any."""
    with _active_lock:
        return _active[-1] if _active else None
