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

#: A quotation: an apostrophe inside a word ("jonas.s's") neither opens nor closes one.
QUOTED = re.compile(r"(?<!\w)'[^']*'(?!\w)|\"[^\"]*\"")
PATH = re.compile(r"\b(?:[\w.-]+/)*[\w-]+\.(?:md|txt)\b")
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
HANDLE = re.compile(r"\b[a-z]+\.[a-z]\b")
PERSON = re.compile(r"\b[A-Z][a-z]+ [A-Z][a-z]+\b")
ORDER_VERB = re.compile(r"\b(?:buy|order (?:it|the|something|exactly|one))\b", re.I)
DATA = re.compile(r"ORD-[\w]+|SKU-[\w-]+|\d{4}-\d{2}-\d{2}|\b\d{1,2}:\d{2}\b|\d+\.\d{2}\b")
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
        rf"\b(?:move|cancel|add|shift|put)\b{_GAP}{{0,60}}?\b(?:calendar|event|entry)\b"
        rf"|\b(?:calendar|event|entry)\b{_GAP}{{0,30}}?\b(?:to the same time|accordingly|to match|agree)\b"
    ),
    "bank": re.compile(
        rf"\b(?:transfer|move|pay)\b{_GAP}{{0,50}}?\b(?:from checking|to savings|in the web bank)\b"
    ),
    "flights": re.compile(
        rf"\b(?:rebook|cancel|change|move|book|push)\b{_GAP}{{0,40}}?\b(?:flight|booking|trip)\b"
    ),
    "accounts": re.compile(rf"\b(?:set|change|rotate|reset)\b{_GAP}{{0,40}}?\bpassword\b"),
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
    apps |= {app for app, verbs in LIFE_VERBS.items() if verbs.search(free)}
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
    if app in LIFE_VERBS:
        return any(e["added"] or e["changed"] for k, e in view.state_diff.items() if k.startswith(app + "/"))
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


# -- where a written value came from ------------------------------------------------------------------
#: A date-time stamp is a record's metadata (when it was sent), not content the instruction points at.
STAMP = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2})?(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?")


def copied_stamps_out(text: str, observed: str) -> str:
    """`text` without the date-time stamps it copied whole from `observed` (a file's "departing
    2026-03-12T06:25:00" sent on as the file asked): the reads' stamps are dropped as metadata
    before their values are compared, so such a copy would read as a date and time never seen."""
    return STAMP.sub(lambda m: " " if m.group() in observed else m.group(), text)


WORD = re.compile(r"[a-z0-9]+")
#: A hyphenated noun of the instruction names the kind of message it points at ('stand-up', 'go-ahead').
COMPOUND = re.compile(r"\b[A-Za-z]+-[A-Za-z]+\b")
#: Words an instruction uses for what to do, not for where to look.
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "the",
        "to",
        "of",
        "in",
        "on",
        "at",
        "for",
        "by",
        "with",
        "from",
        "it",
        "its",
        "it's",
        "that",
        "this",
        "then",
        "into",
        "using",
        "use",
        "your",
        "you",
        "one",
        "each",
        "every",
        "write",
        "read",
        "find",
        "open",
        "save",
        "put",
        "add",
        "send",
        "sent",
        "email",
        "mail",
        "shell",
        "webmail",
        "tool",
        "through",
        "line",
        "file",
        "files",
        "order",
        "number",
        "subject",
        "as",
        "is",
        "be",
        "was",
        "are",
        "there",
        "their",
        "them",
        "about",
        "what",
        "which",
    ]
)


def observation_units(view: JudgeView) -> list[str]:
    """Each successful read's result in trajectory order: one unit per JSON record, else the whole page."""
    units: list[str] = []
    for name, arguments, result in tool_calls(view):
        if is_write(name, arguments) or not call_ok(result):
            continue
        try:
            json.loads(result)
        except ValueError:
            units.append(f"{json.dumps(arguments, ensure_ascii=False)} {result}")
            continue
        units += observation_records(name, arguments, result)
    return units


def occurs(piece: str, text: str) -> bool:
    """`piece` is in `text` as a whole value: not glued to a longer word, number or time."""
    return re.search(rf"(?<![\w/-])(?<!\d:){re.escape(piece)}(?![\w/]|[:-]\d)", text) is not None


