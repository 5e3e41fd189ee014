"""What a world judge may see (`JudgeView`: instruction, trajectory, raw diff) and how it reads it.

Shared by the judges in `worlds/judges.py`: the instruction's named entities and requested
actions, the agent's tool calls and observations (split into records), and the grounding helpers.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from difflib import SequenceMatcher
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
    ),
    "bank": re.compile(
        rf"\b(?:transfer|move|pay)\b{_GAP}{{0,50}}?\b(?:from checking|to savings|in the web bank)\b"
    ),
    "flights": re.compile(
        rf"\b(?:rebook|cancel|call off|change|move|book|push|update)\b{_GAP}{{0,40}}?\b(?:flight|booking|trip)\b"
        rf"|\bflights tool to (?:cancel|rebook|change|book|update)\b"
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


#: Tables whose rows an instruction names before it asks to change them (an event by its title, a
#: booking by its destination or confirmation code).
NAMED_ROWS = ("calendar/events", "flights/bookings")


def named_row(view: JudgeView, key: str, row: dict[str, Any]) -> bool:
    """A row of `key` the agent changed (its state before) or added is one the instruction names:
    the event it cancels, the booking it moves, the flight it books to the place the request
    names (any row of another table passes)."""
    if key not in NAMED_ROWS:
        return True
    return any(a in row_text(row) for a in instruction_anchors(view.instruction))


def unnamed_rows(view: JudgeView) -> bool:
    """Some event or booking the agent added or changed is none the instruction names."""
    for key in NAMED_ROWS:
        entry = view.state_diff.get(key, {})
        rows = [c["before"] for c in entry.get("changed", [])] + list(entry.get("added", []))
        if not all(named_row(view, key, row) for row in rows):
            return True
    return False


def written_starts(view: JudgeView) -> list[str]:
    """The start stamps the agent set: of calendar events it added or moved, of bookings it made or
    moved (``2026-03-14T06:40:00``)."""
    out = []
    for key, field in (("calendar/events", "start"), ("flights/bookings", "depart_at")):
        entry = view.state_diff.get(key, {})
        out += [str(r.get(field) or "") for r in entry.get("added", [])]
        out += [str(c["after"].get(field) or "") for c in entry.get("changed", []) if field in c["fields"]]
    return [s for s in out if STAMP.fullmatch(s)]


#: A code nobody can work out, only read: a confirmation (AXT042), a bank reference (RNYQT030), an
#: order number or a SKU, standing alone (not the name of a file, trip-VXE020.md).
CODE = re.compile(r"(?<![\w/.-])(?:[A-Z]{3,6}\d{3}|ORD-\w+|SKU-[\w-]+)(?![\w/-]|\.\w)")


def first_written(view: JudgeView, code: str) -> bool:
    """The agent wrote `code` before any read showed it (nor does the instruction name it): a code it
    made up, which a later read of its own write (the savings page listing the memo it just typed)
    does not make seen."""
    if occurs(code, view.instruction) or code in order_numbers(view):
        return False  # dictated, or the number of the order it placed
    for name, arguments, result in tool_calls(view):
        if is_write(name, arguments) and code in json.dumps(arguments, ensure_ascii=False):
            return True
        if call_ok(result) and occurs(code, result):
            return False  # shown by a read, or by what a write answered (a checkout's new order)
    return False


#: A web write on one record (``web.POST /calendar/5/move``): the record's page, ``/calendar/5``.
RECORD_WRITE = re.compile(r"web\.POST (/[a-z]+/\d+)/")


def unopened_records(view: JudgeView) -> bool:
    """The agent wrote to a record whose page it never opened (the web shows a record's id only in
    its address): it moved event 5 having read event 4."""
    opened: set[str] = set()
    for name, _, result in tool_calls(view):
        found = RECORD_WRITE.match(name)
        if found and found.group(1) not in opened:
            return True
        if name.startswith("web.GET ") and call_ok(result):
            opened.add(name.removeprefix("web.GET ").split("?")[0])
    return False


def named_whole(value: str, text: str) -> bool:
    """`value` is in `text` as a whole name, not the start of a longer one (the login
    'leila.petersen' is not the 'leila.petersen@designboard.example' a mail names)."""
    return re.search(rf"(?<![\w.@+-]){re.escape(value)}(?![\w@+-]|\.\w)", text) is not None


def changed_logins(view: JudgeView) -> list[str]:
    """The logins whose password the agent set."""
    return [
        str(c["before"].get("username")) for c in view.state_diff.get("accounts/users", {}).get("changed", [])
    ]


def clock_of(stamp: str) -> str:
    """The time of day a stamp sets, as a person writes it: ``06:40`` (``06:40:01`` when its seconds
    are not zero, which nobody reads anywhere)."""
    return stamp[11:16] if stamp[17:19] in ("", "00") else stamp[11:19]


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
    records: list[str] = []
    for name, arguments, result in tool_calls(view):
        if is_write(name, arguments) and before_writing:
            break
        if not is_write(name, arguments) and call_ok(result):
            records += observation_records(name, arguments, result)
    return records


def anchored_records(view: JudgeView, observed: list[str]) -> list[str]:
    """The observed records that mention who or what the instruction names; when none does, those
    read before the agent's first write that hold the words its formats wrap a value in
    (`told_apart`)."""
    anchors = instruction_anchors(view.instruction)
    found = [r for r in observed if any(a in r for a in anchors)]
    return found or told_apart(view.instruction, observations(view, before_writing=True))


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


#: Who wrote a message: its sender, peer or author field (JSON) or a web mail page's "From".
AUTHOR = re.compile(r'"(?:sender|peer|author)": "([^"]+)"|\bFrom (\S+@\S+)')


def source_units(view: JudgeView) -> list[str]:
    """The observed unit(s) the instruction points at.

    Among the units that mention who or what the instruction names, those sharing the most of its
    remaining words, a kind of message it names ('go-ahead', 'stand-up') and a message written by
    someone it names ('Astrid Berg emailed asking to move ...': her mail, not the calendar page of
    the event she names) counting most; of these the latest, since a request for a person's message
    means their current one. Time stamps are dropped: they are metadata.
    """
    anchors = instruction_anchors(view.instruction)
    words = instruction_words(view.instruction)
    kinds = {k.lower() for k in COMPOUND.findall(outside_quotes(view.instruction))}
    scored = []
    for unit in observation_units(view):
        if not any(a in unit for a in anchors):
            continue
        text = STAMP.sub(" ", unit)
        flat = re.sub(r"[\s-]+", " ", text.lower())
        kind = sum(3 for k in kinds if re.sub(r"-", " ", k) in flat)
        kind += 3 if {g for found in AUTHOR.findall(unit) for g in found if g} & anchors else 0
        scored.append((kind + len(words & set(WORD.findall(text.lower()))), text))
    if not scored:
        return [STAMP.sub(" ", r) for r in told_apart(view.instruction, observations(view, True))[-1:]]
    best = max(score for score, _ in scored)
    return [text for score, text in scored if score == best][-1:]


def instruction_words(instruction: str) -> set[str]:
    """The words of the instruction that say where to look: not its stop words, not inside who or
    what it names; a quoted text's words count."""
    anchors = instruction_anchors(instruction)
    return {
        w
        for w in WORD.findall(outside_quotes(instruction).lower())
        if len(w) > 2 and w not in STOPWORDS and not any(w in a.lower() for a in anchors)
    } | {w for q in QUOTED.findall(instruction) for w in WORD.findall(q.lower()) if len(w) > 2}


