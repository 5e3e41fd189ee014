"""The state of simulated tools: known ids and recorded calls, kept in the service's own state.

A simulated tool (answered by a `WorldModel`) still lives in a world with state, so that what an
agent does is remembered and what it reads is consistent:

- **Known ids.** Every string argument of a simulated tool named like an id (``ghsaId``,
  ``gist_id``, ``threadID``) but pointing at no typed collection names an entity of the simulated
  world. `generate_state` seeds three to five ids per such name; a call with an unknown one is a
  404, and ids in simulated responses are replaced by known ones, so a simulated
  ``list_notifications`` answers with ids that ``get_notification_details`` accepts.
- **Recorded calls, per family.** Tools form a *family* by the words of their name other than
  verbs and the service prefix (``set_status``/``get_status`` -> ``status``,
  ``issue_write``/``issue_read`` -> ``issue``). A simulated *write* (readOnlyHint false,
  destructiveHint true, a write verb after the service prefix, or a name that opens with a noun
  and a description that opens with a write verb: `is_write`) appends its
  arguments and response to its family's records, so it changes the state like any write. A
  simulated *read* answers:
  1. exactly the recorded response of an earlier identical call of the same tool (the initial
     state holds one such seeded call per read tool: the world as it is in this episode);
  2. else the world model's response, overlaid with the values of the latest recorded call of
     its family that agrees with it on every argument both share (``set_status(ticket, 'closed')``
     then ``get_status(ticket)`` answers ``status: closed``).

The store is a typed field ``simulated`` of the service's state, so snapshots, resets,
``dump_state`` and verification all see it.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import Field

from envpipeline.models.base import Strict
from envpipeline.services.mcp_values import NULL, schema_type, words
from envpipeline.services.worldmodel import canonical_json

#: Verbs that make a simulated tool a write when its spec has no readOnlyHint.
WRITE_WORDS = frozenset(
    {
        "create", "add", "new", "insert", "update", "edit", "modify", "set", "patch", "put", "delete",
        "remove", "archive", "send", "post", "submit", "approve", "reject", "close", "open", "assign",
        "merge", "pay", "book", "cancel", "notify", "publish", "upload", "move", "transfer", "refund",
        "charge", "invite", "reply", "write", "save", "store", "append", "rename", "star", "unstar",
        "dismiss", "mark", "trigger", "run", "execute", "start", "stop", "enable", "disable", "fork",
        "lock", "unlock", "react", "comment", "resolve", "reopen", "schedule", "clear", "reset",
    }
)  # fmt: skip
#: More verbs that make a simulated tool a write, kept out of family names (``list_releases`` and
#: ``get_release`` stay one family): actions found among the corpus's tools that nothing marks.
ACTION_WORDS = frozenset(
    {"exercise", "kill", "purchase", "release", "buy", "sell", "import", "install", "uninstall",
     "deploy", "restart", "revoke", "grant", "terminate", "suspend", "resume", "pause", "rollback"}
)  # fmt: skip
#: Verbs of reads (left out of family names, like the write verbs).
READ_WORDS = frozenset(
    {"get", "read", "fetch", "retrieve", "show", "list", "search", "find", "query", "describe", "view",
     "lookup", "look", "check", "count", "download", "export", "summarize", "convert", "calculate"}
)  # fmt: skip
FILLER_WORDS = frozenset({"a", "an", "the", "my", "all", "to", "from", "of", "for", "by", "with", "in", "on"})
#: Most values kept per known-id name.
KNOWN_IDS = (3, 5)


class SimulatedCall(Strict):
    """One recorded call of a simulated tool."""

    tool: Annotated[str, Field(description="tool name")]
    arguments: Annotated[dict[str, Any], Field(description="the call's arguments (JSON)")]
    response: Annotated[dict[str, Any], Field(description="what the tool answered")]


class SimulatedStore(Strict):
    """The simulated part of a service's state (see the module docstring)."""

    known: Annotated[
        dict[str, list[str]], Field(default_factory=dict, description="id argument words -> known ids")
    ]
    records: Annotated[
        dict[str, list[SimulatedCall]],
        Field(default_factory=dict, description="tool family -> recorded calls, oldest first"),
    ]


def id_key(name: str) -> str | None:
    """The known-id key of an argument or response field named like an id (``ghsaId`` -> ``ghsa_id``)."""
    parts = words(name)
    return "_".join(parts) if len(parts) >= 2 and parts[-1] == "id" else None


