"""A world task's inline W0 (`world_snapshot`): the same W0 always packs to the same bytes.

An export of one lake written twice must be identical, and `accepted_tasks` and the training files
read from it must hold the same rows; the archive used to carry every file's time, its owner and
the moment it was packed.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import time

from envpipeline.models.env_spec import EnvSpec
from envpipeline.trainers.families.world import materialize_w0, world_snapshot


def _day(root):
    day = root / "day-01"
    (day / "apps").mkdir(parents=True)
    with sqlite3.connect(day / "apps" / "shop.sqlite") as db:
        db.execute("CREATE TABLE orders (id TEXT)")
        db.execute("INSERT INTO orders VALUES ('o-1')")
    (day / "home" / "documents").mkdir(parents=True)
    (day / "home" / "documents" / "notes.md").write_text("buy milk\n")
    (day / "home" / "empty").mkdir()  # an empty folder is part of the world a shell lists
    (day / "home" / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (day / "home" / "run.sh").chmod(0o755)
    (day / "manifest.json").write_text('{"day": 1}')
    return day


def test_the_same_world_packs_to_the_same_bytes_whenever_it_is_packed(tmp_path):
    day = _day(tmp_path)
    first = world_snapshot(day)
    later = time.time() + 3600
    for path in [day, *day.rglob("*")]:
        os.utime(path, (later, later))
    time.sleep(1.1)  # a gzip header with a time would change by now
    assert world_snapshot(day) == first


def test_a_snapshot_gives_back_the_files_their_modes_and_empty_folders(tmp_path):
    day = _day(tmp_path)
    spec = EnvSpec.model_validate(
        {
            "family": "world",
            "task_id": "t",
            "instruction": "i",
            "environment": {},
            "criteria": [],
            "world_setup": [],
            "world_snapshot": world_snapshot(day),
        }
    )
    out = materialize_w0(spec, tmp_path / "out")
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
    assert files == sorted(p.relative_to(day).as_posix() for p in day.rglob("*"))
    assert (out / "home" / "empty").is_dir()
    assert (out / "home" / "documents" / "notes.md").read_text() == "buy milk\n"
    assert stat.S_IMODE((out / "home" / "run.sh").stat().st_mode) & 0o100
    with sqlite3.connect(out / "apps" / "shop.sqlite") as db:
        assert db.execute("SELECT id FROM orders").fetchall() == [("o-1",)]
    assert world_snapshot(out) == spec.world_snapshot  # unpacked and packed again: the same bytes
