"""Acceptance gates a synthesized bundle passes before the (costly) gold verification.

A self-consistent bundle (its oracle passes its own tests) can still be useless as a rewrite of
its seed. These gates reject, with a reason that names what is wrong:

* ``skills:missing_nodes`` - the rewrite does not declare the seed's required skill nodes (the
  subgraph's ``preserve_nodes`` the action does not allow removing). A bundle's nodes are those
  listed in its artifact's ``metadata.skill_nodes`` plus its task.toml ``[metadata] tags`` (the
  tags are what `envpipeline.forge.passrates.seed_skills` reads back as a seed's skills).
* ``duplicate:content_hash`` / ``duplicate:near_instruction`` - the bundle's files (task.toml
  aside: it carries per-sample provenance) hash like an already accepted bundle, or its
  instruction's word 3-shingles have a Jaccard similarity >= `NEAR_DUPLICATE_JACCARD` with an
  accepted one (the shingles and Jaccard of `envpipeline.export.splits`).
* ``hidden_literal:<kind>`` - a test checks a literal that neither instruction.md nor any file
  under environment/ (nor task.toml) states. A documented, deliberately conservative heuristic
  that only looks at three kinds of literal in ``tests/*.py`` and ``tests/*.sh``:

  - ``path``: an ``/app/...`` path whose full text, basename and parent folder (other than
    ``/app`` itself) are all absent from the stated text (a hidden output filename; a file in
    a stated folder passes, since generic tests check optional outputs in a stated folder);
  - ``threshold``: a number compared with ``<``, ``<=``, ``>``, ``>=`` (Python) or ``-lt``,
    ``-le``, ``-gt``, ``-ge`` (shell), other than 0 and 1, absent from it as a token, on a
    line that is not a float tolerance or a shape check (``abs(``, ``isclose``, ``tol``, ``len(``).

  Not flagged, on purpose: equality checks of computed answers (``= 3`` after counting lines:
  derived from the fixtures, not stated) and dictionary keys (tests index their own expected
  data far more often than the output: flagging keys rejected shipped families). Every shipped
  family's bundle passes (tested), and a bundle with a hidden threshold or filename is
  rejected (tested).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath

from envpipeline.export.splits import jaccard, shingles

#: Instructions at least this similar (Jaccard of word 3-shingles) to an accepted one are duplicates.
NEAR_DUPLICATE_JACCARD = 0.8
#: Literals quoted per hidden-literal reason.
_QUOTED = 6

_APP_PATH = re.compile(r"/app/[A-Za-z0-9_.\-/]*[A-Za-z0-9_\-]")
_PY_THRESHOLD = re.compile(r"(?:<=|>=|(?<![<>=-])<(?![<=])|(?<![<>=-])>(?![>=]))\s*(-?\d+(?:\.\d+)?)\b")
_PY_THRESHOLD_LEFT = re.compile(r"(?<![\w.])(-?\d+(?:\.\d+)?)\s*(?:<=|>=|<(?![<=])|>(?![>=]))")
_SH_THRESHOLD = re.compile(r"-(?:lt|le|gt|ge)\s+[\"']?(-?\d+)\b")
_NOT_A_THRESHOLD = re.compile(r"abs\(|isclose|tol|len\(", re.IGNORECASE)
_TRIVIAL_NUMBERS = {"0", "1", "-1", "0.0", "1.0"}


def normalized_node(name: str) -> str:
    """A skill node name compared case- and separator-insensitively (file_io == File-IO)."""
    return re.sub(r"[\s_]+", "-", name.strip().lower())


def missing_skill_nodes(required: Iterable[str], declared: Iterable[str]) -> list[str]:
    """The required nodes (as given) that `declared` does not contain."""
    have = {normalized_node(n) for n in declared}
    return [n for n in required if normalized_node(n) not in have]


def skill_failures(required: Iterable[str], declared: Iterable[str]) -> list[str]:
    """A ``skills:missing_nodes`` reason naming the required nodes the rewrite dropped, or []."""
    missing = missing_skill_nodes(required, declared)
    if not missing:
        return []
    return [
        f"skills:missing_nodes: the rewrite does not preserve the seed's required skill nodes {missing}; "
        "keep them observable in the instruction and tests and list them in metadata.skill_nodes"
    ]


def content_hash(files: Mapping[str, str]) -> str:
    """sha256 of a bundle's files (path -> text), task.toml left out and instruction.md stripped."""
    digest = hashlib.sha256()
    for name in sorted(files):
        if name == "task.toml":
            continue
        text = files[name].strip() if name == "instruction.md" else files[name]
        digest.update(f"{name}\0{len(text)}\0".encode())
        digest.update(text.encode())
    return digest.hexdigest()


