"""OpenAI-format chat trajectories recorded while an agent acts through the meta-tools."""

from __future__ import annotations

import json
from typing import Any

from envpipeline.agents.metatools import SYSTEM_PROMPT, MetaToolbox


class TrajectoryRecorder:
    """Acts through a toolbox and records every turn as OpenAI chat messages."""

    def __init__(self, toolbox: MetaToolbox, instruction: str) -> None:
        self.toolbox = toolbox
        self.messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": instruction},
        ]
        self.tool_calls = 0

    def call(self, name: str, arguments: dict[str, Any], thought: str = "") -> dict[str, Any]:
        """Issue one meta-tool call, record it (with the short reasoning before it) and its observation.

        Returns the parsed observation.
        """
        self.tool_calls += 1
        call_id = f"call_{self.tool_calls}"
        encoded = json.dumps(arguments, separators=(",", ":"), ensure_ascii=False)
        self.messages.append(
            {
                "role": "assistant",
                "content": thought,
                "tool_calls": [
                    {"id": call_id, "type": "function", "function": {"name": name, "arguments": encoded}}
                ],
            }
        )
        content = self.toolbox.dispatch(name, encoded)
        self.messages.append({"role": "tool", "tool_call_id": call_id, "name": name, "content": content})
        return json.loads(content)

    def finish(self, text: str) -> list[dict[str, Any]]:
        """Record the final reply and return the whole conversation."""
        self.messages.append({"role": "assistant", "content": text})
        return self.messages
