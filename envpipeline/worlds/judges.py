"""Judges that see only what a grader sees: the instruction, the trajectory and the raw state diff.

No judge reads a task's criteria, expectations or solution. Each votes True (done), False (not
done) or None (abstains); `panel` takes a real majority of the votes cast, and a tie is no
decision (None), never broken in favour of one judge.

- `DiffJudge`: the effects the instruction asks for (files it names, an order when it says to buy
  or order, a sent e-mail to each address, a DM or chat post, an archived mail, a transfer, a
  calendar event, a flight change or a password it asks for: `requested_apps`) are in the diff,
  an order number it asks to pass on reaches every new message, a product bought is named in
  the message the instruction points at (`source_units`), every event or booking added or changed
  is one it names, and no line it dictates is written with a figure changed (`altered_copy`).
- `RuleReviewer`: the diff is consistent and minimal: nothing deleted, rows changed only in
  volatile fields, by an action the instruction asks for (an archived mail, a moved or cancelled
  event or booking it names, a transfer's balances, a password) or not at all, balances moved
  only by posted transactions, orders add up, at most one order per request, no placeholder text,
  order numbers written are of new orders or ones the agent read about, prices written match the
  new orders; and its content is right (`values_from_source`): it locates the observed message
  the instruction points at (who it names and who wrote it, the kind of message, the latest) and
  requires every written date, time, amount and path, a start time it set, every placeholder of
  the instruction's quoted formats ('- DATE TIME TOPIC @ PLACE', 'saved <amount>'), each value a
  format labels with one of its quoted names ('checking $<amount>' for the 'Checking' balance)
  read where that name is what it is of, and every piece of text copied from a read to come from
  that message whole, not from another one (the figures of one formatted line from one record);
  and it is consistent with the calls that made it: every successful write shows in the state
  (`judge_effects`), and a mail went through the interface its clause names.
- `TrajectoryJudge`: every app the diff changed was written by a successful tool call of the
  agent, and every successful write call shows in the diff (`judge_effects`: the counterfactual
  probe keeps a success's trajectory and breaks its state); the data the agent wrote (dates,
  times, prices, order numbers) was observed in a read before (as a whole value, not inside a
  time stamp, unless it copies that stamp whole), figures written together were read together,
  codes were shown before it typed them (not read back from its own write), the files, places
  and placeholder values it wrote were seen, and a bought product was named in an observation
  that mentions who or what the instruction names. It never reads the agent's final message.
- `LLMJudge`: the same view through `envpipeline.llm` when a client is configured.
"""

from __future__ import annotations

import json
import re
from typing import Any

from envpipeline.errors import LLMError
from envpipeline.llm import LLM
from envpipeline.worlds.judge_effects import (
    balances_add_up,
    named_mail_calls,
    sent_as_named,
    writes_took_effect,
)
from envpipeline.worlds.judge_sources import (
    altered_copy,
    anchored_records,
    copied_stamps_out,
    format_values,
    labelled_values,
    products_from,
    purchases_grounded,
    read_as,
    shares_from_source,
    source_units,
    values_from_source,
)
from envpipeline.worlds.judge_view import (
    CHECKBOX,
    DATA,
    EMAIL,
    HANDLE,
    LIFE_VERBS,
    ORDER_NUMBER,
    ORDER_VERB,
    PATH,
    PRICE,
    SEGMENT,
    STAMP,
    VOLATILE_FIELDS,
    VOLATILE_TABLES,
    WRITES,
    Judge,
    JudgeView,
    added_rows,
    call_ok,
    effect_present,
    is_write,
    new_texts,
    observations,
    occurs,
    order_numbers,
    outside_quotes,
    requested_apps,
    tool_calls,
)
from envpipeline.worlds.judge_writes import (
    CODE,
    changed_logins,
    clock_of,
    first_written,
    named_whole,
    unnamed_rows,
    unopened_records,
    written_starts,
)
from envpipeline.worlds.lifestore import CANCELLED

#: What an agent writes in place of a value it did not find: no request asks for it as a value
#: ('none' is left out: 'Attendees: none' can be a true answer).
STAND_IN = re.compile(r"unknown|n/a|null|tbd|to be (?:confirmed|determined)|placeholder|\?+|x{3,}", re.I)


#: Stand-ins that say a value is missing wherever they stand ('Meeting on unknown at 14:00').
STAND_IN_WORD = re.compile(r"\b(?:unknown|tbd|to be (?:confirmed|determined))\b", re.I)


