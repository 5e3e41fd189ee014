#!/usr/bin/env python3
"""envtool: the services of this task on the command line (an envpipeline CompoWorld export).

    python3 /app/envtool.py services                      list the services
    python3 /app/envtool.py tools SERVICE                 list one service's tools
    python3 /app/envtool.py describe SERVICE.TOOL         the JSON schema of one tool's arguments
    python3 /app/envtool.py call SERVICE.TOOL 'JSON'      call a tool, e.g. call mail.search_messages '{"query": "x"}'
    python3 /app/envtool.py answer 'TEXT'                 record your final answer (/app/answer.txt)

Every command prints one JSON observation: {"success": true, "data": ...} or
{"success": false, "error": {"code": 400|404|409, "message": ...}}. The services are the real
envpipeline implementations. Offline exports run them here (vendored under /app/vendor, the joint
state in /app/state.json, every call appended to /app/calls.jsonl); portable exports set
$ENVTOOL_SERVER and this script is only a client of `envserver.py`, which runs as root and holds
the state and the call log out of the (unprivileged) agent's reach.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
import urllib.error
import urllib.request
from typing import Any

APP = os.path.dirname(os.path.abspath(__file__))
VENDOR = os.path.join(APP, "vendor")
STATE = os.path.join(APP, "state.json")
CALLS = os.path.join(APP, "calls.jsonl")
ANSWER = os.path.join(APP, "answer.txt")
#: The envserver of a portable export (``http://127.0.0.1:8765``); unset: run the services here.
SERVER = os.environ.get("ENVTOOL_SERVER", "")
#: How long a client waits for the tools container to come up (seconds).
SERVER_WAIT = 30.0

if VENDOR not in sys.path:
    sys.path.insert(0, VENDOR)


def error(code: int, message: str) -> dict[str, Any]:
    """An error observation."""
    return {"success": False, "error": {"code": code, "message": message}}


def load_env(path: str = STATE) -> Any:
    """The live composed environment rebuilt from a joint state file."""
    from envpipeline.agents.environment import ComposedEnvironment

    with open(path, encoding="utf-8") as handle:
        return ComposedEnvironment.from_initial_state(json.load(handle))


def save_env(env: Any, path: str = STATE) -> None:
    """Write the joint state atomically (a temp file renamed over the target)."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".state-")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(env.snapshot(), handle, sort_keys=True)
    os.replace(tmp, path)


def list_services(env: Any) -> dict[str, Any]:
    """Names, titles and tool counts of the services."""
    services = [
        {"name": n, "title": s.title, "domain": s.domain, "tools": len(s.tools)}
        for n, s in sorted(env.services.items())
    ]
    return {"success": True, "data": {"services": services}}


def list_tools(env: Any, service: str) -> dict[str, Any]:
    """The tools of one service (answered from the process's listing cache)."""
    from envpipeline.services.schema_cache import tool_listing

    svc = env.services.get(service)
    if svc is None:
        return error(404, f"unknown service '{service}'")
    return {"success": True, "data": {"tools": tool_listing(service, svc)}}


def describe_tool(env: Any, tool: str) -> dict[str, Any]:
    """The JSON schema of one tool (`ToolDef.json_schema`: built once per tool, a fresh copy)."""
    namespace, _, local = tool.partition(".")
    svc = env.services.get(namespace)
    if svc is None or local not in svc.tools:
        return error(404, f"unknown tool '{tool}'")
    return {"success": True, "data": svc.tools[local].json_schema(namespace)["function"]}


def call(tool: str, arguments: Any) -> dict[str, Any]:
    """Call one tool on the persisted state, log the call and persist the new state."""
    env = load_env()
    observation = env.call(tool, arguments)
    with open(CALLS, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"tool": tool, "arguments": arguments}, sort_keys=True) + "\n")
    if observation.get("success"):
        save_env(env)
    return observation


def remote(command: str, *args: Any) -> dict[str, Any]:
    """Run one command on the envserver ($ENVTOOL_SERVER); retried while it starts."""
    body = json.dumps({"command": command, "args": list(args)}).encode()
    deadline = time.monotonic() + SERVER_WAIT
    failure: Exception | None = None
    while True:
        # comma-separated candidates, tried in order
        for url in SERVER.split(","):
            request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(request, timeout=60) as response:
                    return json.loads(response.read().decode("utf-8"))
            except (urllib.error.URLError, ConnectionError) as e:
                failure = e
        if time.monotonic() > deadline:
            return error(503, f"the tools service at {SERVER} is not reachable: {failure}")
        time.sleep(0.5)


def run_command(command: str, *args: Any) -> dict[str, Any]:
    """`services`, `tools`, `describe` or `call` on the state here, or on the envserver."""
    if SERVER:
        return remote(command, *args)
    if command == "call":
        return call(args[0], args[1])
    env = load_env()
    if command == "services":
        return list_services(env)
    if command == "tools":
        return list_tools(env, args[0])
    return describe_tool(env, args[0])


def answer(text: str) -> dict[str, Any]:
    """Record the final answer."""
    with open(ANSWER, "w", encoding="utf-8") as handle:
        handle.write(text)
    return {"success": True, "data": {"answer": text}}


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(__doc__)
        return 0
    command, rest = argv[0], argv[1:]
    if command == "call":
        if not rest:
            observation = error(400, "usage: envtool.py call SERVICE.TOOL 'JSON ARGUMENTS'")
        else:
            try:
                arguments = json.loads(rest[1]) if len(rest) > 1 and rest[1].strip() else {}
            except json.JSONDecodeError as e:
                observation = error(400, f"arguments are not valid JSON: {e}")
            else:
                observation = run_command("call", rest[0], arguments)
    elif command == "answer":
        observation = answer(" ".join(rest))
    elif command == "services":
        observation = run_command("services")
    elif command in ("tools", "describe") and rest:
        observation = run_command(command, rest[0])
    else:
        observation = error(400, f"unknown command {' '.join(argv)!r}; run envtool.py --help")
    print(json.dumps(observation, ensure_ascii=False, sort_keys=True))
    return 0 if observation.get("success") else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
