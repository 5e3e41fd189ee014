"""What a world judge may see (`JudgeView`: instruction, trajectory, raw diff) and how it reads it.

Shared by the judges in `worlds/judges.py`: the instruction's named entities and requested
actions, the agent's tool calls and observations (split into records), and whole-value matching.
What the agent acted on lives in `judge_writes`, where a written value came from in
`judge_sources`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, TypeVar

from envpipeline.worlds.state import diff

T = TypeVar("T")

#: A quotation: an apostrophe inside a word ("jonas.s's") neither opens nor closes one.
QUOTED = re.compile(r"(?<!\w)'[^']*'(?!\w)|\"[^\"]*\"")

PATH = re.compile(r"\b(?:[\w.-]+/)*[\w-]+\.(?:md|txt)\b")

EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")

HANDLE = re.compile(r"\b[a-z]+\.[a-z]\b")

PERSON = re.compile(r"\b[A-Z][a-z]+ [A-Z][a-z]+\b")

ORDER_VERB = re.compile(r"\b(?:buy|order (?:it|the|something|exactly|one))\b", re.I)

#: A datum a judge checks: an order number, a SKU, a date, a time, an amount ("1,745.00" whole).
DATA = re.compile(
    r"ORD-[\w]+|SKU-[\w-]+|\d{4}-\d{2}-\d{2}|\b\d{1,2}:\d{2}\b|\b\d{1,3}(?:,\d{3})+\.\d{2}\b|\d+\.\d{2}\b"
)

ORDER_NUMBER = re.compile(r"ORD-\w+")

PRICE = re.compile(r"\$(\d+\.\d{2})")

SEGMENT = re.compile(r"[\n;,()]|(?<!\d):|:(?!\d)|\s—\s|\s-\s")  # a time's colon does not split

#: A list item's bullet and checkbox before a segment (``- [x] ``), which is no part of its value.
CHECKBOX = re.compile(r"^[\s.-]*(?:\[[ xX]?\][\s.-]*)?")

#: Fields an agent changes by merely using the apps.
VOLATILE_FIELDS = {"mail/messages": {"is_read"}, "shop/products": {"stock"}}

VOLATILE_TABLES = {"shop/cart_items"}

#: Tool calls that write, by the app they write.
WRITES: dict[str, tuple[str, ...]] = {
    "shop": ("web.POST /checkout",),
    "mail": ("mcp.mail_send", "web.POST /mail/send", "web.POST /mail/"),
    "dm": ("mcp.dm_send",),
    "chat": ("mcp.chat_post",),
    "calendar": ("web.POST /calendar/",),
    "bank": ("web.POST /bank/",),
    "flights": ("mcp.flights_change", "mcp.flights_cancel", "mcp.flights_book"),
    "accounts": ("mcp.accounts_set_password",),
    "files": ("cli.exec",),
}

#: Text between a verb and its object within one clause: a full stop ends the clause, but not one
#: inside an amount ("transfer 250.00 from checking": before, the bank was never asked for).
_GAP = r"(?:[^.;]|(?<=\d)\.(?=\d))"

#: The instruction words that ask for a write to the calendar, bank, flights or accounts app.
LIFE_VERBS: dict[str, re.Pattern[str]] = {
    "calendar": re.compile(
        rf"\b(?:move|cancel|add|shift|put|update)\b{_GAP}{{0,60}}?\b(?:calendar|event|entry)\b"
        rf"|\b(?:calendar|event|entry)\b{_GAP}{{0,30}}?\b(?:to the same time|accordingly|to match|agree)\b"
        r"|\ba (?:new )?(?:web )?calendar (?:event|entry)\b"  # 'a web calendar event ... a day before'
    ),
    "bank": re.compile(
        rf"\b(?:transfer|move|pay)\b{_GAP}{{0,50}}?\b(?:from checking|to savings|in the web bank)\b"
    ),
    "flights": re.compile(
        rf"\b(?:rebook|cancel|call off|change|move|book|push|update)\b{_GAP}{{0,40}}?\b(?:flight|booking|trip)\b"
        rf"|\bflights tool to (?:cancel|rebook|change|book|update)\b"
        rf"|\b(?:rebook|cancel|change|move|book)\b{_GAP}{{0,80}}?\b(?:with|through|via|using) the flights tool\b"
        r"|\ba new flight\b"
    ),
    "accounts": re.compile(rf"\b(?:set|change|rotate|reset)\b{_GAP}{{0,40}}?\b(?:password|accounts tool)\b"),
}

#: A web page's table row as the agent sees it (`agent_session.page_text`): its cells joined by this.
CELL = " | "

SUCCESS_CLAIM = "Done. I completed every step of the task successfully."

FAILURE_CLAIM = "I could not complete the task."


@dataclass(frozen=True)
class JudgeView:
    """What a judge may see: the instruction, the trajectory, the raw diff and the changed files' text."""

    instruction: str
    trajectory: list[dict[str, Any]]
    state_diff: dict[str, Any]
    files: dict[str, str]


