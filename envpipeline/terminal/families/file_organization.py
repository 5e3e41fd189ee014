"""file-organization: sort an inbox into category folders by extension and rules.

The inbox holds files with no extension and spaces in names, next to files already organized.
Depth knobs add nesting and rules (dated image folders, a size rule); breadth knobs add files and
categories. A manifest of moves is checked too. Its edge cases, each present with the knob-set
probability: upper-case extensions (``case_sensitive_extensions``; without it every extension is
lower-case), name collisions with a file already organized and, when nested, between subfolders
(``overwrites_collisions``; without it every file name is unique and none is taken at its
destination) and hidden files and folders in the inbox (``moves_hidden_files``; without it the
inbox has none).
"""

from __future__ import annotations

import hashlib
import random
import re
from typing import Any

from envpipeline.terminal.families._script_kit import edited_program, fail_fast_script
from envpipeline.terminal.families.base import (
    STANDARD_DOCKERFILE,
    STANDARD_TEST_SH,
    Knobs,
    TaskFamily,
    TaskParts,
    knob,
)
from envpipeline.terminal.families.registry import register_family

CATEGORIES = {
    "documents": ["pdf", "txt", "md", "docx"],
    "images": ["jpg", "jpeg", "png", "gif"],
    "audio": ["mp3", "wav", "flac"],
    "video": ["mp4", "mov", "mkv"],
    "archives": ["zip", "gz", "tgz"],
    "code": ["py", "js", "sh"],
}
STEMS = [
    "report",
    "notes",
    "budget",
    "holiday",
    "scan",
    "draft",
    "song",
    "clip",
    "backup",
    "script",
    "invoice",
    "family photo",
    "meeting notes",
    "summary",
]
OTHER = ["", "bak", "xyz", "tmp", "log"]
SUBDIRS = ["work", "personal", "downloads", "old", "misc", "phone"]

SOLVER = r"""import csv
import os
import re
import shutil

CATEGORIES = __CATEGORIES__
DATED = __DATED__
LARGE = __LARGE__
INBOX, OUT = "/app/inbox", "/app/organized"
EXT_TO_CAT = {ext: cat for cat, exts in CATEGORIES.items() for ext in exts}

sources = []
for root, dirs, files in os.walk(INBOX):
    dirs[:] = [d for d in dirs if not d.startswith(".")]
    for name in files:
        if name.startswith("."):
            continue
        sources.append(os.path.relpath(os.path.join(root, name), INBOX))
moves = []
for rel in sorted(sources):
    src = os.path.join(INBOX, rel)
    name = os.path.basename(rel)
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem:
        stem, ext = name, ""
    category = EXT_TO_CAT.get(ext.lower(), "other")
    folder = os.path.join(OUT, category)
    if DATED and category == "images":
        m = re.search(r"(\d{4})-?(\d{2})-?(\d{2})", name)
        folder = os.path.join(folder, f"{m.group(1)}-{m.group(2)}" if m else "undated")
    if LARGE and category == "documents" and os.path.getsize(src) > 1024:
        folder = os.path.join(folder, "large")
    os.makedirs(folder, exist_ok=True)
    target = os.path.join(folder, name)
    n = 0
    while os.path.exists(target):
        n += 1
        target = os.path.join(folder, f"{stem}_{n}.{ext}" if ext else f"{stem}_{n}")
    shutil.move(src, target)
    moves.append(("inbox/" + rel, os.path.relpath(target, "/app")))
with open("/app/moves.csv", "w", newline="") as fh:
    writer = csv.writer(fh)
    writer.writerow(["source", "destination"])
    writer.writerows(moves)
"""

EDITS = {
    "case_sensitive_extensions": [('EXT_TO_CAT.get(ext.lower(), "other")', 'EXT_TO_CAT.get(ext, "other")')],
    "overwrites_collisions": [
        (
            "    n = 0\n    while os.path.exists(target):\n        n += 1\n"
            '        target = os.path.join(folder, f"{stem}_{n}.{ext}" if ext else f"{stem}_{n}")\n',
            "",
        )
    ],
    "moves_hidden_files": [
        ('    dirs[:] = [d for d in dirs if not d.startswith(".")]\n', ""),
        ('        if name.startswith("."):\n            continue\n', ""),
    ],
}

