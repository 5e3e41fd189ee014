"""Binary criterion checks that compare a FINAL world day with the INITIAL one (stdlib only).

Every check takes the criterion as a plain dict (``WorldCriterion.model_dump()``) and two day
folders. The helpers below use nothing but ``sqlite3``, ``json``, ``pathlib`` and
`envpipeline.value_mentions` (standard library only) so that `render_script` can paste their
source and that module's into a standalone verifier script (Harbor export):
``python criterion_c1.py INITIAL_DIR FINAL_DIR`` prints PASS or FAIL and exits 0 or 1.
"""

from __future__ import annotations

import functools
import inspect
import json
import sqlite3
from pathlib import Path
from typing import Any

from envpipeline import value_mentions
from envpipeline.value_mentions import addresses_in, states_value


def table_rows(day_dir, app, table):
    """Every row of app/table as dicts keyed by id ({} when the database or table is missing)."""
    path = Path(day_dir) / "apps" / f"{app}.sqlite"
    if not path.is_file():
        return {}
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        return {row["id"]: dict(row) for row in conn.execute(f'SELECT * FROM "{table}"')}
    except sqlite3.OperationalError:
        return {}
    finally:
        conn.close()


def condition_holds(actual, cond):
    """One field condition {"op": eq|ne|contains|icontains|addresses, "value": v}."""
    op, value = cond["op"], cond["value"]
    if op == "eq":
        return actual == value
    if op == "ne":
        return actual != value
    if op == "addresses":  # exactly these recipients: a copy to anyone else fails
        return addresses_in(actual) == addresses_in(value)
    text = "" if actual is None else str(actual).replace("\r\n", "\n")  # a web form's line ends
    if op == "contains":
        return str(value) in text
    if op == "icontains":
        return str(value).lower() in text.lower()
    raise ValueError(f"unknown condition op {op!r}")


def row_matches(row, where):
    """Every condition of `where` holds on `row`."""
    return all(condition_holds(row.get(col), cond) for col, cond in (where or {}).items())


def mention_values(initial_dir, final_dir, mention):
    """Values of mention.column of rows added (id new in FINAL) that match mention.where."""
    before = table_rows(initial_dir, mention["app"], mention["table"])
    after = table_rows(final_dir, mention["app"], mention["table"])
    return [
        str(row[mention["column"]])
        for rid, row in sorted(after.items())
        if rid not in before and row_matches(row, mention.get("where")) and row.get(mention["column"])
    ]


def mentions(text, initial_dir, final_dir, mention):
    """`text` mentions a value of the mention (True when there is no mention)."""
    if not mention:
        return True
    return any(value in (text or "") for value in mention_values(initial_dir, final_dir, mention))


def read_home(day_dir, path):
    """Text of home/<path>, or None."""
    target = Path(day_dir) / "home" / path
    return target.read_text(encoding="utf-8", errors="replace") if target.is_file() else None


def app_tables(day_dir, app):
    """Names of the tables of app's database ([] when it is missing)."""
    path = Path(day_dir) / "apps" / f"{app}.sqlite"
    if not path.is_file():
        return []
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        return [r[0] for r in rows if not r[0].startswith("sqlite_")]
    finally:
        conn.close()


def home_files(day_dir):
    """{path under home/: bytes} of every file of the day's home folder."""
    home = Path(day_dir) / "home"
    if not home.is_dir():
        return {}
    return {p.relative_to(home).as_posix(): p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file()}


def is_timestamp(value):
    """An ISO date-time stamp (the app's clock, not content an agent wrote)."""
    return len(value) >= 16 and value[4] == "-" and value[7] == "-" and value[10] in "T "


