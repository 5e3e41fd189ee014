"""Checks an LLM-synthesized world task must pass before it is gated: shape, leaks, reference run.

- `draft_problems`: the draft is executable as written (known actions with their arguments, steps on
  their sub-task's interface, read patterns with one group per captured variable, write templates
  that only use variables read earlier, criteria on real apps, tables and files, setup inserts that
  set every column, at least two interfaces);
- `leaked_answers`: the instruction states none of the values the agent must find (what each read
  step's pattern captures in W0);
- `reference_problems`: V(W0, W0) = 0, and the reference agent (hinted, no mistakes) following the
  task's own solution through web, MCP and CLI gets V = 1; and it gets V = 0 when it slips once
  (`worlds.careless`: a value it writes miscopied, a step skipped) and that changes the world.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from envpipeline.models.world_task import WorldTask
from envpipeline.value_mentions import states_value
from envpipeline.worlds.agent_actions import ACTIONS
from envpipeline.worlds.careless import careless_problems
from envpipeline.worlds.schema import FILES_APP, SCHEMA
from envpipeline.worlds.state import WorldReader
from envpipeline.worlds.tasks import prepare_initial
from envpipeline.worlds.verifier import evaluate

#: Required arguments of the documented solution actions (newer actions are accepted by name).
ACTION_ARGS: dict[str, tuple[str, ...]] = {
    "mcp.read_chat": ("channel", "pattern", "vars"),
    "mcp.read_dm": ("peer", "pattern", "vars"),
    "mcp.read_mail": ("subject", "pattern", "vars"),
    "mcp.dm_send": ("peer", "body"),
    "mcp.chat_post": ("channel", "body"),
    "mcp.mail_send": ("to", "subject", "body"),
    "web.buy": ("product",),
    "web.read_mail": ("subject", "pattern", "vars"),
    "web.archive_mail": ("id_var",),
    "web.order_status": ("order", "var"),
    "web.send_mail": ("to", "subject", "body"),
    "cli.read_file": ("path", "pattern", "vars"),
    "cli.write_file": ("path", "content"),
    "cli.append_file": ("path", "content"),
    "cli.replace_line": ("path", "old", "new"),
}
#: What the prompt tells the model about each action.
ACTION_DOCS: dict[str, str] = {
    "mcp.read_chat": "channel, pattern (regex), vars (names of its groups), author?",
    "mcp.read_dm": "peer (handle), pattern, vars: reads incoming DMs",
    "mcp.read_mail": "subject (substring), pattern, vars, id_var?: reads an inbox mail",
    "mcp.dm_send": "peer, body (may use {var})",
    "mcp.chat_post": "channel, body",
    "mcp.mail_send": "to, subject, body",
    "web.buy": "product (a var holding the exact product name), vars? {sku, order, price}: orders it",
    "web.read_mail": "subject, pattern, vars, id_var (remembers the mail for archive_mail)",
    "web.archive_mail": "id_var",
    "web.order_status": "order (var of an order number), var (receives the status)",
    "web.send_mail": "to, subject, body",
    "cli.read_file": "path, pattern, vars",
    "cli.write_file": "path, content",
    "cli.append_file": "path, content",
    "cli.replace_line": "path, old, new",
}
_VAR = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
READS = {"mcp.read_chat", "mcp.read_dm", "mcp.read_mail", "web.read_mail", "cli.read_file"}
ROW_KINDS = {"row_added", "row_count_delta", "row_changed"}


def _read_vars(action: str, args: dict[str, Any]) -> list[str]:
    if action == "web.buy":
        names = args.get("vars") or {}
        return [names.get(k, k) for k in ("sku", "order", "price")] if isinstance(names, dict) else []
    if action == "web.order_status":
        return [str(args.get("var"))]
    found = args.get("vars") or ([args["var"]] if "var" in args else [])
    return [str(v) for v in found] if isinstance(found, list) else []


def draft_problems(task: WorldTask) -> list[str]:
    """Why the task cannot run as written ([] = it can)."""
    problems: list[str] = []
    if len(set(task.interface_flow)) < 2:
        problems.append(f"interface_flow {task.interface_flow}: a task needs at least two interfaces")
    known: set[str] = set()
    for n, step in enumerate(task.solution):
        at = f"solution step {n} ({step.action})"
        if step.action not in ACTIONS:
            problems.append(f"{at}: unknown action; use one of {sorted(ACTIONS)}")
            continue
        if step.action.split(".", 1)[0] != task.interface_flow[step.subtask]:
            problems.append(f"{at}: its sub-task {step.subtask} is on {task.interface_flow[step.subtask]}")
        missing = [a for a in ACTION_ARGS.get(step.action, ()) if a not in step.args]
        if missing:
            problems.append(f"{at}: missing arguments {missing}")
            continue
        if "pattern" in step.args:
            try:
                groups = re.compile(str(step.args["pattern"])).groups
            except re.error as exc:
                problems.append(f"{at}: pattern does not compile: {exc}")
                continue
            if groups != len(_read_vars(step.action, step.args)):
                problems.append(
                    f"{at}: pattern has {groups} group(s) for {len(_read_vars(step.action, step.args))} var(s)"
                )
        used = {v for value in step.args.values() if isinstance(value, str) for v in _VAR.findall(value)}
        if step.action in ("web.buy", "web.order_status"):
            used.add(str(step.args.get("product") or step.args.get("order")))
        unknown = sorted(used - known)
        if unknown and step.action not in READS:
            problems.append(f"{at}: uses {unknown} before any step reads them")
        known |= set(_read_vars(step.action, step.args))
        if step.action in ("web.read_mail", "mcp.read_mail") and step.args.get("id_var"):
            known.add(str(step.args["id_var"]))
    for sub in range(len(task.subtasks)):
        if not any(s.subtask == sub for s in task.solution):
            problems.append(f"sub-task {sub}: has no solution step")
    for c in task.criteria:
        at = f"criterion {c.id} ({c.kind})"
        if c.kind in ROW_KINDS:
            columns = SCHEMA.get(c.app or "", {}).get(c.table or "")
            if columns is None:
                problems.append(f"{at}: unknown app/table {c.app}/{c.table}")
            elif bad := [
                k for k in [*c.where, *([c.field] if c.field else [])] if k not in columns and k != "id"
            ]:
                problems.append(f"{at}: unknown columns {bad} of {c.app}/{c.table}")
        elif c.kind in ("file_contains", "file_added") and not c.path:
            problems.append(f"{at}: needs a path under home/")
    for n, op in enumerate(task.setup):
        columns = SCHEMA.get(op.app, {}).get(op.table or "")
        if op.op != "insert" or op.app == FILES_APP or columns is None:
            problems.append(
                f"setup {n}: only inserts into app tables are allowed ({op.op} {op.app}/{op.table})"
            )
        elif missing := [c for c in columns if c not in op.values]:
            problems.append(f"setup {n}: insert into {op.app}/{op.table} misses columns {missing}")
    return problems


def _sources(action: str, args: dict[str, Any], reader: WorldReader) -> list[str]:
    """The texts a read step looks at in W0, in the order the agent picks its match."""
    if action == "mcp.read_chat":
        rows = reader.query(
            "chat",
            "SELECT m.body, m.author FROM messages m JOIN channels c ON c.id = m.channel_id "
            "WHERE c.name = ? ORDER BY m.id DESC",
            [args.get("channel")],
        )
        return [r["body"] for r in rows if not args.get("author") or r["author"] == args["author"]]
    if action == "mcp.read_dm":
        rows = reader.query(
            "dm",
            "SELECT body FROM messages WHERE peer = ? AND direction = 'in' ORDER BY id DESC",
            [args.get("peer")],
        )
        return [r["body"] for r in rows]
    if action in ("mcp.read_mail", "web.read_mail"):
        rows = reader.query("mail", "SELECT subject, body FROM messages WHERE folder = 'inbox' ORDER BY id")
        return [r["body"] for r in rows if str(args.get("subject", "")) in (r["subject"] or "")]
    if action == "cli.read_file" and "{" not in str(args.get("path")):
        path = str(args.get("path"))
        return [reader.read_file(path)] if reader.exists(path) else []
    return []


def captured_values(task: WorldTask, w0: Path) -> dict[str, str]:
    """What each read step's pattern captures in W0 (var -> value), as the reference agent finds it."""
    reader = WorldReader(w0)
    out: dict[str, str] = {}
    for step in task.solution:
        if step.action not in READS:
            continue
        names = _read_vars(step.action, step.args)
        for text in _sources(step.action, step.args, reader):
            found = re.search(str(step.args.get("pattern", "")), text or "")
            if found:
                out.update({n: g.strip() for n, g in zip(names, found.groups()) if g})
                break
    return out


