"""What a world judge may see (`JudgeView`: instruction, trajectory, raw diff) and how it reads it.

Shared by the judges in `worlds/judges.py`: the instruction's named entities and requested
actions, the agent's tool calls and observations (split into records), and the grounding helpers.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from envpipeline.worlds.state import diff

QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
PATH = re.compile(r"\b(?:[\w.-]+/)*[\w-]+\.(?:md|txt)\b")
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
HANDLE = re.compile(r"\b[a-z]+\.[a-z]\b")
PERSON = re.compile(r"\b[A-Z][a-z]+ [A-Z][a-z]+\b")
ORDER_VERB = re.compile(r"\b(?:buy|order (?:it|the|something|exactly|one))\b", re.I)
DATA = re.compile(r"ORD-[\w]+|SKU-[\w-]+|\d{4}-\d{2}-\d{2}|\b\d{1,2}:\d{2}\b|\d+\.\d{2}\b")
ORDER_NUMBER = re.compile(r"ORD-\w+")
PRICE = re.compile(r"\$(\d+\.\d{2})")
SEGMENT = re.compile(r"[\n:;,()]|\s—\s|\s-\s")
#: Fields an agent changes by merely using the apps.
VOLATILE_FIELDS = {"mail/messages": {"is_read"}, "shop/products": {"stock"}}
VOLATILE_TABLES = {"shop/cart_items"}
#: Tool calls that write, by the app they write.
WRITES: dict[str, tuple[str, ...]] = {
    "shop": ("web.POST /checkout",),
    "mail": ("mcp.mail_send", "web.POST /mail/send", "web.POST /mail/"),
    "dm": ("mcp.dm_send",),
    "chat": ("mcp.chat_post",),
    "files": ("cli.exec",),
}
SUCCESS_CLAIM = "Done. I completed every step of the task successfully."
FAILURE_CLAIM = "I could not complete the task."


@dataclass(frozen=True)
class JudgeView:
    """What a judge may see: the instruction, the trajectory, the raw diff and the changed files' text."""

    instruction: str
    trajectory: list[dict[str, Any]]
    state_diff: dict[str, Any]
    files: dict[str, str]


def judge_view(
    instruction: str, trajectory: list[dict[str, Any]], initial_dir: Path | str, final_dir: Path | str
) -> JudgeView:
    """The view of one attempt: the diff of the two day folders and the text of every added/changed file."""
    state_diff = diff(initial_dir, final_dir)
    home = Path(final_dir) / "home"
    paths = state_diff["files"]["added"] + state_diff["files"]["changed"]
    files = {
        p: (home / p).read_text(encoding="utf-8", errors="replace") for p in paths if (home / p).is_file()
    }
    return JudgeView(instruction, trajectory, state_diff, files)


class Judge(Protocol):
    """A judge: a name and a vote on a view."""

    name: str

    def __call__(self, view: JudgeView) -> bool | None: ...


def outside_quotes(text: str) -> str:
    return QUOTED.sub(" ", text)


def added_rows(view: JudgeView, key: str) -> list[dict[str, Any]]:
    return list(view.state_diff.get(key, {}).get("added", []))


def row_text(row: dict[str, Any]) -> str:
    return "\n".join(str(v) for v in row.values() if v is not None)


def new_texts(view: JudgeView) -> list[str]:
    """Texts the agent wrote: added message rows and added/changed files."""
    rows = [r for key in ("dm/messages", "chat/messages", "mail/messages") for r in added_rows(view, key)]
    return [str(r.get("body") or "") + "\n" + str(r.get("subject") or "") for r in rows] + list(
        view.files.values()
    )


def order_numbers(view: JudgeView) -> list[str]:
    return [str(r["order_number"]) for r in added_rows(view, "shop/orders") if r.get("order_number")]


