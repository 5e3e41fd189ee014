#!/usr/bin/env python3
"""envserver: the services of a portable CompoWorld export (an envpipeline Harbor task).

Started as root by the image's entrypoint from a root-only folder (/srv/envtool), it holds the
task's joint state (``state.json`` beside this script, read once) in memory and answers
``/app/envtool.py`` over HTTP: one ``POST`` of ``{"command": "services" | "tools" | "describe" |
"call", "args": [...]}`` returns one JSON observation. Every ``call`` is appended to
``calls.jsonl`` beside this script, which Harbor collects as an artifact for the separate
verifier. The agent runs as an unprivileged user: it can read neither the state nor the log and
learns only what the tools serve. Listens on $ENVTOOL_HOST:$ENVTOOL_PORT (127.0.0.1:8765).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "vendor")]

import envtool  # noqa: E402  (beside this script)

CALLS = os.environ.get("ENVTOOL_CALLS", os.path.join(HERE, "calls.jsonl"))
LOCK = threading.Lock()


class ToolState:
    """The live environment and its call log (one per server: the task's single episode)."""

    def __init__(self, state_path: str, calls_path: str) -> None:
        self.env = envtool.load_env(state_path)
        self.calls_path = calls_path

    def run(self, command: str, args: list[Any]) -> dict[str, Any]:
        """One envtool command on the live state; calls are logged whether they succeed or not."""
        if command == "services":
            return envtool.list_services(self.env)
        if command in ("tools", "describe") and len(args) == 1 and isinstance(args[0], str):
            return (envtool.list_tools if command == "tools" else envtool.describe_tool)(self.env, args[0])
        if command == "call" and len(args) == 2 and isinstance(args[0], str):
            observation = self.env.call(args[0], args[1])
            with open(self.calls_path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps({"tool": args[0], "arguments": args[1]}, sort_keys=True) + "\n")
            return observation
        return envtool.error(400, f"unknown command {command!r} with {len(args)} arguments")


def make_handler(tools: ToolState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            try:
                length = int(self.headers.get("Content-Length") or 0)
                request = json.loads(self.rfile.read(length).decode("utf-8"))
                command, args = request["command"], list(request.get("args") or [])
            except (ValueError, KeyError, TypeError) as e:
                observation = envtool.error(400, f"malformed request: {e}")
            else:
                with LOCK:
                    observation = tools.run(command, args)
            body = json.dumps(observation, ensure_ascii=False, sort_keys=True).encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
            return

    return Handler


def main() -> int:
    tools = ToolState(os.path.join(HERE, "state.json"), CALLS)
    port = int(os.environ.get("ENVTOOL_PORT", "8765"))
    host = os.environ.get("ENVTOOL_HOST", "127.0.0.1")
    server = ThreadingHTTPServer((host, port), make_handler(tools))
    print(f"envserver listening on {port}", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