def read_once(view: JudgeView, key: Any, read: Callable[[], T]) -> T:
    """`read()` the first time a judge asks for `key` of `view` (its calls, its observations), the
    same answer after: every judge of a panel reads them several times. The readings are kept
    beside the view's fields, as `functools.cached_property` keeps its values, not as one of them."""
    readings = view.__dict__.setdefault("_readings", {})
    if key not in readings:
        readings[key] = read()
    return readings[key]


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


@lru_cache(maxsize=256)  # a panel asks for each of a few instructions many times
def requested_apps(instruction: str) -> frozenset[str]:
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
    if re.search(rf"\bsend\b{_GAP}{{0,40}}?\bto\s+{EMAIL.pattern}", free):
        apps.add("mail")  # 'send that line to selin.holm@example.net in the webmail'
    if "direct message" in free or "by dm" in free or re.search(r"\bdm\s+[a-z]+\.[a-z]\b", free):
        apps.add("dm")  # 'DM astrid.m' asks for one as much as 'by direct message'
    if re.search(r"\bpost\b", free) and "channel" in free:
        apps.add("chat")
    if "archive" in free:
        apps.add("archive")
    if PATH.search(free):
        apps.add("files")
    apps |= {app for app, verbs in LIFE_VERBS.items() if verbs.search(free)}
    return frozenset(apps)


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
    if app in LIFE_VERBS:
        return any(e["added"] or e["changed"] for k, e in view.state_diff.items() if k.startswith(app + "/"))
    table = {"shop": "shop/orders", "chat": "chat/messages"}[app]
    return bool(added_rows(view, table))


def tool_calls(view: JudgeView) -> list[tuple[str, dict[str, Any], str]]:
    """(tool name, arguments, result) of every tool call of the trajectory."""
    return read_once(view, "calls", lambda: _tool_calls(view))


def _tool_calls(view: JudgeView) -> list[tuple[str, dict[str, Any], str]]:
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
    """An observation split into records, each with the call's arguments: a JSON object; a web
    page's table row, the rest of the page being one record (a detail page's lines are all about
    its heading); else a line (of a file, of a command's output)."""
    context = json.dumps(arguments, ensure_ascii=False)
    try:
        data = json.loads(result)
    except ValueError:
        lines = [line for line in result.splitlines() if line.strip()]
        if not name.startswith("web."):
            return [f"{context} {line}" for line in lines]
        page = " ".join(line for line in lines if CELL not in line)
        return [f"{context} {page}"] + [f"{context} {line}" for line in lines if CELL in line]
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


def observations(view: JudgeView, before_writing: bool = False) -> list[str]:
    """Records of what the agent's successful reads showed (`before_writing`: only those before its
    first write, which the world as the instruction found it holds, none echoing the agent)."""
    return read_once(view, ("observations", before_writing), lambda: _observations(view, before_writing))


def _observations(view: JudgeView, before_writing: bool) -> list[str]:
    records: list[str] = []
    for name, arguments, result in tool_calls(view):
        if is_write(name, arguments) and before_writing:
            break
        if not is_write(name, arguments) and call_ok(result):
            records += observation_records(name, arguments, result)
    return records


@lru_cache(maxsize=256)
def instruction_anchors(instruction: str) -> frozenset[str]:
    """Who and what the instruction names: addresses, handles, people, quoted text, paths."""
    quoted = {q.strip("'\"") for q in QUOTED.findall(instruction)}
    found = (
        set(EMAIL.findall(instruction)) | set(HANDLE.findall(instruction)) | set(PERSON.findall(instruction))
    )
    return frozenset(a for a in found | set(PATH.findall(instruction)) | quoted if len(a) > 3)


#: A date-time stamp is a record's metadata (when it was sent), not content the instruction points at.
STAMP = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2})?(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?")
#: A word, as the judges compare an instruction's words with a record's (lowercased).
WORD = re.compile(r"[a-z0-9]+")


def occurs(piece: str, text: str) -> bool:
    """`piece` is in `text` as a whole value: not glued to a longer word, number or time. It finds
    what ``(?<![\\w/-])(?<!\\d:)PIECE(?![\\w/]|[:-]\\d)`` would, without compiling a pattern per
    piece (the judges ask this a thousand times a view, more pieces than `re` keeps compiled)."""
    if not piece:
        return _WHOLE_EMPTY.search(text) is not None
    return next(whole_at(piece, text), None) is not None


def whole_at(piece: str, text: str) -> Iterator[int]:
    """Where `piece` starts in `text` as a whole value (`occurs`)."""
    start = text.find(piece)
    while start != -1:
        end = start + len(piece)
        before, after = text[start - 1 : start], text[end : end + 1]
        glued_before = (
            _word(before) or before in ("/", "-") or (before == ":" and text[start - 2 : start - 1].isdigit())
        )
        glued_after = (
            _word(after) or after == "/" or (after in (":", "-") and text[end + 1 : end + 2].isdigit())
        )
        if not glued_before and not glued_after:
            yield start
        start = text.find(piece, start + 1)


_WHOLE_EMPTY = re.compile(r"(?<![\w/-])(?<!\d:)(?![\w/]|[:-]\d)")


def _word(char: str) -> bool:
    """`char` is a word character as `re` reads ``\\w``."""
    return char != "" and (char.isalnum() or char == "_")
