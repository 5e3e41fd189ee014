"""The actions scripted agents perform, one coroutine per ``interface.verb`` of a task's solution.

Each action gets the `Session` (live web, MCP and CLI), the step's args, the drawn mistake
(None, ``wrong_value`` or ``wrong_interface``; skips never reach here) and the agent's rng.
Read actions store what they find in ``session.vars``; write actions fill ``{var}`` templates.
Hinted agents go to the hinted source; unhinted ones discover it (list, then read until found).
"""

from __future__ import annotations

import random
import re
import shlex
from collections.abc import Awaitable, Callable
from html import unescape
from pathlib import PurePosixPath
from typing import Any

from envpipeline.worlds.agent_session import Session, corrupt_value

Action = Callable[[Session, dict[str, Any], "str | None", random.Random], Awaitable[None]]
_PRODUCT_ROW = re.compile(r'id="product-(SKU-[^"]+)"><td><a [^>]*>([^<]+)</a>')
_MAIL_ROW = re.compile(r'id="message-link-(\d+)" href="/mail/\d+">([^<]*)</a>')


def _store(
    session: Session, args: dict[str, Any], values: list[str] | None, mistake: str | None, rng: random.Random
) -> None:
    """Remember found values; a wrong-value mistake swaps one for a distractor or a corruption."""
    if values is None:
        for var, options in args.get("distractors", {}).items():
            session.guesses.setdefault(var, rng.choice(options))
        return
    names: list[str] = args.get("vars") or [args["var"]]
    found = dict(zip(names, values))
    if mistake and found:
        var = rng.choice(sorted(found))
        options = args.get("distractors", {}).get(var)
        found[var] = rng.choice(options) if options else corrupt_value(found[var])
    session.vars.update(found)


def _match(pattern: str, text: str) -> list[str] | None:
    found = re.search(pattern, text or "")
    return [g.strip() for g in found.groups()] if found else None


# -- MCP -------------------------------------------------------------------------------------------
async def read_chat(s: Session, a: dict, mistake: str | None, rng: random.Random) -> None:
    channels = [a["channel"]]
    if not s.hinted:
        ok, listing = await s.tool("chat_list_channels")
        channels = [c["name"] for c in listing["channels"]] if ok else channels
    for channel in channels:
        ok, data = await s.tool("chat_read_channel", channel=channel, limit=50)
        hits = [
            m
            for m in (data["messages"] if ok else [])
            if (not a.get("author") or m["author"] == a["author"]) and _match(a["pattern"], m["body"])
        ]
        if hits:
            return _store(s, a, _match(a["pattern"], hits[-1]["body"]), mistake, rng)
    _store(s, a, None, mistake, rng)


async def read_dm(s: Session, a: dict, mistake: str | None, rng: random.Random) -> None:
    peers = [a["peer"]]
    if not s.hinted:
        ok, listing = await s.tool("dm_list_threads")
        peers = [t["peer"] for t in listing["threads"]] if ok else peers
    for peer in peers:
        ok, data = await s.tool("dm_read", peer=peer)
        hits = [
            m
            for m in (data["messages"] if ok else [])
            if m["direction"] == "in" and _match(a["pattern"], m["body"])
        ]
        if hits:
            return _store(s, a, _match(a["pattern"], hits[-1]["body"]), mistake, rng)
    _store(s, a, None, mistake, rng)


async def read_mail_mcp(s: Session, a: dict, mistake: str | None, rng: random.Random) -> None:
    ok, listing = await s.tool("mail_list", folder="inbox")
    messages = listing["messages"] if ok else []
    if s.hinted:
        messages = [m for m in messages if a["subject"] in (m["subject"] or "")]
    for message in messages:
        ok, full = await s.tool("mail_read", message_id=message["id"])
        values = _match(a["pattern"], full.get("body", "")) if ok else None
        if values:
            s.vars[a.get("id_var") or "_msg"] = str(message["id"])
            return _store(s, a, values, mistake, rng)
    _store(s, a, None, mistake, rng)


