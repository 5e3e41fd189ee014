"""A scripted OpenAI-compatible chat server on 127.0.0.1 for the LLM tests (the real HTTP path).

Usage::

    with ScriptedLLMServer(["first reply", "second reply"]) as server:
        client = LLMClient(LLMConfig(model="openai/test", api_base=server.api_base, ...))

Each POST /v1/chat/completions pops the next scripted reply (a string, a `Reply`, or a
callable(request_json) returning either). Failures are injected per request with `Reply(status=500)`
or `Reply(delay_sec=...)`; every request body is recorded in `server.requests`.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

__all__ = ["Reply", "ScriptedLLMServer", "completion_json", "llm_server_fixture"]


@dataclass
class Reply:
    """One scripted answer: a message, or an HTTP error, optionally after a delay."""

    content: str | None = ""
    tool_calls: list[dict[str, Any]] | None = None
    status: int = 200
    delay_sec: float = 0.0
    prompt_tokens: int = 11
    completion_tokens: int = 7
    extra: dict[str, Any] = field(default_factory=dict)


Script = str | Reply | Callable[[dict[str, Any]], "str | Reply"]


class ScriptedLLMServer:
    """A background OpenAI-compatible server replaying scripted replies in order."""

    def __init__(self, script: Iterable[Script] = (), *, default: Script | None = None) -> None:
        self.script: deque[Script] = deque(script)
        self.default = default
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def api_base(self) -> str:
        """The base URL to hand to litellm (`.../v1`)."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def push(self, *replies: Script) -> None:
        """Append replies to the script."""
        with self._lock:
            self.script.extend(replies)

    def start(self) -> ScriptedLLMServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            item = self.script.popleft() if self.script else self.default
        if item is None:
            return Reply(status=500, content="script exhausted")
        if callable(item):
            item = item(body)
        return item if isinstance(item, Reply) else Reply(content=item)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib name
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                with server._lock:
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                reply = server._next_reply(body)
                if reply.delay_sec:
                    time.sleep(reply.delay_sec)
                if reply.status != 200:
                    error = {"message": reply.content or "injected failure", "type": "server_error"}
                    self._send(reply.status, {"error": error})
                    return
                self._send(200, completion_json(body.get("model", "test"), reply))

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout tests)

        return Handler


def completion_json(model: str, reply: Reply) -> dict[str, Any]:
    """An OpenAI chat.completion object for one reply."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = reply.tool_calls
    return {
        "id": f"chatcmpl-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
        },
        **reply.extra,
    }


@pytest.fixture(name="llm_server")
def llm_server_fixture() -> Iterator[ScriptedLLMServer]:
    """A started scripted server with an empty script; tests `push` their replies.

    Import it into a test module (`from tests.llm_server import llm_server_fixture`) and request
    `llm_server`.
    """
    with ScriptedLLMServer() as server:
        yield server
