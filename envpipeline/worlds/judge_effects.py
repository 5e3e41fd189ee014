"""The calls against the state: every write the trajectory shows succeeding left its effect.

A judge that reads the trajectory believes the calls it shows. The counterfactual probe (the
paper's stress test of judge robustness) breaks the state a successful rollout left while keeping
its trajectory: a row it added deleted, a field it changed reverted, a value in a file it wrote
corrupted, the file removed. Judges that read calls only passed such a state (the panel passed
317 of 460 probes on `bench/world_judges.py`'s seed 0); in a real attempt the same mismatch is a
write undone or overwritten later, or a command that printed success and wrote elsewhere.

`writes_took_effect` asks, for each write call that succeeded: its app shows the change in the
diff (a mail sent: a sent mail added; an order placed: an order added; a transfer: a transaction
on each side and balances that add up; an event added; a booking or a password: a change in that
app), a write to the record its address names changed that record's field (an archive: its
folder; a move: its start, the event keeping its length; a cancellation: its title), and a shell
command that writes a file: the file was added or changed, and the text it wrote whole
(``printf '%s' '...' >> notes/a.md``, ``echo '...' > f.txt``, a ``sed -i 's|old|new|'``
replacement) is in the file, unless a later command rewrote that file (``>``, ``sed -i``).
`named_mail_calls` and `sent_as_named`: the interface a mail is sent through, where the request
names one.
"""

from __future__ import annotations

import re
import shlex
from datetime import datetime
from typing import Any

from envpipeline.worlds.judge_view import (
    EMAIL,
    WRITES,
    JudgeView,
    added_rows,
    call_ok,
    effect_present,
    is_write,
    outside_quotes,
    requested_apps,
    tool_calls,
)

#: Where the shell's home is reached by an absolute path (the sandbox's working folder).
_HOMES = ("/app/", "~/", "./")
#: Tokens that end one simple command of a command line.
_SEPARATORS = {"&&", "||", ";", "|", "&", ";;"}


def _home_path(path: str) -> str | None:
    """A redirection target as a path under home, or None for one outside it (``/dev/null``)."""
    for prefix in _HOMES:
        if path.startswith(prefix):
            path = path[len(prefix) :]
    return None if not path or path.startswith(("/", "&")) else path


def _simple_commands(command: str) -> list[list[str]]:
    """The command line's simple commands as shell words, operators (``>``, ``>>``) apart."""
    # a descriptor's redirection ('2>/dev/null', '1>f'): its number is no word of the command
    command = re.sub(r"(?<![^\s;&|])\d+(?=>)", "", command)
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:  # unbalanced quotes: nothing can be read from it
        return []
    out: list[list[str]] = [[]]
    for token in tokens:
        if token in _SEPARATORS:
            out.append([])
        else:
            out[-1].append(token)
    return [words for words in out if words]


def _file_writes(command: str) -> tuple[set[str], list[tuple[str, str]], set[str]]:
    """(files the command writes, (file, text it writes whole), files it rewrites: ``>``, ``sed -i``)."""
    targets: set[str] = set()
    texts: list[tuple[str, str]] = []
    rewritten: set[str] = set()
    for words in _simple_commands(command):
        redirected = [(op, words[i + 1]) for i, op in enumerate(words[:-1]) if op in (">", ">>")]
        paths = [(op, p) for op, t in redirected if (p := _home_path(t))]
        targets |= {p for _, p in paths}
        rewritten |= {p for op, p in paths if op == ">"}
        head = words[: words.index(redirected[0][0])] if redirected else words
        if head and head[0] == "sed" and "-i" in head and (p := _home_path(head[-1])):
            targets.add(p)
            rewritten.add(p)
            replaced = _sed_replacement(head[1:-1])
            if replaced is not None:
                texts.append((p, replaced))
        text = _printed(head)
        if text is not None:
            texts += [(p, text) for _, p in paths]
    return targets, texts, rewritten


def _sed_replacement(words: list[str]) -> str | None:
    """The text one ``s<d>old<d>new<d>`` expression puts in (its escapes undone), or None when the
    arguments are not one such expression or the text refers to what it matched (``&``, ``\\1``)."""
    expressions = [w for w in words if len(w) > 3 and w[0] == "s" and not w[1].isalnum() and w[1] != "-"]
    if len(expressions) != 1:
        return None
    expression = expressions[0]
    parts = re.split(rf"(?<!\\){re.escape(expression[1])}", expression[2:])
    if len(parts) < 2 or re.search(r"(?<!\\)&|\\\d", parts[1]):
        return None
    return re.sub(r"\\(.)", r"\1", parts[1])


def _printed(words: list[str]) -> str | None:
    """What ``printf '%s' TEXT`` or ``echo [-n] TEXT...`` prints, or None for another command."""
    if len(words) == 3 and words[0] == "printf" and words[1] == "%s":
        return words[2]
    if words and words[0] == "echo":
        args = words[1:]
        while args and re.fullmatch(r"-[neE]+", args[0]):
            if "e" in args[0]:
                return None  # escapes interpreted: the text is not what the word says
            args = args[1:]
        return " ".join(args)
    return None


