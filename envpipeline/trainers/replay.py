"""Replaying a recorded trajectory (an SFT row's messages) through an `Episode`'s public tools.

A scripted policy for tests and sanity checks: each assistant tool call of the recorded messages
becomes the episode call an agent would make with the episode's own tools — a composed call keeps
its meta-tool name; a world call recorded under its interface name (``mcp.mail_send``,
``web.POST /mail/send``, ``cli.exec``) becomes ``mcp__mail_send``, ``web__request`` or
``cli__exec``. The last assistant message without tool calls is submitted as the final answer.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from envpipeline.export.tool_names import safe_tool_name
from envpipeline.trainers.episode import Episode


def episode_call(name: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The episode tool and arguments of one recorded call."""
    if name.startswith("web.") and " " in name:
        method, _, path = name[len("web.") :].partition(" ")
        if method == "GET":
            query = urlencode({k: str(v) for k, v in arguments.items()})
            return safe_tool_name("web.request"), {
                "method": "GET",
                "path": f"{path}?{query}" if query else path,
            }
        return safe_tool_name("web.request"), {"method": method, "path": path, "form": arguments}
    return safe_tool_name(name), arguments


def replay_messages(episode: Episode, messages: list[dict[str, Any]], submit: bool = True) -> list[str]:
    """Run every recorded tool call through `episode`; submit the final assistant text. Observations."""
    observations = []
    final = ""
    for message in messages:
        if message.get("role") != "assistant":
            continue
        calls = message.get("tool_calls") or []
        for call in calls:
            arguments = call["function"].get("arguments") or {}
            if isinstance(arguments, str):
                arguments = json.loads(arguments) if arguments.strip() else {}
            tool, args = episode_call(call["function"]["name"], arguments)
            observations.append(episode.call(tool, args))
        if not calls and message.get("content"):
            final = str(message["content"])
    if submit and final:
        episode.submit_answer(final)
    return observations
