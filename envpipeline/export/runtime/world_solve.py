"""Oracle of an exported world task: the reference steps through worldtool and the shell (stdlib).

``steps.json`` holds the task's scripted solution (``interface.verb`` plus args). Each step is done
the way a hinted agent does it: reads go straight to the hinted source and remember the values
their pattern captures; writes fill ``{var}`` templates from what was read. Shop, mail, chat, DM,
calendar, bank, flights and accounts steps run ``worldtool``; CLI steps run bash in /app/home.
"""

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path, PurePosixPath

APP = "/app"
HOME = "/app/home"
VARS: dict = {}


def tool(*args: str) -> dict:
    """Run one worldtool command; its JSON output (exits on an error)."""
    done = subprocess.run(
        [sys.executable, f"{APP}/worldtool.py", *map(str, args)], capture_output=True, text=True
    )
    print(f"$ worldtool {shlex.join(map(str, args))}\n{done.stdout.strip()[:400]}")
    data = json.loads(done.stdout or "{}")
    if done.returncode != 0:
        raise SystemExit(f"worldtool failed: {data}")
    return data


def sh(command: str) -> str:
    """Run one shell command in the home folder; its stdout."""
    print(f"$ {command}")
    done = subprocess.run(["bash", "-c", command], cwd=HOME, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"command failed ({done.returncode}): {done.stderr}")
    return done.stdout


class _Memory(dict):
    def __missing__(self, key):
        return "unknown"


def fmt(template: str) -> str:
    return template.format_map(_Memory(VARS))


def match(pattern: str, text: str):
    found = re.search(pattern, text or "")
    return [g.strip() for g in found.groups()] if found else None


def remember(args: dict, values) -> None:
    if values is None:
        raise SystemExit(f"the reference read found nothing for {args}")
    VARS.update(zip(args.get("vars") or [args.get("var")], values))


def read_chat(a):
    messages = tool("chat", "read", a["channel"], "50")["messages"]
    hits = [
        m
        for m in messages
        if (not a.get("author") or m["author"] == a["author"]) and match(a["pattern"], m["body"])
    ]
    remember(a, match(a["pattern"], hits[-1]["body"]) if hits else None)


def read_dm(a):
    hits = [
        m
        for m in tool("dm", "read", a["peer"])["messages"]
        if m["direction"] == "in" and match(a["pattern"], m["body"])
    ]
    remember(a, match(a["pattern"], hits[-1]["body"]) if hits else None)


def read_mail(a):
    for message in tool("mail", "list", "inbox")["messages"]:
        if a["subject"] not in (message["subject"] or ""):
            continue
        values = match(a["pattern"], tool("mail", "read", message["id"]).get("body", ""))
        if values:
            VARS[a.get("id_var") or "_msg"] = str(message["id"])
            return remember(a, values)
    remember(a, None)


def buy(a):
    name = fmt("{" + a["product"] + "}")
    exact = [p for p in tool("shop", "list", name)["products"] if p["name"] == name]
    if not exact:
        raise SystemExit(f"no product named {name!r}")
    product = exact[0]
    for line in tool("shop", "cart")["cart"]:
        if line["sku"] != product["sku"]:
            tool("shop", "remove", line["sku"])
    tool("shop", "add-to-cart", product["sku"], "1")
    order = tool("shop", "checkout")
    names = a.get("vars", {})
    VARS.update(
        {
            names.get("sku", "sku"): product["sku"],
            names.get("order", "order"): order["order_number"],
            names.get("price", "price"): f"${product['price_cents'] / 100:,.2f}",
        }
    )


def order_status(a):
    VARS[a["var"]] = tool("shop", "order", fmt("{" + a["order"] + "}"))["status"]


def write_file(a, op=">"):
    path, content = fmt(a["path"]), fmt(a["content"])
    folder = str(PurePosixPath(path).parent)
    prefix = f"mkdir -p {shlex.quote(folder)} && " if folder != "." else ""
    sh(f"{prefix}printf '%s' {shlex.quote(content)} {op} {shlex.quote(path)}")


def replace_line(a):
    path, old, new = fmt(a["path"]), fmt(a["old"]), fmt(a["new"])
    text = Path(HOME, path).read_text(encoding="utf-8")
    if old not in text:
        raise SystemExit(f"{path} has no line {old!r}")
    old_q = re.sub(r"([\[\]\\.*^$|])", r"\\\1", old)
    new_q = re.sub(r"([\\&|])", r"\\\1", new)
    sh(f"sed -i {shlex.quote(f's|{old_q}|{new_q}|')} {shlex.quote(path)}")


def read_file(a):
    remember(a, match(a["pattern"], sh(f"cat {shlex.quote(fmt(a['path']))}")))


