"""Attempts built by hand for the world judges' tests: a trajectory as the agents record it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from envpipeline.worlds.judge_view import JudgeView

#: A table of the diff that the attempt left unchanged.
NO_ROWS: dict[str, list] = {"added": [], "removed": [], "changed": []}


def attempt(instruction: str, calls: list[tuple[str, dict, str]]) -> list[dict]:
    """A trajectory: the request, then each (tool, arguments, result), then the agent's last word."""
    messages: list[dict] = [{"role": "system", "content": "..."}, {"role": "user", "content": instruction}]
    for i, (name, arguments, result) in enumerate(calls):
        call = {
            "id": f"c{i}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "name": name, "content": result})
    return [*messages, {"role": "assistant", "content": "Done."}]


def panel_votes(view: JudgeView) -> dict[str, bool | None]:
    """The vote of each procedural judge of the panel (diff, rules, trajectory) on `view`."""
    from envpipeline.worlds.judges import DiffJudge, RuleReviewer, TrajectoryJudge

    return {judge.name: judge(view) for judge in (DiffJudge(), RuleReviewer(), TrajectoryJudge())}


def balance_change(account: int, before: int, after: int, **fields: object) -> dict:
    """The diff's change of one bank account's balance (cents), with any other fields it shows."""
    row = {"id": account, **fields}
    return {
        "id": account,
        "fields": ["balance_cents"],
        "before": {**row, "balance_cents": before},
        "after": {**row, "balance_cents": after},
    }