def told_apart(instruction: str, records: list[str]) -> list[str]:
    """What an instruction that names nothing observed still points at: the records holding the
    words its quoted formats wrap a value in ('Record the savings transfer of day 4' with '- <time>:
    moved <amount> to savings' names no sender, title or file the bank shows, but its row 'Transfer
    to savings' holds 'to savings'). Two words at least: one word alone tells nothing apart."""
    pieces = {
        piece.strip(" -:;,.()[]'\"").lower()
        for quoted in QUOTED.findall(instruction)
        if PLACEHOLDER.search(quoted)
        for piece in PLACEHOLDER.split(quoted[1:-1])
    }
    pieces = {p for p in pieces if len(p.split()) >= 2 and len(p) >= 8}
    return [r for r in records if any(p in STAMP.sub(" ", r).lower() for p in pieces)]


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
    labelled = labelled_values(view)
    units = observation_units(view)
    if any(not read_as(value, label, labels, units) for label, value, labels in labelled):
        return False  # a value written under one name that the agent read as another's (or never)
    names = {label for label, _, _ in labelled}
    sources += [STAMP.sub(" ", u) for u in units if any(re.search(rf"\b{n}\b", u, re.I) for n in names)]
    orders = added_rows(view, "shop/orders")
    dictated = (
        view.instruction
        + "\n"
        + "\n".join(f"{o['order_number']} ${o['total_cents'] / 100:.2f}" for o in orders)
    )
    lower = dictated.lower()
    raw = "\n".join(observation_units(view))
    observed = STAMP.sub(" ", raw)
    for start in written_starts(view):
        if not occurs(clock_of(start), dictated) and not any(occurs(clock_of(start), s) for s in sources):
            return False  # an event or departure set to a time of day the source does not give
    if any(not any(named_whole(login, s) for s in [dictated, *sources]) for login in changed_logins(view)):
        return False  # a password set for a login neither the request nor its source names
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
    if altered_copy(view):
        return False  # the dictated text, written with something changed
    free = outside_quotes(view.instruction)
    for value in format_values(view):
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


