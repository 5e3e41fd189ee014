"""archive-handling: extract selected files from nested archives, verify checksums, repack.

The image build turns a JSON description into ``/app/incoming/bundle.tar.gz`` that holds plain files
and nested ``.zip``/``.tar.gz``/``.tgz`` archives. The agent extracts every ``.csv``/``.json`` file
(any case, nested archives included) to logical paths, checks them against a sha256 manifest, writes
a status report and repacks the verified files. Its edge cases, each present with the knob-set
probability: nested archives (``ignores_nested``; without it the bundle holds plain files only),
an upper-case ``.CSV``/``.JSON`` extension (``case_sensitive_ext``; without it every name is lower
case), manifest entries naming files the archive lacks (``no_missing_check``; without them every
entry exists) and entries whose digest does not match (``repacks_all``; without them every digest
matches, so nothing is left out of the repack). Every instance has at least two selected files.
"""

from __future__ import annotations

import hashlib
import json
import random

from envpipeline.terminal.families._script_kit import python_program, test_script
from envpipeline.terminal.families.base import (
    STANDARD_DOCKERFILE,
    STANDARD_TEST_SH,
    Knobs,
    TaskFamily,
    TaskParts,
    knob,
)
from envpipeline.terminal.families.registry import register_family

WORDS = ["sales", "users", "orders", "q1", "q2", "inventory", "metrics", "events", "ledger", "audit", "stock"]
DIRS = ["data", "exports", "reports", "raw", "misc"]

BUILD = r'''
import io, json, tarfile, zipfile, os
TREE = json.loads(__TREE__)


def build(node):
    """The bytes of one archive node (children first)."""
    members = [(p, c.encode()) for p, c in node["files"]] + [(ch["name"], build(ch)) for ch in node["children"]]
    buf = io.BytesIO()
    if node["name"].endswith(".zip"):
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            for path, data in members:
                zf.writestr(zipfile.ZipInfo(path, (2024, 1, 2, 3, 4, 5)), data)
    else:
        with tarfile.open(fileobj=buf, mode="w:gz") as tf:
            for path, data in members:
                info = tarfile.TarInfo(path)
                info.size, info.mtime, info.mode = len(data), 1704164645, 0o644
                tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


os.makedirs("/app/incoming", exist_ok=True)
open("/app/incoming/bundle.tar.gz", "wb").write(build(TREE))
'''

SOLVER = r"""
import hashlib, io, os, posixpath, tarfile, zipfile

SUFFIXES = (".zip", ".tar.gz", ".tgz")
found = {}


def members(name, data):
    if name.endswith(".zip"):
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            for info in zf.infolist():
                if not info.is_dir():
                    yield info.filename, zf.read(info)
    else:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tf:
            for info in tf.getmembers():
                if info.isfile():
                    yield info.name, tf.extractfile(info).read()


def walk(name, data, base):
    for path, content in members(name, data):
        path = posixpath.normpath(path).lstrip("/")
        logical = posixpath.join(base, path) if base else path
        if path.lower().endswith(SUFFIXES):
            if "ignores_nested" in MISSED:
                continue
            stem = logical
            for suffix in SUFFIXES:
                if stem.lower().endswith(suffix):
                    stem = stem[: -len(suffix)]
                    break
            walk(path, content, stem)
            continue
        ext = path if "case_sensitive_ext" in MISSED else path.lower()
        if ext.endswith((".csv", ".json")):
            found[logical] = content


walk("bundle.tar.gz", open("incoming/bundle.tar.gz", "rb").read(), "")
for logical, content in found.items():
    target = os.path.join("extracted", logical)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    open(target, "wb").write(content)
manifest = {}
for line in open("incoming/MANIFEST.sha256"):
    if line.strip():
        digest, path = line.rstrip("\n").split("  ", 1)
        manifest[path] = digest
status = {}
for path, digest in manifest.items():
    if path not in found:
        if "no_missing_check" not in MISSED:
            status[path] = "MISSING"
    elif hashlib.sha256(found[path]).hexdigest() == digest:
        status[path] = "OK"
    else:
        status[path] = "FAILED"
os.makedirs("report", exist_ok=True)
open("report/verify.txt", "w").write("".join(f"{status[p]} {p}\n" for p in sorted(status)))
os.makedirs("out", exist_ok=True)
keep = ("OK", "FAILED") if "repacks_all" in MISSED else ("OK",)
with tarfile.open("out/verified.tar.gz", "w:gz") as tf:
    for path in sorted(p for p in status if status[p] in keep):
        info = tarfile.TarInfo(path)
        info.size = len(found[path])
        tf.addfile(info, io.BytesIO(found[path]))
"""

