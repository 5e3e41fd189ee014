"""The two criteria every world task gets beside its template's: `state_preserved` and `calls_through`.

`state_allowance` derives, from a task's own criteria, where its final state may differ from W0:
rows added or changed in the tables the criteria name (one row per sub-task that writes there),
the stock of one product per order, the balance of one account per bank transaction, the files the criteria name, plus volatile fields any agent
touches by reading (mail ``is_read``) or shopping (the cart). Everything else must stay as it was.
`calls_through` checks on the trajectory that a write that more than one interface can make went
through the interface the instruction names (e-mail: the MCP mail tool or the webmail).
"""

from __future__ import annotations

import json
from typing import Any

from envpipeline.models.world_task import Interface, Step, WorldCriterion

#: Fields any agent changes by merely using the apps; never collateral damage.
VOLATILE: dict[str, list[str] | str] = {"mail/messages": ["is_read"], "shop/cart_items": "*"}
#: The tool calls that write an app, per interface, for apps more than one interface can write.
WRITE_CALLS: dict[str, dict[Interface, tuple[str, ...]]] = {
    "mail": {"mcp": ("mcp.mail_send",), "web": ("web.POST /mail/send",)},
}


def state_allowance(
    criteria: list[WorldCriterion], subtask_of: list[int], forbidden: list[str] | None = None
) -> dict[str, Any]:
    """The `allow` of a task's state_preserved criterion, from its criteria (and their sub-tasks).

    `forbidden`: candidate values the task did not ask for (its distractors); no added row or
    file line may name one, so listing every candidate does not pass.
    """
    added: dict[str, set[int]] = {}
    deltas: dict[str, int] = {}
    changed: dict[str, set[int]] = {}
    fields: dict[str, set[str]] = {}
    files: set[str] = set()
    for criterion, subtask in zip(criteria, subtask_of):
        key = f"{criterion.app}/{criterion.table}"
        if criterion.kind == "row_added":
            added.setdefault(key, set()).add(subtask)
        elif criterion.kind == "row_count_delta":
            deltas[key] = max(deltas.get(key, 0), criterion.delta)
        elif criterion.kind == "row_changed" and criterion.field:
            changed.setdefault(key, set()).add(subtask)
            fields.setdefault(key, set()).add(criterion.field)
        elif criterion.path:
            files.add(criterion.path)
    tables: dict[str, dict[str, Any]] = {}
    for key in sorted(set(added) | set(deltas) | set(changed)):
        tables[key] = {
            "added": len(added.get(key, ())) + deltas.get(key, 0),
            "changed": len(changed.get(key, ())),
            "fields": sorted(fields.get(key, ())),
        }
    orders = tables.get("shop/orders", {}).get("added", 0)
    if orders:
        tables["shop/products"] = {"added": 0, "changed": orders, "fields": ["stock"]}
    postings = tables.get("bank/transactions", {}).get("added", 0)
    if postings:  # every posted transaction moves its account's balance
        tables["bank/accounts"] = {"added": 0, "changed": postings, "fields": ["balance_cents"]}
    return {
        "tables": tables,
        "volatile": dict(VOLATILE),
        "files": sorted(files),
        "forbidden": sorted(set(forbidden or [])),
    }


def distractor_values(steps: list[Step], facts: dict[str, Any]) -> list[str]:
    """The distractor values of a solution's reads that are not (part of) a true fact."""
    truths = [str(v) for v in facts.values() if len(str(v)) >= 3]
    values = {
        str(v) for step in steps for options in step.args.get("distractors", {}).values() for v in options
    }
    return sorted(v for v in values if len(v) >= 3 and not any(v in t or t in v for t in truths))


def guard_criteria(
    criteria: list[WorldCriterion],
    subtask_of: list[int],
    interfaces: list[Interface],
    forbidden: list[str] | None = None,
) -> list[tuple[WorldCriterion, int]]:
    """The state_preserved criterion and one calls_through per sub-task writing a multi-interface app."""
    n = len(criteria)
    guards = [
        (
            WorldCriterion(
                id=f"c{n + 1}",
                kind="state_preserved",
                description="nothing else changed: no deleted records or files, no extra orders or messages",
                interface=interfaces[-1],
                allow=state_allowance(criteria, subtask_of, forbidden),
            ),
            subtask_of[-1] if subtask_of else 0,
        )
    ]
    seen: set[tuple[str, int]] = set()
    for criterion, subtask in zip(criteria, subtask_of):
        app = criterion.app or ""
        if criterion.kind != "row_added" or app not in WRITE_CALLS or (app, subtask) in seen:
            continue
        if interfaces[subtask] not in WRITE_CALLS[app]:
            continue
        seen.add((app, subtask))
        guards.append(
            (
                WorldCriterion(
                    id=f"c{n + len(guards) + 1}",
                    kind="calls_through",
                    description=f"the {app} write of sub-task {subtask + 1} goes through {interfaces[subtask]}",
                    interface=interfaces[subtask],
                    app=app,
                ),
                subtask,
            )
        )
    return guards


def called_through(criterion: WorldCriterion, trajectory: list[dict[str, Any]]) -> bool:
    """A successful write of the criterion's app through its interface, and none through another."""
    calls = WRITE_CALLS.get(criterion.app or "", {})
    named = set(calls.get(criterion.interface, ()))
    others = {c for interface, cs in calls.items() if interface != criterion.interface for c in cs}
    results = {
        m.get("tool_call_id"): str(m.get("content") or "") for m in trajectory if m.get("role") == "tool"
    }
    used: set[str] = set()
    for message in trajectory:
        for call in message.get("tool_calls") or []:
            result = results.get(call.get("id"), "")
            if not _failed(result):
                used.add(call["function"]["name"])
    return bool(used & named) and not used & others


def _failed(result: str) -> bool:
    """A tool result that reports an error (an MCP error text, or a non-2xx/3xx web status)."""
    head = result.strip()[:3]
    if head.isdigit():
        return not head.startswith(("2", "3"))
    try:
        json.loads(result)
    except ValueError:
        return result.lower().startswith("error") or "error" in result[:80].lower()
    return False
