"""Reading a materialized day: read-only queries, canonical dumps, the world hash and state diffs.

The world hash covers every file under home/ (path + bytes) and a canonical dump of every SQLite
table (rows sorted by id), never the raw .sqlite bytes, so VACUUM or page layout do not change it.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import re
import sqlite3
import tarfile
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from envpipeline.errors import ConfigError
from envpipeline.worlds.schema import FILES_APP

_DAY_RE = re.compile(r"^day-(\d{2,})$")


def day_of(day_dir: Path) -> int:
    """The day number of a `day-dd` folder."""
    match = _DAY_RE.match(Path(day_dir).name)
    if not match:
        raise ConfigError(f"{day_dir} is not a day-dd folder")
    return int(match.group(1))


def day_path(world_dir: Path, day: int) -> Path:
    """`<world_dir>/day-dd`."""
    return Path(world_dir) / f"day-{day:02d}"


class WorldReader:
    """Read-only view of one day folder (the state skills and the planner read)."""

    def __init__(self, day_dir: Path | str) -> None:
        self.day_dir = Path(day_dir)
        self.home = self.day_dir / "home"
        if not (self.day_dir / "apps").is_dir():
            raise ConfigError(f"{self.day_dir} is not a world day (no apps/)")

    @property
    def day(self) -> int:
        """The day number of this folder."""
        return day_of(self.day_dir)

    def query(self, app: str, sql: str, params: tuple | list = ()) -> list[dict[str, Any]]:
        """Run one read-only SQL statement against an app database; rows as dicts."""
        path = self.day_dir / "apps" / f"{app}.sqlite"
        if not path.exists():
            raise ConfigError(f"no app database {app!r} in {self.day_dir}")
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        conn.row_factory = sqlite3.Row
        try:
            return [dict(row) for row in conn.execute(sql, tuple(params)).fetchall()]
        finally:
            conn.close()

    def read_file(self, path: str) -> str:
        """Text of a file under home/."""
        return (self.home / path).read_text(encoding="utf-8")

    def exists(self, path: str) -> bool:
        """Whether home/<path> is a file."""
        return (self.home / path).is_file()

    def list_files(self) -> list[str]:
        """Every file under home/, relative, sorted."""
        return sorted(p.relative_to(self.home).as_posix() for p in self.home.rglob("*") if p.is_file())

    def history(self) -> list[dict[str, Any]]:
        """The delta.json of days 1..this day (sibling folders), oldest first."""
        out = []
        for day in range(1, self.day + 1):
            path = day_path(self.day_dir.parent, day) / "delta.json"
            if path.exists():
                out.append(json.loads(path.read_text(encoding="utf-8")))
        return out


def _tables(db: Path) -> dict[str, list[dict[str, Any]]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        names = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
            )
        ]
        return {
            name: _canonical_rows([dict(r) for r in conn.execute(f'SELECT * FROM "{name}"')])
            for name in names
        }
    finally:
        conn.close()


def _canonical_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`rows` sorted by integer id, then by their sorted JSON (ties and rows without an integer id).

    When every row has its own integer id (an app table's primary key) the JSON never decides, so
    it is not computed: sorting by id alone gives the same order."""
    ids = [r.get("id") for r in rows]
    if all(isinstance(i, int) for i in ids) and len(set(ids)) == len(ids):
        return sorted(rows, key=lambda r: r["id"])
    return sorted(
        rows,
        key=lambda r: (
            r.get("id") if isinstance(r.get("id"), int) else 0,
            json.dumps(r, sort_keys=True, default=str),
        ),
    )


def canonical_dump(day_dir: Path | str) -> dict[str, Any]:
    """{"tables": {"app/table": [rows sorted by id]}, "files": {relative path: sha256 hex}}."""
    day_dir = Path(day_dir)
    tables: dict[str, list[dict[str, Any]]] = {}
    for db in sorted((day_dir / "apps").glob("*.sqlite")):
        for name, rows in _tables(db).items():
            tables[f"{db.stem}/{name}"] = rows
    home = day_dir / "home"
    files = {
        p.relative_to(home).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(home.rglob("*"))
        if p.is_file()
    }
    return {"tables": tables, "files": dict(sorted(files.items()))}


def world_hash(day_dir: Path | str) -> str:
    """sha256 over home/ files (path + bytes) and the canonical table dump."""
    day_dir = Path(day_dir)
    digest = hashlib.sha256()
    home = day_dir / "home"
    for p in sorted(home.rglob("*")):
        if p.is_file():
            digest.update(p.relative_to(home).as_posix().encode() + b"\0")
            digest.update(p.read_bytes() + b"\0")
    tables = _dump_of(day_dir)["tables"]
    digest.update(json.dumps(tables, sort_keys=True, separators=(",", ":"), default=str).encode())
    return digest.hexdigest()


def _fingerprint(day_dir: Path) -> tuple[tuple[str, int, int, int], ...]:
    """(path, size, mtime ns, inode) of every app database, home file and folder below them."""
    found: list[tuple[str, int, int, int]] = []
    pending = [day_dir / "apps", day_dir / "home"]
    while pending:
        folder = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except (FileNotFoundError, NotADirectoryError):
            continue
        for entry in entries:
            info = entry.stat(follow_symlinks=False)
            found.append((entry.path, info.st_size, info.st_mtime_ns, info.st_ino))
            if entry.is_dir(follow_symlinks=False):
                pending.append(Path(entry.path))
    return tuple(sorted(found))