TEST_BODY = r"""
import hashlib, tarfile
files = EXPECTED["files"]
got = {}
for root, _, names in os.walk("/app/extracted"):
    for n in names:
        full = os.path.join(root, n)
        got[os.path.relpath(full, "/app/extracted")] = open(full, "rb").read().decode("utf-8", "replace")
check("extracted/ holds exactly the selected files", sorted(got) == sorted(files))
check("extracted file contents", all(got.get(p) == c for p, c in files.items()))
check("report/verify.txt", read("/app/report/verify.txt").splitlines() == EXPECTED["report"])
with tarfile.open("/app/out/verified.tar.gz", "r:gz") as tf:
    packed = {m.name[2:] if m.name.startswith("./") else m.name: tf.extractfile(m).read().decode()
              for m in tf.getmembers() if m.isfile()}
ok = [line.split(" ", 1)[1] for line in EXPECTED["report"] if line.startswith("OK ")]
check("verified.tar.gz holds exactly the OK files", sorted(packed) == sorted(ok))
check("verified.tar.gz contents", all(packed.get(p) == files[p] for p in ok))
"""


class ArchiveHandlingKnobs(Knobs):
    files: int = knob(6, 4, 30, "breadth", "plain files in the top-level archive")
    corrupt: int = knob(1, 1, 4, "breadth", "corrupt and missing manifest entries (each)")
    nesting: int = knob(1, 1, 3, "depth", "levels of nested archives (zip, tar.gz, tgz)")


def _content(rng, path: str) -> str:
    if path.lower().endswith(".json"):
        return json.dumps({"id": rng.randint(1, 999), "tags": rng.sample(WORDS, 2)}) + "\n"
    rows = [f"{rng.choice(WORDS)},{rng.randint(0, 9999)}" for _ in range(rng.randint(1, 4))]
    return "name,value\n" + "\n".join(rows) + "\n"


