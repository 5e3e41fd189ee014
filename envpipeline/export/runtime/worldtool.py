#!/usr/bin/env python3
"""worldtool: the web app's and the MCP server's actions on the command line (stdlib only).

It acts on the app databases beside it (``/app/apps/*.sqlite``) through ``worldstore.py``, the
same reads and writes the web app and the MCP server share. Every command prints JSON; an error
prints ``{"error": ..., "status": 400|404|409}`` and exits 1.

    worldtool shop list [QUERY] | categories | show SKU | cart | add-to-cart SKU [QTY]
    worldtool shop remove SKU | checkout | orders | order ORDER_NUMBER
    worldtool mail list [inbox|sent|archive] | read ID | send TO SUBJECT BODY | archive ID
    worldtool chat channels | read CHANNEL [LIMIT] | post CHANNEL BODY
    worldtool dm threads | read PEER | send PEER BODY
    worldtool calendar list | show ID | move ID START | cancel ID | add TITLE START [END] [WHERE]
    worldtool bank accounts | transactions ACCOUNT | transfer FROM TO AMOUNT [MEMO] | pay ACCOUNT PAYEE AMOUNT [MEMO]
    worldtool flights list | show CODE | change CODE DEPART_AT | cancel CODE | book ORIGIN DESTINATION DEPART_AT
    worldtool accounts list | set-password USERNAME NEW_PASSWORD
"""

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parent))

if TYPE_CHECKING:  # the checker reads the source modules; the image has their byte copies beside this file
    from envpipeline.worlds.lifestore import LifeStore
    from envpipeline.worlds.worldstore import WorldInputError
else:
    from lifestore import LifeStore
    from worldstore import WorldInputError

USAGE = (__doc__ or "").split("\n\n", 2)[2]


def _int(value: str, name: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise WorldInputError(f"{name} must be a whole number, not {value!r}") from None


def _cents(value: str) -> int:
    try:
        return round(float(value.replace("$", "").replace(",", "")) * 100)
    except ValueError:
        raise WorldInputError(f"AMOUNT must be a number like 120.50, not {value!r}") from None


def commands(store: LifeStore) -> dict:
    """(group, verb) -> (argument names, optional count, callable)."""
    return {
        ("shop", "list"): (["QUERY"], 1, lambda q="": {"products": store.products(q)}),
        ("shop", "categories"): ([], 0, lambda: {"categories": store.categories()}),
        ("shop", "show"): (["SKU"], 0, store.product),
        ("shop", "cart"): ([], 0, lambda: {"cart": store.cart()}),
        ("shop", "add-to-cart"): (
            ["SKU", "QTY"],
            1,
            lambda sku, qty="1": store.add_to_cart(sku, _int(qty, "QTY")),
        ),
        ("shop", "remove"): (["SKU"], 0, lambda sku: store.remove_from_cart(sku) or {"removed": sku}),
        ("shop", "checkout"): ([], 0, store.checkout),
        ("shop", "orders"): ([], 0, lambda: {"orders": store.orders()}),
        ("shop", "order"): (["ORDER_NUMBER"], 0, store.order),
        ("mail", "list"): (["FOLDER"], 1, lambda folder="inbox": {"messages": store.mail_list(folder)}),
        ("mail", "read"): (["ID"], 0, lambda mid: store.mail_read(_int(mid, "ID"))),
        ("mail", "send"): (["TO", "SUBJECT", "BODY"], 0, store.mail_send),
        ("mail", "archive"): (
            ["ID"],
            0,
            lambda mid: store.mail_archive(_int(mid, "ID")) or {"archived": int(mid)},
        ),
        ("chat", "channels"): ([], 0, lambda: {"channels": store.channels()}),
        ("chat", "read"): (
            ["CHANNEL", "LIMIT"],
            1,
            lambda channel, limit="20": {
                "channel": channel,
                "messages": store.channel_messages(channel, _int(limit, "LIMIT")),
            },
        ),
        ("chat", "post"): (["CHANNEL", "BODY"], 0, store.chat_post),
        ("dm", "threads"): ([], 0, lambda: {"threads": store.dm_threads()}),
        ("dm", "read"): (["PEER"], 0, lambda peer: {"peer": peer, "messages": store.dm_read(peer)}),
        ("dm", "send"): (["PEER", "BODY"], 0, store.dm_send),
        ("calendar", "list"): ([], 0, lambda: {"events": store.events()}),
        ("calendar", "show"): (["ID"], 0, lambda eid: store.event(_int(eid, "ID"))),
        ("calendar", "move"): (
            ["ID", "START"],
            0,
            lambda eid, start: store.event_move(_int(eid, "ID"), start),
        ),
        ("calendar", "cancel"): (["ID"], 0, lambda eid: store.event_cancel(_int(eid, "ID"))),
        ("calendar", "add"): (
            ["TITLE", "START", "END", "WHERE"],
            2,
            lambda title, start, end="", where="": store.event_add(title, start, end, where),
        ),
        ("bank", "accounts"): ([], 0, lambda: {"accounts": store.bank_accounts()}),
        ("bank", "transactions"): (["ACCOUNT"], 0, lambda a: {"transactions": store.transactions(a)}),
        ("bank", "transfer"): (
            ["FROM", "TO", "AMOUNT", "MEMO"],
            1,
            lambda a, b, amount, memo="": store.transfer(a, b, _cents(amount), memo),
        ),
        ("bank", "pay"): (
            ["ACCOUNT", "PAYEE", "AMOUNT", "MEMO"],
            1,
            lambda a, payee, amount, memo="": store.pay(a, payee, _cents(amount), memo),
        ),
        ("flights", "list"): ([], 0, lambda: {"bookings": store.bookings()}),
        ("flights", "show"): (["CODE"], 0, store.booking),
        ("flights", "change"): (["CODE", "DEPART_AT"], 0, store.booking_change),
        ("flights", "cancel"): (["CODE"], 0, store.booking_cancel),
        ("flights", "book"): (
            ["ORIGIN", "DESTINATION", "DEPART_AT"],
            0,
            lambda o, d, t: store.booking_new(
                o, d, t, next((b["passenger"] for b in store.bookings() if b["passenger"]), store.author)
            ),
        ),
        ("accounts", "list"): ([], 0, lambda: {"logins": store.logins()}),
        ("accounts", "set-password"): (["USERNAME", "NEW_PASSWORD"], 0, store.set_password),
    }


def main(argv: list) -> int:
    world = Path(os.environ.get("WORLD_DIR") or Path(__file__).resolve().parent)
    if len(argv) < 2 or argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0 if argv[:1] in (["-h"], ["--help"], ["help"]) else 2
    table = commands(LifeStore(world))
    entry = table.get((argv[0], argv[1]))
    if entry is None:
        print(json.dumps({"error": f"unknown command {' '.join(argv[:2])!r}", "status": 400}))
        print(USAGE, file=sys.stderr)
        return 1
    names, optional, action = entry
    args = argv[2:]
    if not len(names) - optional <= len(args) <= len(names):
        usage = " ".join(n if i < len(names) - optional else f"[{n}]" for i, n in enumerate(names))
        print(json.dumps({"error": f"usage: worldtool {argv[0]} {argv[1]} {usage}".strip(), "status": 400}))
        return 1
    try:
        result = action(*args)
    except WorldInputError as e:
        print(json.dumps({"error": str(e), "status": e.status}))
        return 1
    print(json.dumps(result, indent=1, ensure_ascii=False, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