def stands_in(text: str) -> bool:
    """Whether a written text puts a stand-in ('unknown', 'N/A', 'TBD', '???') where a value goes:
    a stand-in word anywhere, or one of its segments (`SEGMENT`: between separators, checkboxes and
    brackets taken off) that is nothing but a stand-in ('null', '???')."""
    if STAND_IN_WORD.search(text):
        return True
    pieces = [CHECKBOX.sub("", p).strip(" .![]<>") for p in SEGMENT.split(text)]
    return any(STAND_IN.fullmatch(piece) for piece in pieces)


class DiffJudge:
    """The effects the instruction asks for are in the diff."""

    name = "diff"

    def __call__(self, view: JudgeView) -> bool | None:
        free = outside_quotes(view.instruction)
        lower = free.lower()
        files = set(view.state_diff["files"]["added"]) | set(view.state_diff["files"]["changed"])
        if any(path not in files for path in PATH.findall(free)):
            return False
        orders = added_rows(view, "shop/orders")
        if ORDER_VERB.search(free) and len(orders) != 1:
            return False
        if not products_from(view, source_units(view)):
            return False  # a product other than the one the message it points at names
        sent = [r for r in added_rows(view, "mail/messages") if r.get("folder") == "sent"]
        for address in set(EMAIL.findall(free)):
            if not any(address in str(r.get("recipients") or "") for r in sent):
                return False
        dms = [r for r in added_rows(view, "dm/messages") if r.get("direction") == "out"]
        if "dm" in requested_apps(view.instruction):
            handles = set(HANDLE.findall(free))
            if not any(str(r.get("peer")) in handles for r in dms):
                return False
        posts = added_rows(view, "chat/messages")
        if re.search(r"\bpost\b", lower) and "channel" in lower and not posts:
            return False
        archived = [
            c for c in view.state_diff.get("mail/messages", {}).get("changed", []) if "folder" in c["fields"]
        ]
        if "archive" in lower and not any(c["after"].get("folder") == "archive" for c in archived):
            return False
        if any(not effect_present(view, app) for app in requested_apps(view.instruction) & set(LIFE_VERBS)):
            return False  # a transfer, an event, a flight or a password asked for and not in the diff
        if unnamed_rows(view):
            return False  # an event or booking added, moved or cancelled that the instruction never named
        if altered_copy(view):
            return False  # the text it dictates, written with something changed
        if "order number" in lower and orders:
            number = str(orders[0]["order_number"])
            messages = [str(r.get("body") or "") for r in dms + posts]
            if any(number not in m for m in messages) or not any(number in t for t in new_texts(view)):
                return False
        return bool(files or any(k != "files" for k in view.state_diff))


class RuleReviewer:
    """The diff is consistent (with itself and with the calls that made it) and minimal."""

    name = "rules"

    def __call__(self, view: JudgeView) -> bool | None:
        lower = outside_quotes(view.instruction).lower()
        if view.state_diff["files"]["removed"] or not writes_took_effect(view) or not sent_as_named(view):
            return False
        changed_any = bool(view.state_diff["files"]["added"] or view.state_diff["files"]["changed"])
        requested = requested_apps(view.instruction)
        for key, entry in view.state_diff.items():
            if key == "files" or key in VOLATILE_TABLES:
                continue
            if entry["removed"]:
                return False
            for change in entry["changed"]:
                extra = set(change["fields"]) - VOLATILE_FIELDS.get(key, set())
                archive = key == "mail/messages" and extra == {"folder"} and "archive" in lower
                asked = archive and change["after"].get("folder") == "archive"
                asked = asked or (key.split("/")[0] in requested and _an_action_change(key, change))
                if extra and not asked:
                    return False  # a change nobody asked for, or not of the kind the action makes
                changed_any = changed_any or bool(extra)
            changed_any = changed_any or bool(entry["added"])
        if not balances_add_up(view) or unnamed_rows(view):
            return False  # money moved outside a transaction; an event or booking nobody asked for
        if (
            len(
                archived := [
                    c
                    for c in view.state_diff.get("mail/messages", {}).get("changed", [])
                    if "folder" in c["fields"]
                ]
            )
            > 1
        ):
            return False
        orders = added_rows(view, "shop/orders")
        if len(orders) > len(ORDER_VERB.findall(outside_quotes(view.instruction))) or not _orders_add_up(
            view, orders
        ):
            return False
        seen = "\n".join([view.instruction, *observations(view)])
        numbers = set(order_numbers(view)) | set(ORDER_NUMBER.findall(seen))  # or one it read about
        prices = {
            f"{i['price_cents'] / 100:.2f}" for o in orders for i in json.loads(o.get("items_json") or "[]")
        }
        for text in new_texts(view):
            if stands_in(text):
                return False  # 'unknown' where a value goes (no token of the harness's own)
            if any(n not in numbers for n in ORDER_NUMBER.findall(text)):
                return False
            if orders and any(p not in prices for p in PRICE.findall(text)):
                return False
        return changed_any and not archived[1:] and values_from_source(view) and shares_from_source(view)