class ArchiveHandlingFamily(TaskFamily[ArchiveHandlingKnobs]):
    """Nested archive extraction, checksum verification and repacking."""

    name = "archive-handling"
    category = "file-operations"
    description = (
        "Extract selected files from nested tar/zip archives, verify sha256 checksums, repack verified files."
    )
    skills = ["archives", "file-io", "validation", "bash"]
    knob_model = ArchiveHandlingKnobs
    presets = {
        "easy": {"files": 5, "corrupt": 1, "nesting": 1},
        "medium": {"files": 9, "corrupt": 2, "nesting": 2},
        "hard": {"files": 16, "corrupt": 3, "nesting": 3},
    }
    variants = ("ignores_nested", "case_sensitive_ext", "no_missing_check", "repacks_all")
    edge_case_axes = {
        "ignores_nested": "depth",
        "case_sensitive_ext": "depth",
        "no_missing_check": "breadth",
        "repacks_all": "breadth",
    }

    def build(
        self, rng: random.Random, knobs: ArchiveHandlingKnobs, seed: int, edge_cases: frozenset[str]
    ) -> TaskParts:
        used: set[str] = set()
        selected: dict[str, str] = {}

        def fname(ext: str, spaced: bool = False) -> str:
            while True:
                stem = f"{rng.choice(WORDS)}{' ' if spaced else '_'}{rng.randint(1, 99)}"
                if stem not in used:
                    used.add(stem)
                    return stem + ext

        def node(name: str, logical: str, count: int, level: int) -> dict:
            files = []
            for i in range(count):
                ext = rng.choice([".csv", ".json", ".txt", ".log", ".md", ".csv.bak"])
                if i == 0:
                    ext = ".csv"
                elif i == 1 and level == 0:  # two selected files even without any edge case
                    ext = ".json"
                path = f"{rng.choice(DIRS)}/{fname(ext, spaced=knobs.nesting >= 2 and i == 1)}"
                content = _content(rng, path)
                files.append([path, content])
                if ext in (".csv", ".json"):
                    selected[f"{logical}/{path}" if logical else path] = content
            children = []
            if level < knobs.nesting and "ignores_nested" in edge_cases:
                kind = [".zip", ".tar.gz", ".tgz"][level % 3]
                child = f"{rng.choice(DIRS)}/{rng.choice(['extra', 'archive', 'backup'])}{level}{kind}"
                stem = child[: -len(kind)]
                children.append(
                    node(child, f"{logical}/{stem}" if logical else stem, rng.randint(2, 4), level + 1)
                )
            return {"name": name, "files": files, "children": children}

        tree = node("bundle.tar.gz", "", knobs.files, 0)
        if "case_sensitive_ext" in edge_cases:
            upper = f"reports/{fname('.CSV').upper()}"
            upper_content = _content(rng, upper)
            tree["files"].append([upper, upper_content])
            selected[upper] = upper_content
        if "case_sensitive_ext" in edge_cases and tree["children"] and knobs.nesting >= 2:
            # an upper-case .JSON deep inside as well
            deep = tree["children"][0]
            path = f"misc/{fname('.JSON')}"
            deep["files"].append([path, _content(rng, path)])
            stem = deep["name"][: -len(".zip")]
            selected[f"{stem}/{path}"] = deep["files"][-1][1]
        paths = sorted(selected)
        bad = rng.sample(paths, min(knobs.corrupt, len(paths) - 1)) if "repacks_all" in edge_cases else []
        manifest, report = [], []
        for path in paths:
            digest = hashlib.sha256(selected[path].encode()).hexdigest()
            if path in bad:
                digest = hashlib.sha256((selected[path] + "tampered").encode()).hexdigest()
            manifest.append(f"{digest}  {path}")
            report.append(f"{'FAILED' if path in bad else 'OK'} {path}")
        for _ in range(knobs.corrupt if "no_missing_check" in edge_cases else 0):
            ghost = f"{rng.choice(DIRS)}/{fname(rng.choice(['.csv', '.json']))}"
            manifest.append(f"{hashlib.sha256(ghost.encode()).hexdigest()}  {ghost}")
            report.append(f"MISSING {ghost}")
        rng.shuffle(manifest)
        report.sort(key=lambda line: line.split(" ", 1)[1])
        build = BUILD.replace("__TREE__", repr(json.dumps(tree)))
        env = {
            "Dockerfile": STANDARD_DOCKERFILE + "RUN python3 /app/.setup/build.py && rm -rf /app/.setup\n",
            "app/.setup/build.py": build,
            "app/incoming/MANIFEST.sha256": "\n".join(manifest) + "\n",
        }
        expected = {"files": selected, "report": report}
        instruction = f"""# Unpack, verify and repack an archive

`/app/incoming/bundle.tar.gz` contains plain files and nested archives (`.zip`, `.tar.gz`, `.tgz`,
possibly nested inside each other). `/app/incoming/MANIFEST.sha256` lists expected sha256 digests in
`sha256sum` format (`<digest>  <path>`).

1. Extract every file whose name ends in `.csv` or `.json` (case-insensitive, so `.CSV` counts; a
   name like `x.csv.bak` does not) into `/app/extracted/<logical path>`, including files inside
   nested archives. The logical path of a file inside a nested archive stored at `dir/name.zip`
   (or `.tar.gz` / `.tgz`) is `dir/name/<path inside that archive>`, applied recursively. Put
   nothing else under `/app/extracted/` (no nested archives, no other files).
2. Write `/app/report/verify.txt`: one line `<STATUS> <logical path>` per manifest entry, sorted by
   path (plain byte order), where STATUS is `OK` (digest matches), `FAILED` (file extracted but the
   digest differs) or `MISSING` (no such file in the archive).
3. Create `/app/out/verified.tar.gz` (gzip tar) containing only the `OK` files, stored under their
   logical paths (no leading `/`), with their original content.

There are {len(manifest)} manifest entries; keep `/app/incoming` as it is.
"""
        return TaskParts(
            instruction=instruction,
            environment=env,
            tests={"test.sh": STANDARD_TEST_SH, "test_outputs.py": test_script(expected, TEST_BODY)},
            solver=python_program(SOLVER),
        )


register_family(ArchiveHandlingFamily())