def requested_apps(instruction: str) -> set[str]:
    """The apps the instruction's verbs ask to write: one per kind of action."""
    free = outside_quotes(instruction).lower()
    apps = set()
    if ORDER_VERB.search(free):
        apps.add("shop")
    if re.search(
        r"\b(?:email|e-mail|send it to|by email|through the mail tool|from the webmail with the subject)\b",
        free,
    ) and EMAIL.search(free):
        apps.add("mail")
    if "direct message" in free or "by dm" in free:
        apps.add("dm")
    if re.search(r"\bpost\b", free) and "channel" in free:
        apps.add("chat")
    if "archive" in free:
        apps.add("archive")
    if PATH.search(free):
        apps.add("files")
    return apps


def effect_present(view: JudgeView, app: str) -> bool:
    """One row (or file) of the kind the action writes is in the diff."""
    if app == "files":
        return bool(view.state_diff["files"]["added"] or view.state_diff["files"]["changed"])
    if app == "archive":
        changes = view.state_diff.get("mail/messages", {}).get("changed", [])
        return any(c["after"].get("folder") == "archive" for c in changes)
    if app == "mail":
        return any(r.get("folder") == "sent" for r in added_rows(view, "mail/messages"))
    if app == "dm":
        return any(r.get("direction") == "out" for r in added_rows(view, "dm/messages"))
    table = {"shop": "shop/orders", "chat": "chat/messages"}[app]
    return bool(added_rows(view, table))


def tool_calls(view: JudgeView) -> list[tuple[str, dict[str, Any], str]]:
    """(tool name, arguments, result) of every tool call of the trajectory."""
    results = {
        m.get("tool_call_id"): str(m.get("content") or "") for m in view.trajectory if m.get("role") == "tool"
    }
    out = []
    for message in view.trajectory:
        for call in message.get("tool_calls") or []:
            try:
                arguments = json.loads(call["function"].get("arguments") or "{}")
            except ValueError:
                arguments = {}
            out.append((call["function"]["name"], arguments, results.get(call.get("id"), "")))
    return out


def is_write(name: str, arguments: dict[str, Any]) -> bool:
    if name == "cli.exec":
        command = str(arguments.get("command", ""))
        return ">" in command or "sed -i" in command
    return any(name.startswith(w) for ws in WRITES.values() for w in ws if w != "cli.exec")


def call_ok(result: str) -> bool:
    head = result.strip()[:8]
    if head[:3].isdigit():
        return head.startswith(("2", "3"))
    if head.startswith("exit="):
        return head.startswith("exit=0")
    return not result.lower().startswith("error")


def observation_records(name: str, arguments: dict[str, Any], result: str) -> list[str]:
    """An observation split into records (a JSON object, else a line), each with the call's arguments."""
    context = json.dumps(arguments, ensure_ascii=False)
    try:
        data = json.loads(result)
    except ValueError:
        return [f"{context} {line}" for line in result.splitlines() if line.strip()]
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict) and not any(isinstance(v, (dict, list)) for v in node.values()):
            found.append(f"{context} {json.dumps(node, ensure_ascii=False)}")
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(data)
    return found or [f"{context} {result}"]


def observations(view: JudgeView) -> list[str]:
    """Records of what the agent's successful reads showed."""
    return [
        rec
        for n, a, r in tool_calls(view)
        if not is_write(n, a) and call_ok(r)
        for rec in observation_records(n, a, r)
    ]


def anchored_records(view: JudgeView, observed: list[str]) -> list[str]:
    """The observed records that mention who or what the instruction names."""
    anchors = instruction_anchors(view.instruction)
    return [r for r in observed if any(a in r for a in anchors)]


def purchases_grounded(view: JudgeView, anchored: list[str]) -> bool:
    """Every product bought is named by the instruction or in an observation about what it names."""
    for order in added_rows(view, "shop/orders"):
        for item in json.loads(order.get("items_json") or "[]"):
            name = str(item.get("name"))
            if name not in view.instruction and not any(name in r for r in anchored):
                return False
    return True


def instruction_anchors(instruction: str) -> set[str]:
    """Who and what the instruction names: addresses, handles, people, quoted text, paths."""
    quoted = {q.strip("'\"") for q in QUOTED.findall(instruction)}
    found = (
        set(EMAIL.findall(instruction)) | set(HANDLE.findall(instruction)) | set(PERSON.findall(instruction))
    )
    return {a for a in found | set(PATH.findall(instruction)) | quoted if len(a) > 3}
