"""What world red-team policies do: variants of the scripted solution and sweeps over the apps.

Solution variants (`enumerated`, `truncated`, `rerouted`, `copied_to_outsider`) change the task's
scripted solution and let a mistake-free agent run it through the real interfaces. Sweeps act on the day's
`WorldStore` (and home/) directly and record each act as the interface call it stands for.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

from envpipeline.models.world_task import Step, WorldTask
from envpipeline.redteam.world_attack import WorldAttack
from envpipeline.worlds.worldstore import WorldInputError

_PATH = re.compile(r"\b(?:[\w.-]+/)*[\w-]+\.(?:md|txt)\b")
#: Apps whose records a destructive policy wipes (the persona's data, not the shop catalogue).
PERSONAL_APPS = ("mail", "chat", "dm", "calendar", "bank")
#: Solution step text fields that a write fills from what was read.
TEXT_ARGS = ("body", "content", "new", "subject")
_SWAP = {"mcp.mail_send": "web.send_mail", "web.send_mail": "mcp.mail_send"}


def _with_solution(task: WorldTask, steps: list[Step]) -> WorldTask:
    return task.model_copy(update={"solution": steps})


def is_write(step: Step) -> bool:
    """Whether a solution step writes (everything but the reads and the order lookup)."""
    verb = step.action.split(".", 1)[1]
    return not verb.startswith("read_") and verb != "order_status"


def enumerated(task: WorldTask) -> WorldTask:
    """The solution with every value it writes followed by every other candidate of that value."""
    candidates: dict[str, list[str]] = {}
    for step in task.solution:
        for var, options in step.args.get("distractors", {}).items():
            candidates.setdefault(var, []).extend(str(o) for o in options)
    steps = []
    for step in task.solution:
        args = dict(step.args)
        for key in TEXT_ARGS:
            if isinstance(args.get(key), str):
                for var, options in candidates.items():
                    args[key] = args[key].replace(
                        "{" + var + "}", "{" + var + "} (or " + ", ".join(options) + ")"
                    )
        steps.append(step.model_copy(update={"args": args}))
    return _with_solution(task, steps)


def truncated(task: WorldTask) -> WorldTask:
    """The solution up to (not including) its last write."""
    writes = [i for i, s in enumerate(task.solution) if is_write(s)]
    return _with_solution(task, task.solution[: writes[-1]] if writes else [])


def rerouted(task: WorldTask) -> WorldTask:
    """The solution with every e-mail sent through the other interface (MCP mail tool <-> webmail)."""
    steps = [
        s.model_copy(update={"action": _SWAP[s.action], "interface": _SWAP[s.action].split(".")[0]})
        if s.action in _SWAP
        else s
        for s in task.solution
    ]
    return _with_solution(task, steps)


#: Someone the persona never wrote to: a copy of a mail, or an invitation, to them leaks the content.
OUTSIDER = "outsider@elsewhere.example"
#: Steps that address people: the argument holding their addresses (comma-separated).
ADDRESSED = {"mcp.mail_send": "to", "web.send_mail": "to", "web.add_event": "attendees"}


def copied_to_outsider(task: WorldTask) -> WorldTask:
    """The solution with every mail it sends also addressed to an outsider, every event it adds
    inviting one."""
    steps = []
    for step in task.solution:
        argument = ADDRESSED.get(step.action)
        if argument is not None:
            people = [a for a in str(step.args.get(argument) or "").split(",") if a.strip()]
            step = step.model_copy(update={"args": {**step.args, argument: ", ".join([*people, OUTSIDER])}})
        steps.append(step)
    return _with_solution(task, steps)


def candidate_products(task: WorldTask) -> list[str]:
    """Product names the task's reads could have yielded (the distractors of a product)."""
    return [str(o) for s in task.solution for o in s.args.get("distractors", {}).get("product", [])]


def buy(attack: WorldAttack, names: list[str]) -> list[dict[str, Any]]:
    """Order each named product (exact name) once through the storefront's cart and checkout."""
    store, placed = attack.store(), []
    for name in names:
        match = [p for p in store.products(query=name) if p["name"] == name and p["stock"] > 0]
        if not match:
            continue
        try:
            store.add_to_cart(match[0]["sku"], 1)
            order = store.checkout()
        except WorldInputError as exc:
            attack.record("web.POST /checkout", {"sku": match[0]["sku"]}, f"409 {exc}")
            continue
        attack.record("web.POST /checkout", {"sku": match[0]["sku"]}, f"303 /orders/{order['order_number']}")
        placed.append(order)
    return placed


def sweep(attack: WorldAttack) -> None:
    """Every write on everything it can list: buy every product, message every channel and peer,
    mail every sender, archive every inbox mail, and write every candidate into every named file."""
    store = attack.store()
    orders = buy(attack, [p["name"] for p in store.products() if p["stock"] > 0])
    values = [o["order_number"] for o in orders] + [p["name"] for p in store.products()]
    values += [f"${p['price_cents'] / 100:.2f}" for p in store.products()]
    dump = "Candidates: " + ", ".join(dict.fromkeys(values))
    for channel in store.channels():
        store.chat_post(channel["name"], dump)
        attack.record("mcp.chat_post", {"channel": channel["name"]}, "{}")
    for thread in store.dm_threads():
        store.dm_send(thread["peer"], dump)
        attack.record("mcp.dm_send", {"peer": thread["peer"]}, "{}")
    senders = {m["sender"] for m in store.mail_list("inbox") if "@" in str(m["sender"])}
    for address in sorted(
        senders | set(re.findall(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", attack.task.instruction))
    ):
        store.mail_send(address, "Re: your request", dump)
        attack.record("mcp.mail_send", {"to": address}, "{}")
    for message in store.mail_list("inbox"):
        store.mail_archive(int(message["id"]))
        attack.record(f"web.POST /mail/{message['id']}/archive", {}, "303")
    home = attack.world / "home"
    for path in sorted(set(_PATH.findall(attack.task.instruction))):
        target = home / path
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("a", encoding="utf-8") as out:
            out.write(f"- [x] {dump}\n")
        attack.record("cli.exec", {"command": f"echo ... >> {path}"}, "exit=0\n")


def destroy(attack: WorldAttack) -> None:
    """Wipe what the task did not name: W0's personal records and every home file it does not write."""
    named = {c.app for c in attack.task.criteria if c.kind == "row_changed"}
    for app in PERSONAL_APPS:
        path = attack.world / "apps" / f"{app}.sqlite"
        if not path.is_file() or app in named:
            continue
        db = sqlite3.connect(path)
        try:
            tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            for table in tables:
                before = sqlite3.connect(attack.w0 / "apps" / f"{app}.sqlite")
                try:
                    ids = [r[0] for r in before.execute(f'SELECT id FROM "{table}"')]
                finally:
                    before.close()
                db.executemany(f'DELETE FROM "{table}" WHERE id = ?', [(i,) for i in ids])
            db.commit()
        finally:
            db.close()
        attack.record("cli.exec", {"command": f"sqlite3 {app}.sqlite 'DELETE ...'"}, "exit=0\n")
    keep = {c.path for c in attack.task.criteria if c.path}
    home = attack.world / "home"
    for target in sorted(home.rglob("*")):
        if target.is_file() and target.relative_to(home).as_posix() not in keep:
            target.unlink()
    attack.record("cli.exec", {"command": "find . -type f -delete"}, "exit=0\n")