#: The fields a requested action of a life app changes: an event moved (start, end) or cancelled
#: (its title marked), an account's balance by a transfer or payment, a booking rebooked or
#: cancelled, a password set.
ACTION_FIELDS: dict[str, frozenset[str]] = {
    "calendar/events": frozenset({"start", "end", "title"}),
    "bank/accounts": frozenset({"balance_cents"}),
    "flights/bookings": frozenset({"status", "depart_at"}),
    "accounts/users": frozenset({"password_hash"}),
}


def _an_action_change(key: str, change: dict[str, Any]) -> bool:
    """The change is one the app's action makes: only its fields, and a title only by the mark of a
    cancellation ('Cancelled: ' before the old title), never rewritten."""
    if not set(change["fields"]) <= ACTION_FIELDS.get(key, frozenset()) | VOLATILE_FIELDS.get(key, set()):
        return False
    if "title" in change["fields"]:
        return str(change["after"].get("title")) == CANCELLED + str(change["before"].get("title"))
    return True


def _orders_add_up(view: JudgeView, orders: list[dict[str, Any]]) -> bool:
    """Each new order's total is the sum of its items, and stock fell by what was ordered."""
    stock = {
        c["after"].get("sku"): c["before"].get("stock", 0) - c["after"].get("stock", 0)
        for c in view.state_diff.get("shop/products", {}).get("changed", [])
    }
    bought: dict[str, int] = {}
    for order in orders:
        items = json.loads(order.get("items_json") or "[]")
        if not items or sum(i["quantity"] * i["price_cents"] for i in items) != order.get("total_cents"):
            return False
        for item in items:
            bought[item["sku"]] = bought.get(item["sku"], 0) + item["quantity"]
    return all(stock.get(sku) == n for sku, n in bought.items())


class TrajectoryJudge:
    """Writes are backed by the agent's successful calls; what it wrote, it had observed."""

    name = "trajectory"

    def __call__(self, view: JudgeView) -> bool | None:
        observed = observations(view)
        anchored = anchored_records(view, observed)
        return (
            _writes_backed(view)
            and writes_took_effect(view)
            and _values_seen(view, observed, anchored)
            and purchases_grounded(view, anchored)
            and shares_from_source(view)
            and _copied_whole(view, observed, anchored)
        )


def _writes_backed(view: JudgeView) -> bool:
    """Every app the diff changed, every file and every write the instruction asks for, was written
    by a successful call of the agent."""
    writes = [(n, a) for n, a, r in tool_calls(view) if is_write(n, a) and call_ok(r)]
    apps = {
        key.split("/")[0]
        for key, e in view.state_diff.items()
        if key != "files"
        and key not in VOLATILE_TABLES
        and (
            e["added"]
            or e["removed"]
            or any(set(c["fields"]) - VOLATILE_FIELDS.get(key, set()) for c in e["changed"])
        )
    }
    if any(view.state_diff["files"].values()):
        apps.add("files")
    if not apps:
        return False
    named = {"archive": ("web.POST /mail/",), "mail": named_mail_calls(view.instruction)}
    commands = [str(a.get("command", "")) for n, a in writes if n == "cli.exec"]
    if any(not any(path in c for c in commands) for path in PATH.findall(outside_quotes(view.instruction))):
        return False
    for app in requested_apps(view.instruction):
        prefixes = named.get(app) or WRITES[app]
        if not any(name.startswith(p) for name, _ in writes for p in prefixes):
            return False
    return all(
        any(name.startswith(prefix) for name, _ in writes for prefix in WRITES.get(app, ("?",)))
        for app in apps
    )


