"""Where a value a world attempt wrote came from: the observed records about what the instruction
names (`anchored_records`), the message it points at (`source_units`), and whether every written
value, placeholder of a quoted format and labelled figure comes from there (`values_from_source`).
"""

from __future__ import annotations

import json
import re
from difflib import SequenceMatcher

from envpipeline.worlds.judge_view import (
    DATA,
    ORDER_NUMBER,
    PATH,
    QUOTED,
    SEGMENT,
    STAMP,
    WORD,
    JudgeView,
    added_rows,
    call_ok,
    instruction_anchors,
    is_write,
    new_texts,
    observation_records,
    observations,
    occurs,
    outside_quotes,
    read_once,
    tool_calls,
    whole_at,
)
from envpipeline.worlds.judge_writes import changed_logins, clock_of, named_whole, written_starts


def anchored_records(view: JudgeView, observed: list[str]) -> list[str]:
    """The observed records that mention who or what the instruction names; when none does, those
    read before the agent's first write that hold the words its formats wrap a value in
    (`told_apart`)."""
    anchors = instruction_anchors(view.instruction)
    found = [r for r in observed if any(a in r for a in anchors)]
    return found or told_apart(view.instruction, observations(view, before_writing=True))


def purchases_grounded(view: JudgeView, anchored: list[str]) -> bool:
    """Every product bought is named by the instruction, or by an observation about what it names
    that the request describes best among the lines of its read (`described_best`)."""
    for order in added_rows(view, "shop/orders"):
        for item in json.loads(order.get("items_json") or "[]"):
            name = str(item.get("name"))
            if name not in view.instruction and not described_best(view, name, anchored):
                return False
    return True


def described_best(view: JudgeView, name: str, records: list[str]) -> bool:
    """Some record naming `name` holds as many of the instruction's words as any other line of the
    same read: of '- [x] Classic passport wallet (done)' and '- [ ] Classic light stand (running
    low)', 'the item that is running low' is the light stand, whichever line names the wallet."""
    words = instruction_words(view.instruction)

    def score(record: str) -> int:
        return len(words & set(WORD.findall(record.lower())))

    groups: dict[str, list[str]] = {}
    for record in records:
        groups.setdefault(read_of(record), []).append(record)
    return any(
        score(record) >= max(map(score, groups[read_of(record)])) for record in records if name in record
    )


#: A request that sizes a transfer as a share of something it points at ('5% of the salary').
SHARE = re.compile(r"(\d+(?:\.\d+)?)% of\b")

#: An amount as the bank shows it ('$2,400.00', '-$270.00'), in cents.
AMOUNT = re.compile(r"\$(\d{1,3}(?:,\d{3})*|\d+)\.(\d{2})\b")


def shares_from_source(view: JudgeView) -> bool:
    """A transfer the request sizes as a share ('Move 5% of the salary that came in on 2026-03-04')
    moves that share (rounded down or to the nearest cent) of an amount read before the first
    write, in a record of the request's dates (else of most of its words): of the checking page,
    a row of 2026-03-04, not the opening balance's."""
    share = SHARE.search(outside_quotes(view.instruction))
    moved = {abs(int(row["amount_cents"])) for row in added_rows(view, "bank/transactions")}
    if share is None or not moved:
        return True
    records = [r for r in observations(view, before_writing=True) if AMOUNT.search(r)]
    if not records:
        return False  # a share of something it never read
    dates = DATA.findall(outside_quotes(view.instruction))
    words = instruction_words(view.instruction)

    def fit(record: str) -> int:
        if dates:
            return sum(occurs(d, record) for d in dates)
        return len(words & set(WORD.findall(record.lower())))

    best = max(map(fit, records))
    percent = float(share.group(1))
    allowed = set()
    for record in (r for r in records if fit(r) == best):
        for whole, cents in AMOUNT.findall(record):
            base = int(whole.replace(",", "")) * 100 + int(cents)
            allowed |= {int(base * percent) // 100, round(base * percent / 100)}
    return moved <= allowed


def read_of(record: str) -> str:
    """The call arguments an observation record starts with (`observation_records`): its read."""
    try:
        return record[: json.JSONDecoder().raw_decode(record)[1]]
    except ValueError:
        return ""


def copied_stamps_out(text: str, observed: str) -> str:
    """`text` without the date-time stamps it copied whole from `observed` (a file's "departing
    2026-03-12T06:25:00" sent on as the file asked): the reads' stamps are dropped as metadata
    before their values are compared, so such a copy would read as a date and time never seen."""
    return STAMP.sub(lambda m: " " if m.group() in observed else m.group(), text)


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
    return read_once(view, "units", lambda: _observation_units(view))


def _observation_units(view: JudgeView) -> list[str]:
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
        return [
            STAMP.sub(" ", r)
            for r in told_apart(view.instruction, observations(view, before_writing=True))[-1:]
        ]
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


#: A request that says its value is in a message of one kind: (the words, the reads that show one).
SOURCE_KINDS: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (
        re.compile(
            r"\b(?:is|are) in (?:their|his|her|the) (?:latest |last )?(?:dm|direct message)\b|"
            r"\bsent me [^.]{0,60}\bby (?:dm|direct message)\b|\basked you (?:in|by) a direct message\b",
            re.I,
        ),
        ("mcp.dm_read",),
    ),
)


