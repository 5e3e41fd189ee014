"""Deltas: apply a day's operations to a copy of the previous day, and lint them statically.

Determinism: new ids are MAX(id)+1 of the table at the moment of the insert, timestamps come
from the operations (frozen by the skills), and nothing here reads the clock or global random.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path, PurePosixPath
from typing import Any

from envpipeline.errors import ConfigError
from envpipeline.models.world import Operation, WorldDelta
from envpipeline.worlds.schema import (
    ALL_APPS,
    FILES_APP,
    RECORD_TIME_COLUMNS,
    SCHEMA,
    UNIQUE_COLUMNS,
    day_end,
)
from envpipeline.worlds.state import WorldReader, day_path, write_manifest

_DB_OPS = {"insert", "update", "delete"}
_FILE_OPS = {"write_file", "append_file"}


def _marker(value: Any) -> tuple[str, Any] | None:
    """("$add", n) / ("$last_id", table) for a marker value, else None."""
    if isinstance(value, dict) and len(value) == 1:
        key = next(iter(value))
        if key in ("$add", "$last_id"):
            return key, value[key]
    return None


def _safe_home_path(home: Path, path: str) -> Path:
    rel = PurePosixPath(path)
    if rel.is_absolute() or ".." in rel.parts or not rel.parts:
        raise ConfigError(f"file path {path!r} must be relative to home/ without '..'")
    return home.joinpath(*rel.parts)


def apply_ops(day_dir: Path, ops: list[Operation]) -> list[int]:
    """Apply operations in order to the world in `day_dir`; returns rows/files affected per op."""
    day_dir = Path(day_dir)
    conns: dict[str, sqlite3.Connection] = {}
    last_ids: dict[tuple[str, str], int] = {}
    affected: list[int] = []
    try:
        for op in ops:
            if op.app == FILES_APP:
                affected.append(_apply_file(day_dir / "home", op))
                continue
            if op.app not in SCHEMA or op.table not in SCHEMA[op.app]:
                raise ConfigError(f"unknown app/table {op.app}/{op.table}")
            if op.app not in conns:
                conns[op.app] = sqlite3.connect(day_dir / "apps" / f"{op.app}.sqlite")
            affected.append(_apply_row_op(conns[op.app], op, last_ids))
        for conn in conns.values():
            conn.commit()
    finally:
        for conn in conns.values():
            conn.close()
    return affected


def _resolve(op: Operation, value: Any, last_ids: dict[tuple[str, str], int]) -> Any:
    marker = _marker(value)
    if marker and marker[0] == "$last_id":
        key = (op.app, marker[1])
        if key not in last_ids:
            raise ConfigError(f"$last_id of {op.app}/{marker[1]} before any insert there")
        return last_ids[key]
    return value


def _where_sql(where: dict[str, Any]) -> tuple[str, list[Any]]:
    if not where:
        raise ConfigError("update/delete needs a non-empty where")
    cols = sorted(where)
    return " AND ".join(f'"{c}" = ?' for c in cols), [where[c] for c in cols]


def _apply_row_op(conn: sqlite3.Connection, op: Operation, last_ids: dict[tuple[str, str], int]) -> int:
    table = op.table or ""
    if op.op == "insert":
        new_id = conn.execute(f'SELECT COALESCE(MAX(id), 0) + 1 FROM "{table}"').fetchone()[0]
        cols = sorted(op.values)
        values = [_resolve(op, op.values[c], last_ids) for c in cols]
        names = ", ".join(f'"{c}"' for c in ["id", *cols])
        marks = ", ".join("?" for _ in range(len(cols) + 1))
        conn.execute(f'INSERT INTO "{table}" ({names}) VALUES ({marks})', [new_id, *values])
        last_ids[(op.app, table)] = new_id
        return 1
    where, params = _where_sql({k: _resolve(op, v, last_ids) for k, v in op.where.items()})
    if op.op == "delete":
        return conn.execute(f'DELETE FROM "{table}" WHERE {where}', params).rowcount
    sets, set_params = [], []
    for col in sorted(op.values):
        marker = _marker(op.values[col])
        if marker and marker[0] == "$add":
            sets.append(f'"{col}" = "{col}" + ?')
            set_params.append(marker[1])
        else:
            sets.append(f'"{col}" = ?')
            set_params.append(_resolve(op, op.values[col], last_ids))
    return conn.execute(f'UPDATE "{table}" SET {", ".join(sets)} WHERE {where}', set_params + params).rowcount


def _apply_file(home: Path, op: Operation) -> int:
    if op.op not in _FILE_OPS or op.path is None or op.content is None:
        raise ConfigError(f"bad file operation {op.op} {op.path!r}")
    target = _safe_home_path(home, op.path)
    target.parent.mkdir(parents=True, exist_ok=True)
    if op.op == "write_file":
        target.write_text(op.content, encoding="utf-8")
    else:
        with target.open("a", encoding="utf-8") as handle:
            handle.write(op.content)
    return 1


def copy_day(previous_dir: Path, day_dir: Path) -> None:
    """Copy home/ and apps/ of the previous day into a fresh `day_dir`."""
    if day_dir.exists():
        shutil.rmtree(day_dir)
    day_dir.mkdir(parents=True)
    shutil.copytree(previous_dir / "home", day_dir / "home")
    shutil.copytree(previous_dir / "apps", day_dir / "apps")


def apply_delta(day_dir: Path | str, delta: WorldDelta, previous_dir: Path | str | None = None) -> list[int]:
    """Materialize day `delta.day`: copy the previous day (default: the sibling day-(d-1)), apply
    the ops, write delta.json and manifest.json. Returns rows/files affected per op."""
    day_dir = Path(day_dir)
    previous = Path(previous_dir) if previous_dir is not None else day_path(day_dir.parent, delta.day - 1)
    copy_day(previous, day_dir)
    affected = apply_ops(day_dir, delta.ops)
    (day_dir / "delta.json").write_text(delta.model_dump_json(indent=2) + "\n", encoding="utf-8")
    write_manifest(day_dir, delta.persona_id, delta.day)
    return affected


def lint_delta(delta: WorldDelta, previous: WorldReader | Path | str | None = None) -> list[str]:
    """Static problems of a delta (empty list = clean).

    Checks: known app/table/columns, op kinds fit the app, no explicit ids, where clauses,
    safe relative file paths, markers, record timestamps not after the day, every op belongs to
    an activity that declares its app, and (with the previous world) that updates/deletes match
    existing rows and inserts do not repeat unique keys.
    """
    reader = WorldReader(previous) if isinstance(previous, (str, Path)) else previous
    problems: list[str] = []
    activities = {a.index: a for a in delta.activities}
    inserted: set[tuple[str, str]] = set()
    for n, op in enumerate(delta.ops):
        where = f"op {n} ({op.op} {op.app}/{op.table or op.path})"
        act = activities.get(op.activity)
        if act is None:
            problems.append(f"{where}: activity {op.activity} is not in the plan")
        elif op.app not in act.apps:
            problems.append(f"{where}: app {op.app!r} not declared by skill {act.skill!r}")
        if op.app not in ALL_APPS:
            problems.append(f"{where}: unknown app {op.app!r}")
            continue
        if op.app == FILES_APP:
            problems += _lint_file(where, op)
            continue
        if op.op not in _DB_OPS:
            problems.append(f"{where}: {op.op} is a file operation on a database app")
            continue
        columns = SCHEMA[op.app].get(op.table or "")
        if columns is None:
            problems.append(f"{where}: unknown table {op.table!r} in app {op.app!r}")
            continue
        row_problems = _lint_row(where, op, columns, delta.day, inserted)
        problems += row_problems
        if reader is not None and not row_problems:
            problems += _lint_against(where, op, reader, inserted)
        if op.op == "insert":
            inserted.add((op.app, op.table or ""))
    return problems


def _lint_file(where: str, op: Operation) -> list[str]:
    out = []
    if op.op not in _FILE_OPS:
        out.append(f"{where}: {op.op} on the files app")
    if op.table is not None or op.values or op.where:
        out.append(f"{where}: file operations take path/content only")
    if op.content is None:
        out.append(f"{where}: no content")
    try:
        _safe_home_path(Path("/"), op.path or "")
    except ConfigError as exc:
        out.append(f"{where}: {exc}")
    return out


def _lint_row(where: str, op: Operation, columns: list[str], day: int, inserted: set) -> list[str]:
    out = []
    if op.path is not None or op.content is not None:
        out.append(f"{where}: database operations take values/where only")
    if "id" in op.values:
        out.append(f"{where}: ids are assigned as MAX(id)+1, do not set them")
    for col in [*op.values, *op.where]:
        if col not in columns and col != "id":
            out.append(f"{where}: unknown column {col!r}")
    if op.op == "insert":
        if op.where:
            out.append(f"{where}: insert takes no where")
        missing = [c for c in columns if c not in op.values]
        if missing:
            out.append(f"{where}: insert misses columns {missing}")
    elif not op.where:
        out.append(f"{where}: {op.op} without where would touch every row")
    if op.op == "delete" and op.values:
        out.append(f"{where}: delete takes no values")
    for value in op.values.values():
        marker = _marker(value)
        if marker and marker[0] == "$add" and (op.op != "update" or not isinstance(marker[1], int)):
            out.append(f"{where}: $add needs an update and an integer")
        if marker and marker[0] == "$last_id" and (op.app, marker[1]) not in inserted:
            out.append(f"{where}: $last_id of {marker[1]!r} before any insert there")
    time_col = RECORD_TIME_COLUMNS.get((op.app, op.table or ""))
    stamp = op.values.get(time_col) if time_col else None
    if isinstance(stamp, str) and stamp > day_end(day):
        out.append(f"{where}: {time_col} {stamp} lies after day {day}")
    return out


def _lint_against(where: str, op: Operation, reader: WorldReader, inserted: set) -> list[str]:
    table = op.table or ""
    if op.op in ("update", "delete") and (op.app, table) not in inserted:
        if any(_marker(v) for v in op.where.values()):
            return []
        cols = sorted(op.where)
        sql = f'SELECT COUNT(*) AS n FROM "{table}" WHERE ' + " AND ".join(f'"{c}" = ?' for c in cols)
        if reader.query(op.app, sql, [op.where[c] for c in cols])[0]["n"] == 0:
            return [f"{where}: where {json.dumps(op.where, default=str)} matches no row"]
    unique = UNIQUE_COLUMNS.get((op.app, table))
    if op.op == "insert" and unique and unique in op.values:
        rows = reader.query(op.app, f'SELECT 1 FROM "{table}" WHERE "{unique}" = ?', [op.values[unique]])
        if rows:
            return [f"{where}: {unique} {op.values[unique]!r} already exists"]
    return []