async def _send_elsewhere(s: Session, text: str) -> None:
    """Wrong interface for a message: it ends up as a draft in notes/outbox.md via the shell."""
    s.cli(f"mkdir -p notes && printf '%s\\n' {shlex.quote(text)} >> notes/outbox.md")


async def dm_send(s: Session, a: dict, mistake: str | None, rng: random.Random) -> None:
    body = s.fmt(a["body"], mistake == "wrong_value", rng)
    if mistake == "wrong_interface":  # emails the handle from the webmail instead of a DM
        s.web(
            "POST", "/mail/send", data={"to": f"{a['peer']}@chat.example", "subject": "Update", "body": body}
        )
        return
    await s.tool("dm_send", peer=a["peer"], body=body)


async def chat_post(s: Session, a: dict, mistake: str | None, rng: random.Random) -> None:
    body = s.fmt(a["body"], mistake == "wrong_value", rng)
    if mistake == "wrong_interface":
        return await _send_elsewhere(s, body)
    await s.tool("chat_post", channel=a["channel"], body=body)


async def mail_send_mcp(s: Session, a: dict, mistake: str | None, rng: random.Random) -> None:
    body = s.fmt(a["body"], mistake == "wrong_value", rng)
    if mistake == "wrong_interface":
        return await _send_elsewhere(s, body)
    await s.tool("mail_send", to=a["to"], subject=s.fmt(a["subject"]), body=body)


# -- web -------------------------------------------------------------------------------------------
async def buy(s: Session, a: dict, mistake: str | None, rng: random.Random) -> None:
    name = s.fmt("{" + a["product"] + "}")
    if mistake == "wrong_interface":  # writes a shopping note instead of ordering
        s.cli(f"printf '%s\\n' {shlex.quote('- [ ] buy ' + name)} >> todo.txt")
        return
    rows = [(sku, unescape(t)) for sku, t in _PRODUCT_ROW.findall(s.web("GET", "/", params={"q": name}).text)]
    if not rows or mistake == "wrong_value":  # browse everything (and maybe pick the wrong row)
        rows = [(sku, unescape(t)) for sku, t in _PRODUCT_ROW.findall(s.web("GET", "/").text)]
    exact = [sku for sku, title in rows if title == name]
    others = [sku for sku, title in rows if title != name]
    sku = (rng.choice(others) if others else None) if mistake == "wrong_value" else (exact or [None])[0]
    if sku is None:
        return
    page = s.web("GET", f"/product/{sku}").text
    price = re.search(r'id="product-price">([^<]+)<', page)
    cart = s.web("GET", "/cart").text
    for held in re.findall(r'id="cart-item-(SKU-[^"]+)"', cart):  # the cart empty, this SKU's line too:
        s.web("POST", "/cart/remove", data={"sku": held})  # a line left from earlier is not this order
    if s.web("POST", "/cart/add", data={"sku": sku, "quantity": "1"}).status_code != 303:
        return
    placed = s.web("POST", "/checkout")
    if placed.status_code != 303:
        return
    order = placed.headers["location"].rsplit("/", 1)[-1]
    s.web("GET", f"/orders/{order}")
    names = a.get("vars", {})
    s.vars.update({names.get("sku", "sku"): sku, names.get("order", "order"): order})
    if price:
        s.vars[names.get("price", "price")] = unescape(price.group(1))


async def read_mail_web(s: Session, a: dict, mistake: str | None, rng: random.Random) -> None:
    rows = [
        (mid, unescape(subj))
        for mid, subj in _MAIL_ROW.findall(s.web("GET", "/mail", params={"folder": "inbox"}).text)
    ]
    if s.hinted:
        rows = [r for r in rows if a["subject"] in r[1]]
    for mid, _ in rows:
        page = s.web("GET", f"/mail/{mid}").text
        body = re.search(r'<pre id="message-body">(.*?)</pre>', page, re.S)
        values = _match(a["pattern"], unescape(body.group(1))) if body else None
        if values:
            s.vars[a.get("id_var") or "_msg"] = mid
            return _store(s, a, values, mistake, rng)
    _store(s, a, None, mistake, rng)