def source_units(view: JudgeView) -> list[str]:
    """The observed unit(s) the instruction points at.

    Among the units that mention who or what the instruction names, those sharing the most of its
    remaining words, a kind of message it names ('go-ahead', 'stand-up') counting most; of these the latest, since a request
    for a person's message means their current one. Time stamps are dropped: they are metadata.
    """
    anchors = instruction_anchors(view.instruction)
    words = {
        w
        for w in WORD.findall(outside_quotes(view.instruction).lower())
        if len(w) > 2 and w not in STOPWORDS and not any(w in a.lower() for a in anchors)
    } | {w for q in QUOTED.findall(view.instruction) for w in WORD.findall(q.lower()) if len(w) > 2}
    kinds = {k.lower() for k in COMPOUND.findall(outside_quotes(view.instruction))}
    scored = []
    for unit in observation_units(view):
        if not any(a in unit for a in anchors):
            continue
        text = STAMP.sub(" ", unit)
        flat = re.sub(r"[\s-]+", " ", text.lower())
        kind = sum(3 for k in kinds if re.sub(r"-", " ", k) in flat)
        scored.append((kind + len(words & set(WORD.findall(text.lower()))), text))
    if not scored:
        return []
    best = max(score for score, _ in scored)
    return [text for score, text in scored if score == best][-1:]


def value_pieces(text: str) -> list[str]:
    """The pieces of a written text a value may fill: segments and the data tokens in them."""
    text = re.sub(r"\[[ xX]\]", " ", text)
    pieces = [s.strip(" .-#*>") for s in SEGMENT.split(text)]
    return [p for p in pieces if len(p) >= 4]


def followed_units(view: JudgeView, sources: list[str]) -> list[str]:
    """Units of reads whose arguments name a path or value the source gave (a file the mail asked for,
    the page of an order the todo list names: ``web.GET /orders/ORD-00302``)."""
    source = "\n".join(sources)
    out = []
    for name, arguments, result in tool_calls(view):
        if is_write(name, arguments) or not call_ok(result):
            continue
        asked = json.dumps(arguments, ensure_ascii=False)
        named = PATH.findall(asked) + ORDER_NUMBER.findall(f"{name} {asked}")
        if named and all(occurs(p, source) for p in named):
            out.append(STAMP.sub(" ", result))
    return out


def values_from_source(view: JudgeView) -> bool:
    """Every value the agent wrote that the instruction does not dictate comes from the source it names.

    A data token (date, time, amount, SKU, path) must be in the source (or the agent's new order); a
    piece of text the agent copied from anything it read must be copied from the source, whole: a
    piece found elsewhere (another message, an older stand-up, the shop) or cut short is a wrong value.
    """
    sources = source_units(view)
    sources += followed_units(view, sources)
    orders = added_rows(view, "shop/orders")
    dictated = (
        view.instruction
        + "\n"
        + "\n".join(f"{o['order_number']} {o['total_cents'] / 100:.2f}" for o in orders)
    )
    lower = dictated.lower()
    raw = "\n".join(observation_units(view))
    observed = STAMP.sub(" ", raw)
    for text in new_texts(view):
        for token in DATA.findall(copied_stamps_out(text, raw)) + PATH.findall(text):
            if not occurs(token, dictated) and not any(occurs(token, s) for s in sources):
                return False
        for piece in value_pieces(text):
            if piece.lower() in lower:
                continue
            if occurs(piece, observed) and not any(occurs(piece, s) for s in sources):
                return False
            if len(piece) >= 8 and not occurs(piece, observed) and any(piece in s for s in sources):
                return False  # the source's value, cut short
    free = outside_quotes(view.instruction)
    for pattern in formats(view.instruction):
        for text in new_texts(view):
            for line in text.splitlines():
                found = pattern.fullmatch(line.strip())
                for value in found.groups() if found else ():
                    value = value.strip()
                    if not occurs(value, free) and not any(occurs(value, s) for s in sources):
                        return False  # the instruction's placeholder filled from elsewhere
    return products_from(view, sources)


def products_from(view: JudgeView, sources: list[str]) -> bool:
    """Every product bought is named by the instruction or in the source it points at."""
    for order in added_rows(view, "shop/orders"):
        for item in json.loads(order.get("items_json") or "[]"):
            name = str(item.get("name"))
            if not occurs(name, view.instruction) and not any(occurs(name, s) for s in sources):
                return False
    return True


#: A placeholder of a quoted format ('- DATE TIME TOPIC @ PLACE'): a capitalised word.
PLACEHOLDER = re.compile(r"(?<![\w-])[A-Z]{3,}(?![\w-])")  # not the ORD of ORD-00300


def formats(instruction: str) -> list[re.Pattern[str]]:
    """The instruction's quoted line formats as patterns, one group per placeholder."""
    out = []
    for quoted in QUOTED.findall(instruction):
        body = quoted[1:-1].strip()
        if not PLACEHOLDER.search(body):
            continue
        parts = PLACEHOLDER.split(body)
        literal = [r"\s+".join(re.escape(w) for w in p.split(" ")) for p in parts]
        out.append(re.compile("(.+?)".join(literal)))
    return out