def family(tool: str, prefixes: frozenset[str] = frozenset()) -> str:
    """The family of a tool: its name's words without verbs, fillers and service prefixes."""
    parts = [w for w in words(tool) if w not in WRITE_WORDS | READ_WORDS | FILLER_WORDS | prefixes]
    return "_".join(_singular(p) for p in parts) or tool


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


#: HTTP methods that lead generated tool names before their real verb (Notion's ``API-post-search``),
#: for `is_write` and `mcp_spec.classify` alike;
#: ``get`` and ``delete`` are left out: there they are the verb (``get_open_position``)
HTTP_METHODS = frozenset({"post", "put", "patch"})


#: Verbs not taken from the middle of a name: there they are adjectives or nouns (``cancel_all_orders``,
#: ``wait_for_new_message``, ``blog_post_comments``), for `is_write` and `mcp_spec` alike.
NOT_INSIDE = frozenset({"all", "new", "post", "put"})


#: Words that lead a tool's name before its real verb (``freshdesk_bulk_create_agents``,
#: ``jira_batch_create_issues``, ``jira_batch_get_changelogs``), for `is_write`
BATCH_WORDS = frozenset({"bulk", "batch", "mass"})


#: Verbs of writes that lead a tool's description or sit inside its name after a noun
#: (``reddit_upvote``: "Upvotes a post."; ``box_file_lock_tool``; ``ps_restart``), beside
#: `WRITE_WORDS` and `ACTION_WORDS`; like those of `ACTION_WORDS`, kept in family names.
MORE_WRITE_WORDS = frozenset(
    {"upvote", "downvote", "vote", "push", "restore", "follow", "unfollow", "subscribe",
     "unsubscribe", "like", "unlike", "share", "unshare", "pin", "unpin", "initiate", "forward",
     "upsert", "duplicate", "copy", "clone", "block", "unblock", "mute", "unmute", "ban", "unban",
     "kick", "accept", "decline", "join", "leave", "register", "enroll", "attach", "detach",
     "unlink", "rotate", "renew", "invalidate", "purge", "flush", "emit", "broadcast", "retry",
     "rerun", "snooze", "acknowledge", "moderate", "commit", "replace", "scale", "build", "define",
     "complete", "toggle", "activate", "deactivate", "escalate", "transition"}
)  # fmt: skip
#: Verbs of reads that lead a tool's description, beside `READ_WORDS` ("Locate a user by their
#: email address.", "Analyze Cloudflare DEX Test Results"), for `is_write` only.
MORE_READ_WORDS = frozenset(
    {"locate", "analyze", "analyse", "inspect", "return", "browse", "preview", "monitor",
     "compare", "wait", "poll", "watch", "extract", "explain", "validate", "obtain", "display",
     "print", "access", "scan", "detect", "identify", "discover", "estimate", "test", "ping",
     "evaluate", "determine", "verify", "see", "explore", "diff"}
)  # fmt: skip
_WRITES = WRITE_WORDS | ACTION_WORDS | MORE_WRITE_WORDS
_READS = READ_WORDS | MORE_READ_WORDS
_WORD = re.compile(r"[A-Za-z]+")


def _description_verb(description: str) -> str | None:
    """The verb a tool's description opens with ("Upvotes a post." -> upvote), if it is one."""
    found = _WORD.search(description)
    if found is None:
        return None
    word = found.group().lower()
    stems = [word]
    if word.endswith("ies"):
        stems.append(word[:-3] + "y")
    if word.endswith("es"):
        stems.append(word[:-2])
    if word.endswith("s"):
        stems.append(word[:-1])
    return next((w for w in stems if w in _WRITES | _READS), None)


def is_write(
    tool: str,
    annotations: dict[str, Any] | None,
    prefixes: frozenset[str] = frozenset(),
    description: str = "",
) -> bool:
    """Whether a simulated tool changes the world.

    Its ``readOnlyHint`` decides where the spec gives one. Else its name, read after the service's
    `prefixes`, a leading HTTP method and a leading "bulk", "batch" or "mass"
    (``jira_delete_issue`` deletes, ``API-post-search`` searches, ``jira_batch_create_issues``
    creates): a verb of `WRITE_WORDS`, `ACTION_WORDS` or `READ_WORDS` first decides (so does
    ``write``/``create`` last). Any other name (``reddit_upvote``, ``box_file_lock_tool``,
    ``pipelines_run``, ``graphql_complete_schema``) is read through the verb its `description`
    opens with ("Upvotes a post.", "Retrieve pipeline run data", "Fetch the complete ... schema"),
    else through the first verb inside it, unless ``destructiveHint: true`` makes it a
    write (MCP gives that hint meaning only for tools that are not read-only).
    """
    notes = annotations or {}
    hint = notes.get("readOnlyHint")
    if isinstance(hint, bool):
        return not hint
    parts = words(tool)
    while len(parts) > 1 and parts[0] in prefixes:
        parts = parts[1:]
    if len(parts) > 1 and parts[0] in HTTP_METHODS and parts[1] in WRITE_WORDS | READ_WORDS:
        parts = parts[1:]
    if len(parts) > 1 and parts[0] in BATCH_WORDS:  # ``bulk_create_agents`` creates
        parts = parts[1:]
    if not parts:
        return False
    if parts[0] in WRITE_WORDS | ACTION_WORDS or (len(parts) > 1 and parts[-1] in {"write", "create"}):
        return True
    if parts[0] in READ_WORDS:
        return False
    if notes.get("destructiveHint") is True:
        return True
    inside = (w for w in parts if w in _WRITES | _READS and w not in NOT_INSIDE)
    verb = _description_verb(description) or next(inside, None)
    return verb in _WRITES