async def archive_mail(s: Session, a: dict, mistake: str | None, rng: random.Random) -> None:
    mid = s.vars.get(a["id_var"])
    if mid is None:
        return
    if mistake == "wrong_interface":  # looks at it through MCP, which has no archive tool
        await s.tool("mail_read", message_id=int(mid))
        return
    if mistake == "wrong_value":
        mid = str(max(1, int(mid) - 1))
    s.web("POST", f"/mail/{mid}/archive")


async def order_status(s: Session, a: dict, mistake: str | None, rng: random.Random) -> None:
    order = s.fmt("{" + a["order"] + "}")
    if not s.hinted:
        s.web("GET", "/orders")
    page = s.web("GET", f"/orders/{order}").text
    found = re.search(r'id="order-status">([^<]+)<', page)
    _store(s, {**a, "vars": [a["var"]]}, [unescape(found.group(1))] if found else None, mistake, rng)


async def send_mail_web(s: Session, a: dict, mistake: str | None, rng: random.Random) -> None:
    body = s.fmt(a["body"], mistake == "wrong_value", rng)
    if mistake == "wrong_interface":
        return await _send_elsewhere(s, body)
    s.web("GET", "/mail/compose")
    s.web("POST", "/mail/send", data={"to": a["to"], "subject": s.fmt(a["subject"]), "body": body})


# -- CLI -------------------------------------------------------------------------------------------
async def read_file(s: Session, a: dict, mistake: str | None, rng: random.Random) -> None:
    path = s.fmt(a["path"])
    if not s.hinted:
        s.cli("find . -type f | sort")
    result = s.cli(f"cat {shlex.quote(path)}")
    _store(s, a, _match(a["pattern"], result.stdout) if result.exit_code == 0 else None, mistake, rng)


async def _file_elsewhere(s: Session, text: str) -> None:
    """Wrong interface for a file edit: the text is posted to the general chat instead."""
    await s.tool("chat_post", channel="general", body=text.strip() or "(empty)")


async def write_file(s: Session, a: dict, mistake: str | None, rng: random.Random, op: str = ">") -> None:
    path, content = s.fmt(a["path"]), s.fmt(a["content"], mistake == "wrong_value", rng)
    if mistake == "wrong_interface":
        return await _file_elsewhere(s, content)
    folder = str(PurePosixPath(path).parent)
    prefix = f"mkdir -p {shlex.quote(folder)} && " if folder != "." else ""
    s.cli(f"{prefix}printf '%s' {shlex.quote(content)} {op} {shlex.quote(path)}")


async def append_file(s: Session, a: dict, mistake: str | None, rng: random.Random) -> None:
    await write_file(s, a, mistake, rng, op=">>")


def _sed(text: str, replacement: bool = False) -> str:
    if replacement:
        return re.sub(r"([\\&|])", r"\\\1", text)
    return re.sub(r"([\[\]\\.*^$|])", r"\\\1", text)


async def replace_line(s: Session, a: dict, mistake: str | None, rng: random.Random) -> None:
    old, new = s.fmt(a["old"]), s.fmt(a["new"], mistake == "wrong_value", rng)
    if mistake == "wrong_interface":
        return await _file_elsewhere(s, new)
    path = shlex.quote(s.fmt(a["path"]))
    s.cli(f"sed -i {shlex.quote(f's|{_sed(old)}|{_sed(new, True)}|')} {path} && grep -n . {path}")


ACTIONS: dict[str, Action] = {
    "mcp.read_chat": read_chat,
    "mcp.read_dm": read_dm,
    "mcp.read_mail": read_mail_mcp,
    "mcp.dm_send": dm_send,
    "mcp.chat_post": chat_post,
    "mcp.mail_send": mail_send_mcp,
    "web.buy": buy,
    "web.read_mail": read_mail_web,
    "web.archive_mail": archive_mail,
    "web.order_status": order_status,
    "web.send_mail": send_mail_web,
    "cli.read_file": read_file,
    "cli.write_file": write_file,
    "cli.append_file": append_file,
    "cli.replace_line": replace_line,
}