TEST_BODY = r"""
def digest(path):
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


for rel, sha in EXPECTED["kept"].items():
    path = os.path.join("/app", rel)
    if not os.path.isfile(path) or digest(path) != sha:
        fail(f"{rel} must stay where it is, unchanged")
for rel, sha in EXPECTED["placed"].items():
    path = os.path.join("/app", rel)
    if not os.path.isfile(path):
        fail(f"expected file {rel} is missing")
    if digest(path) != sha:
        fail(f"{rel} does not hold the expected file's content")
found = set()
for root, dirs, files in os.walk("/app/organized"):
    found |= {os.path.relpath(os.path.join(root, f), "/app") for f in files}
extra = found - set(EXPECTED["placed"]) - set(EXPECTED["kept"])
if extra:
    fail(f"unexpected files under organized/: {sorted(extra)[:5]}")
for root, dirs, files in os.walk("/app/inbox"):
    for name in files:
        rel = os.path.relpath(os.path.join(root, name), "/app")
        if rel not in EXPECTED["kept"]:
            fail(f"{rel} should have been moved out of the inbox")
try:
    with open("/app/moves.csv", newline="") as fh:
        rows = list(csv.reader(fh))
except OSError as exc:
    fail(f"/app/moves.csv missing: {exc}")
if rows != EXPECTED["manifest"]:
    fail(f"moves.csv rows differ; expected first rows {EXPECTED['manifest'][:3]}, got {rows[:3]}")
"""