def _values_seen(view: JudgeView, observed: list[str], anchored: list[str]) -> bool:
    """What the agent wrote, it had read: dates, times and amounts in what it read about what the
    instruction names (and figures written together, together), start times of day it set, files
    and places it named, codes before it typed them, the request's placeholders, and a value under
    the name it was read as."""
    orders = added_rows(view, "shop/orders")
    raw = "\n".join(anchored)
    seen = STAMP.sub(" ", raw) + "\n" + view.instruction
    seen += "\n" + "\n".join(f"{o['order_number']} ${o['total_cents'] / 100:.2f}" for o in orders)
    together = [STAMP.sub(" ", r) for r in anchored] + [view.instruction]
    if any(not occurs(clock_of(start), seen) for start in written_starts(view)):
        return False  # an event or departure set to a time of day it never read
    if any(not named_whole(login, seen) for login in changed_logins(view)):
        return False  # a password set for a login it never read about what the instruction names
    if unopened_records(view):
        return False  # a record written to whose page it never opened
    everything_seen = "\n".join([*observed, view.instruction])
    known = "\n".join([seen, everything_seen, STAMP.sub(" ", everything_seen)])
    for text in new_texts(view):
        if stands_in(text):
            return False  # 'unknown' written where a value it should have read goes
        if any(not occurs(token, seen) for token in DATA.findall(copied_stamps_out(text, raw))):
            return False  # a date, time or amount it never saw about what the instruction names
        for segment in SEGMENT.split(copied_stamps_out(text, raw)):
            tokens = DATA.findall(segment)
            if len(tokens) > 1 and not any(all(occurs(t, r) for t in tokens) for r in together):
                return False  # values written together ('2026-03-08 at 14:00') no read showed together
        if any(not occurs(path, seen) for path in PATH.findall(text)):
            return False  # a file named that nothing the instruction points at names
        if any(first_written(view, code) for code in CODE.findall(text)):
            return False  # a code it wrote before anything showed it
    if any(not occurs(value, known) for value in format_values(view)):
        return False  # a placeholder of the request's format filled with what it never saw
    for booking in added_rows(view, "flights/bookings"):
        if any(not occurs(str(booking.get(k)), everything_seen) for k in ("origin", "destination")):
            return False  # a flight booked from or to a place it never saw named
    return all(read_as(value, label, names, observed) for label, value, names in labelled_values(view))


def _copied_whole(view: JudgeView, observed: list[str], anchored: list[str]) -> bool:
    """A piece of text copied from a read is copied from what the instruction points at, whole (a
    capital at the start of a line is no other text: 'Order ORD-00302' is the request's 'order
    ORD-00302')."""
    instruction = view.instruction.lower()
    placed = [r for r in observed if any(n in r for n in order_numbers(view))]  # the order it placed
    sources = "\n".join(_current(view.instruction, anchored) + placed).lower() + "\n" + instruction
    everything = "\n".join(observed).lower()
    for text in new_texts(view):
        for segment in SEGMENT.split(text.lower()):
            piece = CHECKBOX.sub("", segment).rstrip(" .-[]")
            if len(piece) >= 10 and occurs(piece, everything) and not occurs(piece, sources):
                return False  # copied from something the instruction did not point at
            cut = not occurs(piece, everything) and piece not in instruction and piece in sources
            if len(piece) >= 10 and cut:
                return False  # copied, but cut short
    return True


def _current(instruction: str, records: list[str]) -> list[str]:
    """When the instruction asks for the latest message of a kind ('latest stand-up'), older ones go."""
    free = outside_quotes(instruction).lower()
    kinds = re.findall(r"\b(?:latest|last|most recent)\s+([a-z]+(?:-[a-z]+)?)", free)
    if not kinds:
        return records
    pattern = re.compile("|".join(re.escape(k).replace("\\-", "[- ]?") for k in kinds), re.I)
    of_kind = [r for r in records if pattern.search(r)]
    return [r for r in records if r not in of_kind[:-1]]


class LLMJudge:
    """An LLM's vote on the same view; abstains (None) on an endpoint error or an unparseable answer."""

    name = "llm"

    def __init__(self, llm: LLM) -> None:
        self.llm = llm

    def __call__(self, view: JudgeView) -> bool | None:
        calls = [f"{n}({json.dumps(a)[:200]}) -> {r[:300]}" for n, a, r in tool_calls(view)]
        changes = {k: v for k, v in view.state_diff.items() if k != "files"}
        prompt = (
            "You judge whether a computer-use agent did what the user asked, without side effects.\n"
            "Judge from the tool calls and the state change only; ignore what the agent claims.\n"
            f"Request: {view.instruction}\nTool calls:\n"
            + "\n".join(calls)[:5000]
            + f"\nState change: {json.dumps(changes, default=str)[:5000]}\n"
            + f"Files written: {json.dumps(view.files)[:2000]}\n"
            'Answer with JSON only: {"success": true|false, "reason": "..."}'
        )
        try:
            response = self.llm.complete([{"role": "user", "content": prompt}])
        except LLMError:
            return None
        text = (response.content or "").strip()
        try:
            return bool(json.loads(text[text.index("{") : text.rindex("}") + 1]).get("success"))
        except (ValueError, AttributeError):
            return None


def default_judges(llm: LLM | None = None) -> list[Judge]:
    """The panel: diff judge, rule reviewer, trajectory judge, plus the LLM judge when configured."""
    judges: list[Judge] = [DiffJudge(), RuleReviewer(), TrajectoryJudge()]
    return [*judges, LLMJudge(llm)] if llm is not None else judges