def _files_ok(view: JudgeView, commands: list[str]) -> bool:
    """Every file the shell commands wrote shows written, with the text they wrote whole in it."""
    changed = set(view.state_diff["files"]["added"]) | set(view.state_diff["files"]["changed"])
    plans = [_file_writes(c) for c in commands]
    for index, (targets, texts, _) in enumerate(plans):
        if any(path not in changed for path in targets):
            return False  # the command wrote a file the final state does not show written
        later = {p for _, _, rewrites in plans[index + 1 :] for p in rewrites}
        for path, text in texts:
            # line by line, a typed backslash-n read as the line break it was meant as
            lines = [line.strip() for line in re.split(r"\n|\\n", text) if line.strip()]
            if path not in later and any(line not in view.files.get(path, "") for line in lines):
                return False  # what it wrote whole is not in the file
    return True


#: A web write to one record, by the id in its address, and the field it changes.
_RECORD_CALL = re.compile(r"web\.POST /(calendar|mail)/(\d+)/(move|cancel|archive)\b")
_RECORD_FIELD = {"move": "start", "cancel": "title", "archive": "folder"}
_RECORD_TABLE = {"calendar": "calendar/events", "mail": "mail/messages"}


def _app_changed(view: JudgeView, app: str, name: str) -> bool:
    """The diff shows the change a successful write call of `app` makes: the record its address
    names changed in the field it sets (an event moved: its start), a mail sent, an order placed, a
    transfer or payment posted (a transaction added, not only balances moved), a message added."""
    record = _RECORD_CALL.match(name)
    if record is not None:
        table, rid, field = _RECORD_TABLE[record[1]], int(record[2]), _RECORD_FIELD[record[3]]
        changes = view.state_diff.get(table, {}).get("changed", [])
        return any(
            c["id"] == rid and field in c["fields"] and (field != "start" or _kept_length(c)) for c in changes
        )
    if name.startswith(("web.POST /bank/transfer", "web.POST /bank/pay")):
        posted = len(added_rows(view, "bank/transactions"))  # a transfer posts one on each side
        return posted >= (2 if name.startswith("web.POST /bank/transfer") else 1) and balances_add_up(view)
    if name.startswith("web.POST /calendar/add"):
        return bool(added_rows(view, "calendar/events"))
    return effect_present(view, app)  # the row (or change) of the kind the app's writes make


def balances_add_up(view: JudgeView) -> bool:
    """Each account's balance moved by exactly the transactions added to it: money is never
    created or lost outside a posted transaction."""
    moved: dict[Any, int] = {}
    for row in added_rows(view, "bank/transactions"):
        moved[row.get("account_id")] = moved.get(row.get("account_id"), 0) + int(row.get("amount_cents") or 0)
    changes = view.state_diff.get("bank/accounts", {}).get("changed", [])
    balances = {
        c["after"].get("id"): int(c["after"].get("balance_cents") or 0)
        - int(c["before"].get("balance_cents") or 0)
        for c in changes
    }
    return all(balances.get(a, 0) == n for a, n in moved.items()) and all(
        moved.get(a, 0) == n for a, n in balances.items()
    )


def _kept_length(change: dict[str, Any]) -> bool:
    """A moved event kept its length: its end moved with its start (where both read as times)."""
    try:
        spans = [
            datetime.fromisoformat(str(row["end"])) - datetime.fromisoformat(str(row["start"]))
            for row in (change["before"], change["after"])
        ]
    except (KeyError, ValueError):
        return True
    return spans[0] == spans[1]


def _app_of(name: str) -> str | None:
    return next(
        (app for app, prefixes in WRITES.items() if app != "files" and name.startswith(prefixes)), None
    )


#: How a clause says which interface sends a mail.
_SEND_VIA = re.compile(r"(?:through|with) the mail tool|(?:from|in|via) the webmail")


def named_mail_calls(instruction: str) -> tuple[str, ...]:
    """The mail-sending call the instruction names, else either: the interface named in the
    clause that addresses the mail ('email the total to x@y through the mail tool'), not in another
    ('find the email ... in the webmail' reads one); where no clause does, the one interface the
    instruction names for mail at all."""
    free = outside_quotes(instruction).lower()
    named = set()
    for clause in re.split(r"[,;]\s|\.\s|\bthen\b", free):
        via = _SEND_VIA.search(clause)
        if via is not None and EMAIL.search(clause):
            named.add("mcp.mail_send" if "mail tool" in via.group() else "web.POST /mail/send")
    if not named:  # no clause both addresses and says how: a quote within a quote ('the email
        # 'Sorry, I have to cancel 'Sync' on ...'') hid the rest of its clause, so read it whole
        vias = _SEND_VIA.findall(instruction.lower())
        named = {"mcp.mail_send" if "mail tool" in via else "web.POST /mail/send" for via in vias}
    return (named.pop(),) if len(named) == 1 else WRITES["mail"][:2]


def writes_took_effect(view: JudgeView) -> bool:
    """Every write call that succeeded shows in the final state (see the module's docstring)."""
    writes: list[tuple[str, dict[str, Any]]] = [
        (name, arguments)
        for name, arguments, result in tool_calls(view)
        if is_write(name, arguments) and call_ok(result)
    ]
    commands = [str(a.get("command", "")) for name, a in writes if name == "cli.exec"]
    if not _files_ok(view, commands):
        return False
    return all(_app_changed(view, app, name) for name, _ in writes if (app := _app_of(name)) is not None)


def sent_as_named(view: JudgeView) -> bool:
    """A mail the instruction asks to send through one interface (the mail tool, the webmail) was
    sent through it: the state cannot tell, the calls can."""
    if "mail" not in requested_apps(view.instruction):
        return True
    named = named_mail_calls(view.instruction)
    return any(name.startswith(named) and call_ok(result) for name, arguments, result in tool_calls(view))