#: How alike a written line and a dictated text are when one is the other altered.
ALTERED = 0.8
#: A figure of a text: a word with a digit in it (a code, a date, a time, an amount).
FIGURE = re.compile(r"[\w.:,$-]*\d[\w.:,$-]*")
#: A placeholder of a quoted format: a capitalised word ('- DATE TIME TOPIC @ PLACE'; not the ORD
#: of ORD-00300) or words in angle brackets ('checking $<amount>').
PLACEHOLDER = re.compile(r"(?<![\w-])[A-Z]{3,}(?![\w-])|<[^<>']+>")


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


def altered_copy(view: JudgeView) -> bool:
    """A line the agent wrote is the instruction's dictated text with a figure changed: it reads
    nearly the same as a quoted text without placeholders ('Copenhagen -> Edinburgh, departs
    2026-03-10 at 07:40, confirmation ELX030') but lacks one of its codes, dates, times or amounts
    (``... confirmation ELX031``). A heading that drops a word ('# Stand-up 2026-03-05' for the
    subject 'Stand-up digest 2026-03-05') changes no figure."""
    dictated = [
        q[1:-1] for q in QUOTED.findall(view.instruction) if len(q) > 16 and not PLACEHOLDER.search(q)
    ]
    for text in new_texts(view):
        for line in text.splitlines():
            line = line.strip()
            for quote in dictated:
                changed = set(FIGURE.findall(quote)) - set(FIGURE.findall(line))
                if changed and SequenceMatcher(None, line, quote).ratio() >= ALTERED:
                    return True
    return False


def format_values(view: JudgeView) -> list[str]:
    """The values the agent wrote into the placeholders of the instruction's quoted formats."""
    out = []
    for pattern in formats(view.instruction):
        for text in new_texts(view):
            for line in text.splitlines():
                found = pattern.fullmatch(line.strip())
                out += [value.strip() for value in (found.groups() if found else ())]
    return out


def labelled_values(view: JudgeView) -> list[tuple[str, str, frozenset[str]]]:
    """(label, value, labels) for every value the agent wrote into a placeholder that one of the
    instruction's quoted one-word names precedes in its format: 'checking $<amount>, savings
    $<amount>' for the 'Checking' and 'Savings' balances gives ("checking", the first amount) and
    ("savings", the second), each to be read where that name, and not the other, is what it is of."""
    names = {q[1:-1].lower() for q in QUOTED.findall(view.instruction) if re.fullmatch(r"'[A-Za-z]{3,}'", q)}
    out = []
    for quoted in QUOTED.findall(view.instruction):
        parts = PLACEHOLDER.split(quoted[1:-1].strip())
        before = [WORD.findall(p.lower())[-1:] for p in parts[:-1]]
        labels = [b[0] if b and b[0] in names else "" for b in before]
        if len(parts) < 2 or not any(labels):
            continue
        pattern = formats(quoted)[0]
        for text in new_texts(view):
            for line in text.splitlines():
                found = pattern.fullmatch(line.strip())
                for label, value in zip(labels, found.groups() if found else (), strict=False):
                    if label:
                        out.append((label, value.strip(), frozenset(filter(None, labels))))
    return out


def read_as(value: str, label: str, labels: frozenset[str], units: list[str]) -> bool:
    """`value` is in some observed unit where, of `labels`, `label` is the last named before it
    (the savings page reads 'Savings Balance $8,060.00': that amount is savings', not checking's)."""
    names = re.compile("|".join(rf"\b{re.escape(n)}\b" for n in sorted(labels)), re.I)
    for unit in units:
        text = STAMP.sub(" ", unit)
        for found in re.finditer(rf"(?<![\w/-]){re.escape(value)}(?![\w/]|[:-]\d)", text):
            named = names.findall(text, 0, found.start())
            if named and named[-1].lower() == label:
                return True
    return False