def seed_known(id_names: set[str], rng: random.Random) -> dict[str, list[str]]:
    """Three to five seeded ids per known-id key (``gist_id`` -> ``gist_4821``...)."""
    known = {}
    for key in sorted(id_names):
        stem = key.removesuffix("_id") or "item"
        count = rng.randint(*KNOWN_IDS)
        known[key] = sorted({f"{stem}_{rng.randint(1000, 9999)}" for _ in range(count)})
    return known


def unknown_id(
    store: SimulatedStore, arguments: dict[str, Any], id_args: list[str], schemas: dict[str, dict[str, Any]]
) -> tuple[str, str] | None:
    """The first (argument, value) naming an id the simulated world does not know, if any.

    An argument's declared default is always known (Box's root folder ``'0'``).
    """
    for arg in id_args:
        value = arguments.get(arg)
        if value == schemas.get(arg, {}).get("default"):
            continue
        key = id_key(arg)
        if isinstance(value, str) and key in store.known and value not in store.known[key]:
            return arg, value
    return None


def _fits(value: Any, schema: dict[str, Any] | None) -> bool:
    if schema is None or not schema:
        return True
    kind = schema_type(schema)
    if schema.get("enum"):
        return value in schema["enum"]
    checks: dict[str, Callable[[Any], bool]] = {
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool),
        "array": lambda v: isinstance(v, list),
        "object": lambda v: isinstance(v, dict),
    }
    nullable = isinstance(schema.get("type"), list) and NULL in schema["type"]
    return (value is None and nullable) or (kind in checks and checks[kind](value))


def _known_ids(value: Any, store: SimulatedStore, seed: int) -> Any:
    """`value` with every string field named like a known id replaced by a known id."""
    if isinstance(value, list):
        return [_known_ids(v, store, seed + n) for n, v in enumerate(value)]
    if not isinstance(value, dict):
        return value
    out = {}
    for key, item in value.items():
        ids = store.known.get(id_key(key) or "")
        out[key] = ids[seed % len(ids)] if ids and isinstance(item, str) else _known_ids(item, store, seed)
    return out


def answer_read(
    store: SimulatedStore,
    fam: str,
    tool: str,
    arguments: dict[str, Any],
    output_schema: dict[str, Any] | None,
    simulate: Callable[[], dict[str, Any]],
    seed: int,
) -> dict[str, Any]:
    """The response of a simulated read, consistent with the store (see the module docstring)."""
    records = store.records.get(fam, [])
    wanted = canonical_json(arguments)
    for call in reversed(records):
        if call.tool == tool and canonical_json(call.arguments) == wanted:
            return dict(call.response)
    response = _known_ids(simulate(), store, seed)
    props = (output_schema or {}).get("properties") if output_schema else None
    for call in reversed(records):
        if call.tool == tool:
            continue
        shared = set(call.arguments) & set(arguments)
        if any(call.arguments[k] != arguments[k] for k in shared):
            continue
        changes = {
            k: v
            for k, v in call.arguments.items()
            if k not in shared and v is not None and (props is None or (k in props and _fits(v, props[k])))
        }
        if props is None and output_schema is not None:
            changes = {}  # a non-object response has no field to carry a recorded value
        if changes:
            return {**response, **changes}
    return response


def record_write(
    store: SimulatedStore, fam: str, tool: str, arguments: dict[str, Any], response: dict[str, Any]
) -> None:
    """Remember a simulated write (its arguments and response) in its family."""
    store.records.setdefault(fam, []).append(SimulatedCall(tool=tool, arguments=arguments, response=response))