def new_texts(initial_dir, final_dir, apps, rows=table_rows, files=home_files):
    """Text the final state adds: every added row's values and every line a home file gained
    (`rows` and `files` read a folder's tables and home files: `table_rows` and `home_files`)."""
    texts = []
    for app in apps:
        for table in app_tables(final_dir, app):
            before = rows(initial_dir, app, table)
            texts += [
                " ".join(v for v in row.values() if isinstance(v, str) and not is_timestamp(v))
                for rid, row in rows(final_dir, app, table).items()
                if rid not in before
            ]
    old = files(initial_dir)
    for path, data in files(final_dir).items():
        lines = set(old.get(path, b"").decode("utf-8", "replace").splitlines())
        texts += [line for line in data.decode("utf-8", "replace").splitlines() if line not in lines]
    return texts


def same_bytes(first, second):
    """Both files exist and hold the same bytes (an app database the final state left as it was)."""
    first, second = Path(first), Path(second)
    if not (first.is_file() and second.is_file()) or first.stat().st_size != second.stat().st_size:
        return False
    return first.read_bytes() == second.read_bytes()


def collateral(allow, initial_dir, final_dir):
    """What FINAL changed beyond `allow` (a state_preserved criterion's allowance): list of findings.

    An app whose database file is byte for byte the initial one has the initial rows, so it is
    not read (most attempts touch two or three of a day's apps)."""
    found = []
    read = {}  # each table and home folder is read once (the text check looks at them again)

    def rows(day_dir, app, table):
        key = (str(day_dir), app, table)
        if key not in read:
            read[key] = table_rows(day_dir, app, table)
        return read[key]

    def files(day_dir):
        key = (str(day_dir), "home")
        if key not in read:
            read[key] = home_files(day_dir)
        return read[key]

    volatile, tables = allow.get("volatile") or {}, allow.get("tables") or {}
    apps = sorted({p.stem for d in (initial_dir, final_dir) for p in (Path(d) / "apps").glob("*.sqlite")})
    apps = [
        app
        for app in apps
        if not same_bytes(
            Path(initial_dir) / "apps" / f"{app}.sqlite", Path(final_dir) / "apps" / f"{app}.sqlite"
        )
    ]
    for app in apps:
        for table in sorted(set(app_tables(initial_dir, app)) | set(app_tables(final_dir, app))):
            key, loose = f"{app}/{table}", volatile.get(f"{app}/{table}") or []
            if loose == "*":
                continue
            rule = tables.get(key) or {}
            before, after = rows(initial_dir, app, table), rows(final_dir, app, table)
            gone = [rid for rid in before if rid not in after]
            added = [rid for rid in after if rid not in before]
            fields = set(loose) | set(rule.get("fields") or [])
            changed = [
                rid
                for rid in before
                if rid in after
                and {f for f in after[rid] if after[rid][f] != before[rid].get(f)} - set(loose)
            ]
            widened = [
                rid
                for rid in changed
                if {f for f in after[rid] if after[rid][f] != before[rid].get(f)} - fields
            ]
            if gone:
                found.append(f"{key}: {len(gone)} row(s) deleted")
            if len(added) > int(rule.get("added", 0)):
                found.append(f"{key}: {len(added)} row(s) added, the task allows {int(rule.get('added', 0))}")
            if widened or len(changed) > int(rule.get("changed", 0)):
                found.append(
                    f"{key}: {len(changed)} row(s) changed, the task allows {int(rule.get('changed', 0))}"
                )
    forbidden = [v for v in allow.get("forbidden") or [] if v]
    for text in new_texts(initial_dir, final_dir, apps, rows, files):
        # in any spelling: '(or March 8)' beside the right date names the 2026-03-08 not asked for
        named = [v for v in forbidden if v in text or states_value(text, v)]
        if named:
            found.append(f"writes candidate value(s) the task did not ask for: {', '.join(named)}")
            break
    allowed_files = set(allow.get("files") or [])
    before_files, after_files = files(initial_dir), files(final_dir)
    for path in sorted(set(before_files) | set(after_files)):
        if before_files.get(path) != after_files.get(path) and path not in allowed_files:
            what = (
                "deleted" if path not in after_files else "added" if path not in before_files else "changed"
            )
            found.append(f"home/{path}: {what}")
    return found