class FileOrganizationKnobs(Knobs):
    """Knobs of the file-organization family."""

    n_files: int = knob(10, 8, 400, "breadth", "visible files in the inbox")
    n_categories: int = knob(2, 2, 6, "breadth", "extension categories in the rule table")
    nesting: int = knob(0, 0, 3, "depth", "levels of subfolders in the inbox (cross-folder name collisions)")
    rule_depth: int = knob(1, 1, 3, "depth", "1 extension only; 2 + dated image folders; 3 + large documents")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class FileOrganizationFamily(TaskFamily[FileOrganizationKnobs]):
    """Move inbox files into category folders with collision-safe names and a manifest."""

    name = "file-organization"
    category = "file-operations"
    description = (
        "Sort files into folders by extension, date and size rules, handling collisions and hidden files."
    )
    skills = ["file-io", "bash", "csv"]
    knob_model = FileOrganizationKnobs
    presets = {
        "easy": {"n_files": 10, "n_categories": 2, "nesting": 0, "rule_depth": 1},
        "medium": {"n_files": 30, "n_categories": 4, "nesting": 1, "rule_depth": 2},
        "hard": {"n_files": 90, "n_categories": 6, "nesting": 3, "rule_depth": 3},
    }
    variants = ("case_sensitive_extensions", "overwrites_collisions", "moves_hidden_files")
    edge_case_axes = {
        "case_sensitive_extensions": "depth",
        "overwrites_collisions": "breadth",
        "moves_hidden_files": "depth",
    }

    def _name(self, rng: Any, exts: list[str], upper: bool) -> str:
        ext = rng.choice(exts)
        stem = rng.choice(STEMS)
        if ext in CATEGORIES["images"] and rng.random() < 0.6:
            day = f"2024{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}"
            stem = rng.choice(
                [f"IMG_{day}_{rng.randint(1000, 9999)}", f"photo {day[:4]}-{day[4:6]}-{day[6:]}"]
            )
        elif rng.random() < 0.5:
            stem = f"{stem}_{rng.randint(1, 40):02d}"
        if ext and rng.random() < 0.15 and upper:
            ext = ext.upper()
        return f"{stem}.{ext}" if ext else stem

    def build(
        self, rng: random.Random, knobs: FileOrganizationKnobs, seed: int, edge_cases: frozenset[str]
    ) -> TaskParts:
        extra = rng.sample(
            [c for c in CATEGORIES if c not in ("documents", "images")], knobs.n_categories - 2
        )
        cats = {c: CATEGORIES[c] for c in ["documents", "images", *extra]}
        exts = [e for c in cats.values() for e in c] + OTHER
        dated, large = knobs.rule_depth >= 2, knobs.rule_depth >= 3
        folders = [""]
        for level in range(knobs.nesting):
            folders += [
                f"{parent}{d}/"
                for parent in folders
                if parent.count("/") == level
                for d in rng.sample(SUBDIRS, 2)
            ]
        upper = "case_sensitive_extensions" in edge_cases
        collide = "overwrites_collisions" in edge_cases
        inbox: dict[str, str] = {}
        # notes.txt collides with the organized one; without collisions every name is unique
        holiday = f"Holiday_{rng.randint(1, 99)}.{'JPG' if upper else 'jpg'}"
        forced = ["notes.txt"] * collide + [holiday, "README"]
        names: set[str] = {"notes.txt"}
        while len(inbox) < knobs.n_files:
            if forced:
                name = forced.pop(0)
                folder = ""
            else:
                name, folder = self._name(rng, exts, upper), rng.choice(folders)
                if not collide and name in names:
                    continue
            names.add(name)
            size = 20 if name == "notes.txt" else rng.choice([40, 200, 800, 1500, 3000])
            token = f"file {len(inbox)} of seed {seed}: {folder}{name}\n"
            inbox.setdefault(f"inbox/{folder}{name}", token + "x" * max(0, size - len(token)) + "\n")
        hidden = {
            "inbox/.DS_Store": "Bud1 metadata\n",
            f"inbox/.~lock.budget_{rng.randint(1, 9)}.docx#": "lock\n",
        }
        if knobs.nesting:
            hidden[f"inbox/{folders[1]}.cache/thumb.png"] = "cached thumbnail\n"
        if "moves_hidden_files" not in edge_cases:
            hidden = {}
        kept = {"organized/documents/notes.txt": "an older notes file, keep me\n", **hidden}
        ext_to_cat = {e: c for c, es in cats.items() for e in es}
        taken = set(kept)
        placed, manifest = {}, [["source", "destination"]]
        for rel in sorted(r[len("inbox/") :] for r in inbox):
            name = rel.rsplit("/", 1)[-1]
            stem, dot, ext = name.rpartition(".")
            if not dot or not stem:
                stem, ext = name, ""
            category = ext_to_cat.get(ext.lower(), "other")
            folder = f"organized/{category}"
            if dated and category == "images":
                m = re.search(r"(\d{4})-?(\d{2})-?(\d{2})", name)
                folder += f"/{m.group(1)}-{m.group(2)}" if m else "/undated"
            if large and category == "documents" and len(inbox[f"inbox/{rel}"].encode()) > 1024:
                folder += "/large"
            target, n = f"{folder}/{name}", 0
            while target in taken:
                n += 1
                target = f"{folder}/{stem}_{n}.{ext}" if ext else f"{folder}/{stem}_{n}"
            taken.add(target)
            placed[target] = _sha(inbox[f"inbox/{rel}"])
            manifest.append([f"inbox/{rel}", target])
        expected = {"kept": {k: _sha(v) for k, v in kept.items()}, "placed": placed, "manifest": manifest}
        env = {"Dockerfile": STANDARD_DOCKERFILE, **{f"app/{k}": v for k, v in {**inbox, **kept}.items()}}
        solver = (
            SOLVER.replace("__CATEGORIES__", repr(cats))
            .replace("__DATED__", str(dated))
            .replace("__LARGE__", str(large))
        )
        return TaskParts(
            instruction=self._instruction(cats, dated, large),
            environment=env,
            tests={
                "test.sh": STANDARD_TEST_SH,
                "test_outputs.py": fail_fast_script(
                    expected, TEST_BODY, imports=("csv", "hashlib", "os"), embed="literal"
                ),
            },
            solver=edited_program(solver, EDITS, self.variants),
        )

    def _instruction(self, cats: dict[str, list[str]], dated: bool, large: bool) -> str:
        table = "\n".join(f"- `{c}`: {', '.join(f'`.{e}`' for e in es)}" for c, es in cats.items())
        rules = ""
        if dated:
            rules += (
                "\n- Images whose file name contains a date (first match of the regex "
                "`(\\d{4})-?(\\d{2})-?(\\d{2})`, i.e. `YYYY-MM-DD` or `YYYYMMDD`) go into "
                "`images/YYYY-MM/`; other images go into `images/undated/`."
            )
        if large:
            rules += "\n- Documents larger than 1024 bytes go into `documents/large/`."
        return f"""# Organize the inbox

Move every file under `/app/inbox/` (including files in subfolders) into `/app/organized/<category>/`
according to its extension (the text after the last `.` of the file name, compared
case-insensitively):

{table}

Files with any other extension, or with no extension, go to `other`. Rules:

- Hidden files (name starting with `.`) and everything inside hidden folders stay exactly where
  they are. A file name like `.bashrc` has no extension.
- Keep the file name; folder structure inside the inbox is not preserved (flatten).{rules}
- Never overwrite: `/app/organized/` already contains files. Process files in ascending order of
  their path relative to `/app/inbox` (plain string comparison); if the destination exists, append
  `_1`, `_2`, ... to the part before the extension (`notes.txt` -> `notes_1.txt`, `README` ->
  `README_1`) and use the first free name.
- Write `/app/moves.csv` with header `source,destination` and one row per moved file, in
  processing order, paths relative to `/app` (e.g. `inbox/work/notes.txt,organized/documents/notes_1.txt`).
"""


register_family(FileOrganizationFamily())