def leaked_answers(task: WorldTask, w0: Path) -> list[str]:
    """The answers the instruction gives away: values (>= 3 characters) the solution's reads capture in
    W0 that the instruction already states, verbatim or in another spelling (`value_mentions`: 'March
    6' for 2026-03-06, '4:15 pm' for 16:15); facts that merely identify the request, like a topic,
    may appear."""
    answers = {f"read value {k}": v for k, v in captured_values(task, w0).items()}
    return [
        f"the instruction states the {name} {value!r}; the agent must find it, not be told"
        for name, value in sorted(answers.items())
        if states_value(task.instruction, value)
    ]


def reference_problems(task: WorldTask, day_dir: Path) -> list[str]:
    """V(W0, W0) must be 0 and the reference agent's V must be 1 (with the failed criteria if not)."""
    from envpipeline.worlds.agents import ScriptedAgent

    with tempfile.TemporaryDirectory(prefix="wildawm-reference-") as tmp:
        w0 = prepare_initial(task, day_dir, Path(tmp) / "w0" / Path(day_dir).name)
        leaks = leaked_answers(task, w0)
        if leaks:
            return leaks
        initial = evaluate(task, w0, w0)
        if initial.verdict:
            return ["the initial state already satisfies every criterion (V(W0, W0) = 1)"]
        final = Path(tmp) / "final" / w0.name
        shutil.copytree(w0, final)
        agent = ScriptedAgent("expert", hinted=True, seed="reference", error_rate=0.0)
        run = agent.run(task, final)
        result = evaluate(task, w0, final, run.trajectory)
        if result.verdict:
            return careless_problems(task, w0)
        failed = {c.id: c.description for c in task.criteria if c.id in result.failed}
        return [
            f"the reference solution does not pass: criterion {cid} ({text}) fails after it runs"
            for cid, text in failed.items()
        ]