def bundle_text_files(bundle_dir: Path) -> dict[str, str]:
    """A bundle's UTF-8 text files (relative posix path -> text), symlinks and binaries skipped."""
    root = Path(bundle_dir)
    files: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        try:
            files[path.relative_to(root).as_posix()] = path.read_text()
        except (UnicodeDecodeError, OSError):
            continue
    return files


class AcceptanceLedger:
    """Content hashes and instruction shingles of the bundles accepted so far (this run, the lake)."""

    def __init__(self, threshold: float = NEAR_DUPLICATE_JACCARD) -> None:
        self.threshold = threshold
        self._hashes: dict[str, str] = {}
        self._instructions: list[tuple[str, frozenset[tuple[str, ...]]]] = []

    def __len__(self) -> int:
        return len(self._hashes)

    def add(self, name: str, files: Mapping[str, str]) -> None:
        """Record an accepted bundle's files (they must include instruction.md)."""
        self._hashes.setdefault(content_hash(files), name)
        self._instructions.append((name, shingles(files.get("instruction.md", ""))))

    def add_bundles(self, bundle_dirs: Iterable[Path]) -> None:
        """Record bundles already on disk (e.g. the lake's accepted bundles)."""
        for folder in bundle_dirs:
            self.add(Path(folder).name, bundle_text_files(Path(folder)))

    def duplicate_failures(self, files: Mapping[str, str]) -> list[str]:
        """A ``duplicate:`` reason when `files` repeat an accepted bundle, or []."""
        same = self._hashes.get(content_hash(files))
        if same is not None:
            return [f"duplicate:content_hash: the bundle's files are identical to accepted bundle {same!r}"]
        grams = shingles(files.get("instruction.md", ""))
        best = max(((jaccard(grams, g), n) for n, g in self._instructions), default=None)
        if best is not None and best[0] >= self.threshold:
            return [
                f"duplicate:near_instruction: the instruction is a near-duplicate of accepted bundle "
                f"{best[1]!r} (Jaccard {best[0]:.2f} >= {self.threshold}); write a distinct task"
            ]
        return []


def _stated_text(files: Mapping[str, str]) -> str:
    parts = [text for name, text in files.items() if name in ("instruction.md", "task.toml")]
    parts += [text for name, text in files.items() if name.startswith("environment/")]
    return "\n".join(parts).lower()


def _test_sources(files: Mapping[str, str]) -> dict[str, str]:
    return {
        name: text
        for name, text in files.items()
        if name.startswith("tests/") and PurePosixPath(name).suffix in (".py", ".sh")
    }


def _number_stated(number: str, stated: str) -> bool:
    forms = {number}
    if re.fullmatch(r"-?\d+\.0+", number):
        forms.add(number.split(".")[0])
    return any(re.search(rf"(?<![\w.]){re.escape(f)}(?![\w]|\.\d)", stated) for f in forms)


def hidden_literals(files: Mapping[str, str]) -> dict[str, list[str]]:
    """Per kind (path, threshold): literals the tests check that no stated file mentions."""
    stated = _stated_text(files)
    found: dict[str, list[str]] = {"path": [], "threshold": []}

    def flag(kind: str, literal: str) -> None:
        if literal not in found[kind]:
            found[kind].append(literal)

    for name, text in sorted(_test_sources(files).items()):
        for path in _APP_PATH.findall(text):
            pure = PurePosixPath(path)
            folder = str(pure.parent).lower()
            named = [path.lower(), pure.name.lower(), *([folder] if folder != "/app" else [])]
            if not any(form in stated for form in named):
                flag("path", path)
        for line in text.splitlines():
            if _NOT_A_THRESHOLD.search(line):
                continue
            if name.endswith(".py"):
                numbers = _PY_THRESHOLD.findall(line) + _PY_THRESHOLD_LEFT.findall(line)
            else:
                numbers = _SH_THRESHOLD.findall(line)
            for number in numbers:
                if number not in _TRIVIAL_NUMBERS and not _number_stated(number, stated):
                    flag("threshold", number)
    return {kind: values for kind, values in found.items() if values}


def hidden_literal_failures(files: Mapping[str, str]) -> list[str]:
    """One ``hidden_literal:<kind>`` reason per kind of literal the tests check but nothing states."""
    return [
        f"hidden_literal:{kind}: the tests check {values[:_QUOTED]} but neither instruction.md nor the "
        "environment files state them; state every tested filename and threshold in the instruction"
        for kind, values in hidden_literals(files).items()
    ]