def check(criterion, initial_dir, final_dir):
    """Evaluate one criterion dict; True when FINAL satisfies it relative to INITIAL."""
    kind = criterion["kind"]
    if kind == "state_preserved":
        return not collateral(criterion.get("allow") or {}, initial_dir, final_dir)
    if kind == "calls_through":
        return True  # a trajectory criterion: the verifier checks it on the trajectory, a state cannot
    where = criterion.get("where") or {}
    mention = criterion.get("mention")
    if kind in ("row_added", "row_count_delta", "row_changed"):
        before = table_rows(initial_dir, criterion["app"], criterion["table"])
        after = table_rows(final_dir, criterion["app"], criterion["table"])
        if kind == "row_added":
            field = criterion.get("field")
            return any(
                row_matches(row, where)
                and (not mention or mentions(str(row.get(field) or ""), initial_dir, final_dir, mention))
                for rid, row in after.items()
                if rid not in before
            )
        if kind == "row_count_delta":
            grown = sum(row_matches(r, where) for r in after.values()) - sum(
                row_matches(r, where) for r in before.values()
            )
            return grown >= int(criterion.get("delta", 1))
        field, to = criterion["field"], criterion.get("to")
        return any(
            rid in after and row_matches(row, where) and row.get(field) != to and after[rid].get(field) == to
            for rid, row in before.items()
        )
    if kind == "file_added":
        return (
            read_home(initial_dir, criterion["path"]) is None
            and read_home(final_dir, criterion["path"]) is not None
        )

    def holds(text, day_dir):
        if text is None:
            return False
        if criterion.get("text") and criterion["text"] not in text:
            return False
        if criterion.get("once") and text.count(criterion["text"]) != 1:
            return False
        return mentions(text, initial_dir, day_dir, mention) if mention else True

    if kind == "file_contains":
        path = criterion["path"]
        final_ok = holds(read_home(final_dir, path), final_dir)
        return final_ok and not holds(read_home(initial_dir, path), initial_dir)
    raise ValueError(f"unknown criterion kind {kind!r}")


#: The functions a rendered script carries (in dependency order).
_SCRIPT_FUNCTIONS = (
    table_rows,
    condition_holds,
    row_matches,
    mention_values,
    mentions,
    read_home,
    app_tables,
    home_files,
    is_timestamp,
    new_texts,
    same_bytes,
    collateral,
    check,
)


def check_all(
    criteria: list[dict[str, Any]], initial_dir: Path | str, final_dir: Path | str
) -> dict[str, bool]:
    """{criterion id: passed} for a list of criterion dicts."""
    return {c["id"]: bool(check(c, initial_dir, final_dir)) for c in criteria}


@functools.cache
def _script_sources() -> str:
    """The source every criterion script carries: `envpipeline.value_mentions` (standard library
    only) and the functions of `_SCRIPT_FUNCTIONS` (read once per process)."""
    mentions_source = "\n".join(
        line
        for line in inspect.getsource(value_mentions).splitlines()
        if line != "from __future__ import annotations"
    )
    return "\n\n".join([mentions_source, *(inspect.getsource(fn) for fn in _SCRIPT_FUNCTIONS)])


def render_script(criterion: dict[str, Any]) -> str:
    """A standalone Python script for one criterion: ``script.py INITIAL_DIR FINAL_DIR``."""
    sources = _script_sources()
    spec = json.dumps(criterion, sort_keys=True, indent=1)
    return (
        f'"""WildAWM criterion {criterion["id"]}: {criterion["description"]}\n\n'
        'Usage: python this.py INITIAL_DAY_DIR FINAL_DAY_DIR  (exit 0 = PASS, 1 = FAIL)\n"""\n\n'
        "import json\nimport sqlite3\nimport sys\nfrom pathlib import Path\n\n"
        f"CRITERION = json.loads({spec!r})\n\n\n{sources}\n\n"
        'if __name__ == "__main__":\n'
        "    ok = check(CRITERION, sys.argv[1], sys.argv[2])\n"
        '    print("PASS" if ok else "FAIL")\n'
        "    sys.exit(0 if ok else 1)\n"
    )
