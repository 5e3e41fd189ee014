"""Judges that see only what a grader sees: the instruction, the trajectory and the raw state diff.

No judge reads a task's criteria, expectations or solution. Each votes True (done), False (not
done) or None (abstains); `panel` takes a real majority of the votes cast, and a tie is no
decision (None), never broken in favour of one judge.

- `DiffJudge`: the effects the instruction asks for (files it names, an order when it says to buy
  or order, a sent e-mail to each address, a DM or chat post, an archived mail) are in the diff,
  and an order number it asks to pass on reaches every new message.
- `RuleReviewer`: the diff is consistent and minimal: nothing deleted, rows changed only in
  volatile fields (or archived when asked), orders add up, at most one order per request, no
  placeholder text, order numbers and prices written match the new orders.
- `TrajectoryJudge`: every app the diff changed was written by a successful tool call of the
  agent, the data the agent wrote (dates, times, prices, order numbers) was observed in a read
  before, and a bought product was named in an observation that mentions who or what the
  instruction names. It never reads the agent's final message.
- `LLMJudge`: the same view through `envpipeline.llm` when a client is configured.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from envpipeline.errors import LLMError
from envpipeline.llm import LLM
from envpipeline.worlds.state import diff

_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_PATH = re.compile(r"\b(?:[\w.-]+/)*[\w-]+\.(?:md|txt)\b")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_HANDLE = re.compile(r"\b[a-z]+\.[a-z]\b")
_PERSON = re.compile(r"\b[A-Z][a-z]+ [A-Z][a-z]+\b")
_ORDER_VERB = re.compile(r"\b(?:buy|order (?:it|the|something|exactly|one))\b", re.I)
_DATA = re.compile(r"ORD-[\w]+|SKU-[\w-]+|\d{4}-\d{2}-\d{2}|\b\d{1,2}:\d{2}\b|\d+\.\d{2}\b")
_ORDER_NUMBER = re.compile(r"ORD-\w+")
_PRICE = re.compile(r"\$(\d+\.\d{2})")
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


def _outside_quotes(text: str) -> str:
    return _QUOTED.sub(" ", text)


def _added(view: JudgeView, key: str) -> list[dict[str, Any]]:
    return list(view.state_diff.get(key, {}).get("added", []))


def _text(row: dict[str, Any]) -> str:
    return "\n".join(str(v) for v in row.values() if v is not None)


def _new_texts(view: JudgeView) -> list[str]:
    """Texts the agent wrote: added message rows and added/changed files."""
    rows = [r for key in ("dm/messages", "chat/messages", "mail/messages") for r in _added(view, key)]
    return [str(r.get("body") or "") + "\n" + str(r.get("subject") or "") for r in rows] + list(
        view.files.values()
    )


def _order_numbers(view: JudgeView) -> list[str]:
    return [str(r["order_number"]) for r in _added(view, "shop/orders") if r.get("order_number")]


class DiffJudge:
    """The effects the instruction asks for are in the diff."""

    name = "diff"

    def __call__(self, view: JudgeView) -> bool | None:
        free = _outside_quotes(view.instruction)
        lower = free.lower()
        files = set(view.state_diff["files"]["added"]) | set(view.state_diff["files"]["changed"])
        if any(path not in files for path in _PATH.findall(free)):
            return False
        orders = _added(view, "shop/orders")
        if _ORDER_VERB.search(free) and len(orders) != 1:
            return False
        sent = [r for r in _added(view, "mail/messages") if r.get("folder") == "sent"]
        for address in set(_EMAIL.findall(free)):
            if not any(address in str(r.get("recipients") or "") for r in sent):
                return False
        dms = [r for r in _added(view, "dm/messages") if r.get("direction") == "out"]
        if "direct message" in lower or "by dm" in lower:
            handles = set(_HANDLE.findall(free))
            if not any(str(r.get("peer")) in handles for r in dms):
                return False
        posts = _added(view, "chat/messages")
        if re.search(r"\bpost\b", lower) and "channel" in lower and not posts:
            return False
        archived = [
            c for c in view.state_diff.get("mail/messages", {}).get("changed", []) if "folder" in c["fields"]
        ]
        if "archive" in lower and not any(c["after"].get("folder") == "archive" for c in archived):
            return False
        if "order number" in lower and orders:
            number = str(orders[0]["order_number"])
            messages = [str(r.get("body") or "") for r in dms + posts]
            if any(number not in m for m in messages) or not any(number in t for t in _new_texts(view)):
                return False
        return bool(files or any(k != "files" for k in view.state_diff))


class RuleReviewer:
    """The diff is consistent and minimal."""

    name = "rules"

    def __call__(self, view: JudgeView) -> bool | None:
        lower = _outside_quotes(view.instruction).lower()
        if view.state_diff["files"]["removed"]:
            return False
        changed_any = bool(view.state_diff["files"]["added"] or view.state_diff["files"]["changed"])
        for key, entry in view.state_diff.items():
            if key == "files" or key in VOLATILE_TABLES:
                continue
            if entry["removed"]:
                return False
            for change in entry["changed"]:
                extra = set(change["fields"]) - VOLATILE_FIELDS.get(key, set())
                archive = key == "mail/messages" and extra == {"folder"} and "archive" in lower
                if extra and not (archive and change["after"].get("folder") == "archive"):
                    return False
                changed_any = changed_any or bool(extra)
            changed_any = changed_any or bool(entry["added"])
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
        orders = _added(view, "shop/orders")
        if len(orders) > len(_ORDER_VERB.findall(_outside_quotes(view.instruction))) or not _orders_add_up(
            view, orders
        ):
            return False
        numbers = set(_order_numbers(view)) | set(_ORDER_NUMBER.findall(view.instruction))
        prices = {
            f"{i['price_cents'] / 100:.2f}" for o in orders for i in json.loads(o.get("items_json") or "[]")
        }
        for text in _new_texts(view):
            if "unknown" in text.lower() or "<corrupted>" in text:
                return False
            if any(n not in numbers for n in _ORDER_NUMBER.findall(text)):
                return False
            if orders and any(p not in prices for p in _PRICE.findall(text)):
                return False
        return changed_any and not archived[1:]


def requested_apps(instruction: str) -> set[str]:
    """The apps the instruction's verbs ask to write: one per kind of action."""
    free = _outside_quotes(instruction).lower()
    apps = set()
    if _ORDER_VERB.search(free):
        apps.add("shop")
    if re.search(
        r"\b(?:email|e-mail|send it to|by email|through the mail tool|from the webmail with the subject)\b",
        free,
    ) and _EMAIL.search(free):
        apps.add("mail")
    if "direct message" in free or "by dm" in free:
        apps.add("dm")
    if re.search(r"\bpost\b", free) and "channel" in free:
        apps.add("chat")
    if "archive" in free:
        apps.add("archive")
    if _PATH.search(free):
        apps.add("files")
    return apps