def pick(records, a):
    """The last record whose fields contain every ``match`` substring, remembered by ``vars``."""
    hits = [
        r for r in records if all(str(v) in str(r.get(k) or "") for k, v in (a.get("match") or {}).items())
    ]
    if not hits:
        raise SystemExit(f"the reference read found nothing for {a}")
    found = dict(hits[-1])
    for column in ("start", "depart_at", "posted_at"):
        value = str(found.get(column) or "")
        if len(value) >= 16:
            found.setdefault(f"{column}_date", value[:10])
            found.setdefault(f"{column}_time", value[11:16])
    VARS.update({var: str(found.get(column) or "") for var, column in (a.get("vars") or {}).items()})
    return found


def find_transaction(a):
    rows = tool("bank", "transactions", a["account"])["transactions"]
    rows = [{**r, "amount": f"{abs(r['amount_cents']) / 100:.2f}"} for r in reversed(rows)]
    pick(rows, a)


def plain_amount(value, percent=None):
    cents = round(float(value.replace("$", "").replace(",", "")) * 100)
    return f"{(cents * percent // 100 if percent is not None else cents) / 100:.2f}"


def money_step(a, kind):
    amount = plain_amount(fmt(a["amount"]), a.get("percent"))
    if kind == "transfer":
        tool("bank", "transfer", a["source"], a["target"], amount, fmt(a.get("memo", "")))
    else:
        tool("bank", "pay", a["account"], fmt(a["payee"]), amount, fmt(a.get("memo", "")))
    if a.get("var"):
        VARS[a["var"]] = amount


def add_event(a):
    from datetime import datetime, timedelta

    def shifted(iso):
        moved = datetime.fromisoformat(iso) + timedelta(days=int(a.get("shift_days", 0)))
        return moved.isoformat(timespec="seconds")

    start = shifted(fmt(a["start"]))
    end = shifted(fmt(a["end"])) if a.get("end") else start
    tool("calendar", "add", fmt(a["title"]), start, end, fmt(a.get("location", "")))
    if a.get("var"):
        VARS[a["var"]] = start


def book_flight(a):
    booked = tool("flights", "book", fmt(a["origin"]), fmt(a["destination"]), fmt(a["depart_at"]))
    if a.get("var"):
        VARS[a["var"]] = booked["confirmation"]


def read_balance(a):
    account = next(
        x for x in tool("bank", "accounts")["accounts"] if x["name"].lower() == a["account"].lower()
    )
    VARS[a["var"]] = f"{account['balance_cents'] / 100:,.2f}"


LIFE_ACTIONS = {
    "mcp.find_booking": lambda a: pick(tool("flights", "list")["bookings"], a),
    "mcp.change_booking": lambda a: tool("flights", "change", fmt(a["confirmation"]), fmt(a["depart_at"])),
    "mcp.cancel_booking": lambda a: tool("flights", "cancel", fmt(a["confirmation"])),
    "mcp.book_flight": book_flight,
    "mcp.set_password": lambda a: tool(
        "accounts", "set-password", fmt(a["username"]), fmt(a["new_password"])
    ),
    "web.find_event": lambda a: pick(tool("calendar", "list")["events"], a),
    "web.move_event": lambda a: tool("calendar", "move", fmt(a["event"]), fmt(a["start"])),
    "web.cancel_event": lambda a: tool("calendar", "cancel", fmt(a["event"])),
    "web.add_event": add_event,
    "web.find_transaction": find_transaction,
    "web.read_balance": read_balance,
    "web.transfer": lambda a: money_step(a, "transfer"),
    "web.pay": lambda a: money_step(a, "pay"),
}

ACTIONS = {
    **LIFE_ACTIONS,
    "mcp.read_chat": read_chat,
    "mcp.read_dm": read_dm,
    "mcp.read_mail": read_mail,
    "web.read_mail": read_mail,
    "mcp.dm_send": lambda a: tool("dm", "send", a["peer"], fmt(a["body"])),
    "mcp.chat_post": lambda a: tool("chat", "post", a["channel"], fmt(a["body"])),
    "mcp.mail_send": lambda a: tool("mail", "send", a["to"], fmt(a["subject"]), fmt(a["body"])),
    "web.send_mail": lambda a: tool("mail", "send", a["to"], fmt(a["subject"]), fmt(a["body"])),
    "web.buy": buy,
    "web.order_status": order_status,
    "web.archive_mail": lambda a: tool("mail", "archive", VARS[a["id_var"]]),
    "cli.read_file": read_file,
    "cli.write_file": write_file,
    "cli.append_file": lambda a: write_file(a, ">>"),
    "cli.replace_line": replace_line,
}


def main(path: str) -> None:
    steps = json.loads(Path(path).read_text(encoding="utf-8"))["steps"]
    for step in steps:
        print(f"# step: {step['action']}")
        ACTIONS[step["action"]](step.get("args", {}))
    print("done:", json.dumps(VARS, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/solution/steps.json")
