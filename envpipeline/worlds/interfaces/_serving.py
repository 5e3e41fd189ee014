"""Run an ASGI app with uvicorn on a background thread, bound to 127.0.0.1 and an OS-assigned port."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

from envpipeline.errors import MissingExtraError

try:
    import uvicorn
except ImportError as missing:
    raise MissingExtraError("worlds", missing, needed_by=__name__) from missing


class BackgroundServer:
    """One uvicorn server on a daemon thread: `start()` returns its base URL, `stop()` ends it."""

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 0, name: str = "server") -> None:
        self.app, self.host, self.port, self.name = app, host, port, name
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self, timeout: float = 15.0) -> str:
        """Bind the socket (port 0 picks a free one), serve, and wait until uvicorn has started."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))
        self.port = sock.getsockname()[1]
        # log_config=None: uvicorn's default runs logging.config.dictConfig, which closes every
        # handler of the process; from a thread that races handlers being created in another one
        # (the MCP server's RichHandler: "'RichHandler' object has no attribute 'lock'") and drops
        # the handlers of whoever embeds the server (a Dagster run's)
        config = uvicorn.Config(
            self.app,
            log_config=None,
            log_level="warning",
            access_log=False,
            lifespan="auto",
            timeout_graceful_shutdown=2,
        )
        server = self._server = uvicorn.Server(config)

        def serve() -> None:
            try:
                server.run(sockets=[sock])
            except BaseException as e:  # reported by start()
                self._error = e
            finally:
                sock.close()

        self._thread = threading.Thread(target=serve, name=f"{self.name}:{self.port}", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not server.started:
            if self._error is not None or not self._thread.is_alive():
                raise RuntimeError(f"{self.name} did not start on {self.url}: {self._error!r}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"{self.name} did not start on {self.url} within {timeout:.0f} s")
            time.sleep(0.01)
        return self.url

    def stop(self, timeout: float = 10.0) -> None:
        """Ask uvicorn to exit (forcefully after `timeout`) and join the thread (idempotent)."""
        if self._server is None or self._thread is None:
            return
        self._server.should_exit = True
        self._thread.join(timeout / 2)
        if self._thread.is_alive():
            self._server.force_exit = True
            self._thread.join(timeout / 2)
        self._server = self._thread = None