def _effect_present(view: JudgeView, app: str) -> bool:
    """One row (or file) of the kind the action writes is in the diff."""
    if app == "files":
        return bool(view.state_diff["files"]["added"] or view.state_diff["files"]["changed"])
    if app == "archive":
        changes = view.state_diff.get("mail/messages", {}).get("changed", [])
        return any(c["after"].get("folder") == "archive" for c in changes)
    if app == "mail":
        return any(r.get("folder") == "sent" for r in _added(view, "mail/messages"))
    if app == "dm":
        return any(r.get("direction") == "out" for r in _added(view, "dm/messages"))
    table = {"shop": "shop/orders", "chat": "chat/messages"}[app]
    return bool(_added(view, table))


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


def _calls(view: JudgeView) -> list[tuple[str, dict[str, Any], str]]:
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


def _is_write(name: str, arguments: dict[str, Any]) -> bool:
    if name == "cli.exec":
        command = str(arguments.get("command", ""))
        return ">" in command or "sed -i" in command
    return any(name.startswith(w) for ws in WRITES.values() for w in ws if w != "cli.exec")


def _ok(result: str) -> bool:
    head = result.strip()[:8]
    if head[:3].isdigit():
        return head.startswith(("2", "3"))
    if head.startswith("exit="):
        return head.startswith("exit=0")
    return not result.lower().startswith("error")


def _records(name: str, arguments: dict[str, Any], result: str) -> list[str]:
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


class TrajectoryJudge:
    """Writes are backed by the agent's successful calls; what it wrote, it had observed."""

    name = "trajectory"

    def __call__(self, view: JudgeView) -> bool | None:
        calls = _calls(view)
        writes = [(n, a) for n, a, r in calls if _is_write(n, a) and _ok(r)]
        observed = [rec for n, a, r in calls if not _is_write(n, a) and _ok(r) for rec in _records(n, a, r)]
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
        named = {"archive": ("web.POST /mail/",), "mail": _mail_calls(view.instruction)}
        commands = [str(a.get("command", "")) for n, a in writes if n == "cli.exec"]
        if any(
            not any(path in c for c in commands) for path in _PATH.findall(_outside_quotes(view.instruction))
        ):
            return False
        for app in requested_apps(view.instruction):
            prefixes = named.get(app) or WRITES[app]
            if not any(name.startswith(p) for name, _ in writes for p in prefixes):
                return False
        for app in apps:
            if not any(name.startswith(prefix) for name, _ in writes for prefix in WRITES.get(app, ("?",))):
                return False
        anchors = _anchors(view.instruction)
        anchored = [r for r in observed if any(a in r for a in anchors)]
        orders = _added(view, "shop/orders")
        seen = "\n".join(anchored) + "\n" + view.instruction
        seen += "\n" + "\n".join(f"{o['order_number']} {o['total_cents'] / 100:.2f}" for o in orders)
        for text in _new_texts(view):
            if any(token not in seen for token in _DATA.findall(text)):
                return False
        for order in orders:
            for item in json.loads(order.get("items_json") or "[]"):
                if (
                    not any(str(item.get("name")) in r for r in anchored)
                    and item.get("name") not in view.instruction
                ):
                    return False
        return True


def _mail_calls(instruction: str) -> tuple[str, ...]:
    """The mail-sending call the instruction names (the mail tool or the webmail), else either."""
    free = _outside_quotes(instruction).lower()
    sends = re.findall(r"(through the mail tool|from the webmail|in the webmail)", free)
    if "through the mail tool" in sends and not any("webmail" in x for x in sends[-1:]):
        return ("mcp.mail_send",)
    if sends and "webmail" in sends[-1] and "through the mail tool" not in sends:
        return ("web.POST /mail/send",)
    return WRITES["mail"][:2]


def _anchors(instruction: str) -> set[str]:
    """Who and what the instruction names: addresses, handles, people, quoted text, paths."""
    quoted = {q.strip("'\"") for q in _QUOTED.findall(instruction)}
    found = (
        set(_EMAIL.findall(instruction))
        | set(_HANDLE.findall(instruction))
        | set(_PERSON.findall(instruction))
    )
    return {a for a in found | set(_PATH.findall(instruction)) | quoted if len(a) > 3}


class LLMJudge:
    """An LLM's vote on the same view; abstains (None) on an endpoint error or an unparseable answer."""

    name = "llm"

    def __init__(self, llm: LLM) -> None:
        self.llm = llm

    def __call__(self, view: JudgeView) -> bool | None:
        calls = [f"{n}({json.dumps(a)[:200]}) -> {r[:300]}" for n, a, r in _calls(view)]
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