#: A folder is only kept once everything in it is at least this much older than its dump: file
#: times come from a coarse clock, so a write in the same tick as a dump could keep its mtime
#: (git's "racily clean" entries); any later write then moves an mtime past what was kept.
_SETTLED_NS = 100_000_000
#: canonical dumps by folder: (fingerprint, dump), the most recently used few
_DUMPS: OrderedDict[str, tuple[tuple[tuple[str, int, int, int], ...], dict[str, Any]]] = OrderedDict()
_DUMPS_KEPT = 16
_DUMPS_LOCK = threading.Lock()


def _dump_of(day_dir: Path) -> dict[str, Any]:
    """`canonical_dump(day_dir)`, read again only when a file or folder under apps/ or home/ was
    written, added or removed since (a gate compares each rollout, probe and judge view with the
    same W0, and scores a final state and hashes or shows it right after). Callers do not change
    what it returns."""
    key, since = str(day_dir.resolve()), time.time_ns()
    fingerprint = _fingerprint(day_dir)
    with _DUMPS_LOCK:
        kept = _DUMPS.get(key)
        if kept is not None and kept[0] == fingerprint:
            _DUMPS.move_to_end(key)
            return kept[1]
    dump = canonical_dump(day_dir)
    if all(mtime < since - _SETTLED_NS for _, _, mtime, _ in fingerprint) and fingerprint == _fingerprint(
        day_dir
    ):
        with _DUMPS_LOCK:
            _DUMPS[key] = (fingerprint, dump)
            _DUMPS.move_to_end(key)
            while len(_DUMPS) > _DUMPS_KEPT:
                _DUMPS.popitem(last=False)
    return dump


def diff(initial_dir: Path | str, final_dir: Path | str) -> dict[str, Any]:
    """State difference: {"app/table": {"added", "removed", "changed"}, ..., "files": {...}}.

    Tables appear only when they changed; "files" is always present with added/removed/changed
    path lists. Rows are matched by id; a changed row is {"id", "fields", "before", "after"}.
    A folder compared with itself has no difference (it is not read); a folder compared before and
    unchanged since is not read again (`_dump_of`). Rows in the result are copies.
    """
    initial_dir, final_dir = Path(initial_dir), Path(final_dir)
    if initial_dir.resolve() == final_dir.resolve():
        return {"files": {"added": [], "removed": [], "changed": []}}
    a, b = _dump_of(initial_dir), _dump_of(final_dir)
    out: dict[str, Any] = {}
    for key in sorted(set(a["tables"]) | set(b["tables"])):
        before = {r["id"]: r for r in a["tables"].get(key, [])}
        after = {r["id"]: r for r in b["tables"].get(key, [])}
        added = [dict(after[i]) for i in sorted(set(after) - set(before))]
        removed = [dict(before[i]) for i in sorted(set(before) - set(after))]
        changed = [
            {
                "id": i,
                "fields": sorted(k for k in after[i] if after[i][k] != before[i].get(k)),
                "before": dict(before[i]),
                "after": dict(after[i]),
            }
            for i in sorted(set(before) & set(after))
            if before[i] != after[i]
        ]
        if added or removed or changed:
            out[key] = {"added": added, "removed": removed, "changed": changed}
    fa, fb = a["files"], b["files"]
    out["files"] = {
        "added": sorted(set(fb) - set(fa)),
        "removed": sorted(set(fa) - set(fb)),
        "changed": sorted(p for p in set(fa) & set(fb) if fa[p] != fb[p]),
    }
    return out


def touched_apps(state_diff: dict[str, Any]) -> list[str]:
    """The apps a diff touches (`files` for any home/ change), sorted."""
    apps = {key.split("/", 1)[0] for key in state_diff if key != "files"}
    if any(state_diff.get("files", {}).values()):
        apps.add(FILES_APP)
    return sorted(apps)


def write_manifest(day_dir: Path | str, persona_id: str, day: int) -> dict[str, Any]:
    """Write manifest.json ({persona_id, day, hash, apps: {app: {table: rows}}, files}) and return it."""
    day_dir = Path(day_dir)
    dump = canonical_dump(day_dir)
    apps: dict[str, dict[str, int]] = {}
    for key, rows in dump["tables"].items():
        app, table = key.split("/", 1)
        apps.setdefault(app, {})[table] = len(rows)
    manifest = {
        "persona_id": persona_id,
        "day": day,
        "hash": world_hash(day_dir),
        "apps": apps,
        "files": len(dump["files"]),
    }
    (day_dir / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return manifest


def pack_day(day: Path | str, parts: Sequence[str], normalize_modes: bool = False) -> bytes:
    """A reproducible .tar.gz of `parts` (folders or files) of a day folder: the same day packs to
    the same bytes (members sorted, no times or owners, a gzip header without a time). Members keep
    their modes, or with `normalize_modes` folders get 0o755 and files 0o644; only plain files and
    folders are packed."""
    day = Path(day)
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for part in parts:
            root = day / part
            paths = [root, *sorted(root.rglob("*"))] if root.is_dir() else [root] if root.exists() else []
            for path in paths:
                if path.is_symlink() or not (path.is_file() or path.is_dir()):
                    raise ConfigError(f"{path}: only plain files and folders can be packed")
                info = tar.gettarinfo(str(path), arcname=path.relative_to(day).as_posix())
                info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
                if normalize_modes:
                    info.mode = 0o755 if path.is_dir() else 0o644
                if path.is_file():
                    with path.open("rb") as handle:
                        tar.addfile(info, handle)
                else:
                    tar.addfile(info)
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as packed:
        packed.write(raw.getvalue())
    return out.getvalue()