def source_kind_read(view: JudgeView) -> bool:
    """Where the request says the value is in a message of one kind ('the amount is in their latest
    DM'), a read of that kind succeeded: a guess, or the same person's calendar event, is no DM."""
    free = outside_quotes(view.instruction)
    for words, reads in SOURCE_KINDS:
        if words.search(free) and not any(
            name.startswith(reads) and call_ok(result) for name, _, result in tool_calls(view)
        ):
            return False
    return True


def values_from_source(view: JudgeView) -> bool:
    """Every value the agent wrote that the instruction does not dictate comes from the source it names.

    A data token (date, time, amount, SKU, path) must be in the source (or the agent's new order); a
    piece of text the agent copied from anything it read must be copied from the source, whole: a
    piece found elsewhere (another message, an older stand-up, the shop) or cut short is a wrong value.
    """
    if not source_kind_read(view):
        return False  # the message the value is in was never read
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
    if not formats_read_together(view):
        return False  # one line's figures taken from different records
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
    return [
        value
        for pattern in formats(view.instruction)
        for values in _filled(view, pattern)
        for value in values
    ]


def formats_read_together(view: JudgeView) -> bool:
    """The figures one line of a quoted format holds were read in one record ('- <time>: moved
    <amount> to savings', 'time and amount as the bank shows them': the transfer row's date and
    amount, not the salary row's date beside the transfer's amount). Values a format labels with
    a name of their own ('checking $<amount>, savings $<amount>') come from records of their own."""
    labelled = {value for _, value, _ in labelled_values(view)}
    records = [*observations(view), view.instruction]
    for pattern in formats(view.instruction):
        for values in _filled(view, pattern):
            figures = [d for v in values if v not in labelled for d in DATA.findall(v)]
            if len(figures) > 1 and not any(all(occurs(f, r) for f in figures) for r in records):
                return False
    return True


def _filled(view: JudgeView, pattern: re.Pattern[str]) -> list[list[str]]:
    """The values of each line the agent wrote that `pattern` (a quoted format) matches whole."""
    lines = [line.strip() for text in new_texts(view) for line in text.splitlines()]
    return [[v.strip() for v in found.groups()] for line in lines if (found := pattern.fullmatch(line))]


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
        for values in _filled(view, formats(quoted)[0]):
            out += [
                (label, value, frozenset(filter(None, labels)))
                for label, value in zip(labels, values)
                if label
            ]
    return out


def read_as(value: str, label: str, labels: frozenset[str], units: list[str]) -> bool:
    """`value` is in some observed unit where, of `labels`, `label` is the last named before it
    (the savings page reads 'Savings Balance $8,060.00': that amount is savings', not checking's)."""
    names = re.compile("|".join(rf"\b{re.escape(n)}\b" for n in sorted(labels)), re.I)
    for unit in units:
        text = STAMP.sub(" ", unit)
        for start in whole_at(value, text):
            named = names.findall(text, 0, start)
            if named and named[-1].lower() == label:
                return True
    return False
