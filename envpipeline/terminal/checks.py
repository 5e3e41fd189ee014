"""Static checks of a Harbor bundle: cheap, offline, no container needed.

    schema              task.toml parses and validates (Harbor schema 1.0 to 1.4; unknown keys warn)
    path_safety         solution/, tests/, environment/ are real folders (not links); no absolute
                        or `..` names, no links leaving the bundle, no device/FIFO/socket
    required_files      task.toml, instruction.md, environment/Dockerfile|docker-compose.yaml,
                        solution/solve.sh, tests/test.sh
    reward_file         tests/test.sh (or a script it calls in tests/) writes /logs/verifier/reward.*
    instruction_length  instruction token count within [min, max]
    leak                nothing in environment/ copies or references solution/ or tests/
    images              every image named (FROM, [environment].docker_image) resolves here: the base
                        image or a known substitution (listed as a warning), never needs_image
    overlap             instruction not a near-duplicate of a held-out instruction (word n-grams)

Each check is a `GateResult`; a failed one has a reason naming the file. The walk never follows
symlinks.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import re
import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Annotated

from pydantic import ConfigDict, Field

from envpipeline.models.base import Strict
from envpipeline.models.bundle import Bundle, BundlePaths, TaskConfig
from envpipeline.models.gates import GateResult
from envpipeline.terminal.bundle import BundleFormatError, load_task_config, task_config_warnings
from envpipeline.terminal.images import resolve_bundle_images
from envpipeline.terminal.offline import logical_lines
from envpipeline.terminal.tokenizer import count_tokens

_REWARD = re.compile(r"/logs/verifier/reward\.(txt|json)\b")
_REWARD_PARTS = (re.compile(r"/logs/verifier\b"), re.compile(r"\breward\.(txt|json)\b"))
_LEAK_NAMES = ("test_*.py", "*_test.py", "solve.sh")
_COMPOSE_NAMES = ("docker-compose.yaml", "docker-compose.yml")
_MAX_LISTED = 5
#: The folders a sandbox copies from the bundle: each must be a real folder, never a link (a
#: linked ``solution/`` would have the host folder it points at copied into the sandbox).
COPIED_FOLDERS = ("environment", "solution", "tests")


class CheckReport(Strict):
    """All static checks of one bundle."""

    model_config = ConfigDict(strict=True)

    bundle: Annotated[str, Field(description="the bundle folder that was checked")]
    passed: Annotated[bool, Field(description="whether every check passed")]
    checks: Annotated[list[GateResult], Field(description="one result per check, in the order they ran")]
    warnings: Annotated[
        list[str], Field(description="what passed but needs a look (unknown task.toml keys, newer schema)")
    ] = []

    def failed(self) -> list[GateResult]:
        """The checks that did not pass."""
        return [c for c in self.checks if not c.passed]


def _ok(name: str, reason: str) -> GateResult:
    return GateResult(name=name, passed=True, reason=reason)


def _fail(name: str, problems: list[str]) -> GateResult:
    more = f" (+{len(problems) - _MAX_LISTED} more)" if len(problems) > _MAX_LISTED else ""
    return GateResult(name=name, passed=False, reason="; ".join(problems[:_MAX_LISTED]) + more)


def _walk(root: Path) -> Iterable[tuple[str, os.stat_result]]:
    """(relative posix path, lstat) of every entry under `root`, never following links."""
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        for name in [*dirnames, *sorted(filenames)]:
            full = os.path.join(dirpath, name)
            yield Path(full).relative_to(root).as_posix(), os.lstat(full)


def _regular_files(root: Path) -> dict[str, Path]:
    """Regular (non-link) files under `root` by relative path; {} when it is missing."""
    if not root.is_dir() or root.is_symlink():
        return {}
    return {rel: root / rel for rel, st in _walk(root) if stat.S_ISREG(st.st_mode)}


def check_schema(paths: BundlePaths) -> GateResult:
    """task.toml parses and validates against Harbor's schema; unknown keys are listed, not fatal."""
    try:
        config = load_task_config(paths.task_toml)
    except BundleFormatError as e:
        return _fail("schema", [str(e)])
    warnings = task_config_warnings(config)
    reason = f"task.toml valid (schema {config.effective_schema})"
    return GateResult(
        name="schema",
        passed=True,
        reason=reason + (f"; {'; '.join(warnings)}" if warnings else ""),
        evidence={"warnings": warnings} if warnings else {},
    )


def check_path_safety(paths: BundlePaths) -> GateResult:
    """solution/, tests/ and environment/ are not links; no absolute/`..` names, no symlink leaving
    the bundle, no device files, FIFOs or sockets."""
    root = paths.root
    real_root = os.path.realpath(root)
    problems: list[str] = []
    linked = [name for name in COPIED_FOLDERS if (root / name).is_symlink()]
    for name in linked:
        problems.append(
            f"{name}/ is itself a symlink (-> {os.readlink(root / name)}): it must be a real folder"
        )
    for rel, st in _walk(root):
        if rel in linked:
            continue
        name = rel.rsplit("/", 1)[-1]
        if os.path.isabs(name) or ".." in Path(name).parts or "\\" in name:
            problems.append(f"{rel}: unsafe file name")
        mode = st.st_mode
        if stat.S_ISLNK(mode):
            target = os.readlink(root / rel)
            if os.path.isabs(target):
                problems.append(f"{rel}: symlink to absolute path {target}")
                continue
            resolved = os.path.realpath(root / rel)
            if os.path.commonpath([real_root, resolved]) != real_root:
                problems.append(f"{rel}: symlink {target} points outside the bundle")
        elif stat.S_ISFIFO(mode):
            problems.append(f"{rel}: FIFO (named pipe)")
        elif stat.S_ISSOCK(mode):
            problems.append(f"{rel}: socket")
        elif stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
            problems.append(f"{rel}: device file")
    return (
        _fail("path_safety", problems) if problems else _ok("path_safety", "all paths stay inside the bundle")
    )


def check_required_files(paths: BundlePaths) -> GateResult:
    """The files every Harbor bundle needs, as regular files (no Dockerfile is needed when
    ``[environment].docker_image`` names the image, as Harbor allows)."""
    env = paths.environment
    required: list[tuple[str, list[Path]]] = [
        ("task.toml", [paths.task_toml]),
        ("instruction.md", [paths.instruction]),
        (
            "environment/Dockerfile or environment/docker-compose.yaml",
            [paths.dockerfile, *(env / n for n in _COMPOSE_NAMES)],
        ),
        ("solution/solve.sh", [paths.solve_sh]),
        ("tests/test.sh", [paths.test_sh]),
    ]
    if _docker_image(paths):
        required.pop(2)
    missing = [
        f"{label} missing"
        for label, options in required
        if not any(p.is_file() and not p.is_symlink() for p in options)
    ]
    return (
        _fail("required_files", missing) if missing else _ok("required_files", "all required files present")
    )


def _writes_reward(text: str) -> bool:
    return bool(_REWARD.search(text)) or all(p.search(text) for p in _REWARD_PARTS)


def _called_scripts(text: str, tests: dict[str, Path]) -> list[str]:
    """Files of tests/ that a script mentions (as /tests/x, $TEST_DIR/x, tests/x or x)."""
    found = []
    for rel in tests:
        pattern = rf"(?:/tests/|\$\{{?TEST_DIR\}}?/|\btests/|(?<![\w/.-])){re.escape(rel)}(?![\w.-])"
        if re.search(pattern, text):
            found.append(rel)
    return found


def check_reward_file(paths: BundlePaths) -> GateResult:
    """tests/test.sh, or a tests/ script it calls (transitively), writes the reward file."""
    tests = _regular_files(paths.tests)
    if "test.sh" not in tests:
        return _fail("reward_file", ["tests/test.sh missing: nothing writes /logs/verifier/reward.txt"])
    seen, queue = {"test.sh"}, ["test.sh"]
    while queue:
        rel = queue.pop(0)
        text = tests[rel].read_text(errors="replace")
        if _writes_reward(text):
            via = "" if rel == "test.sh" else f" via tests/{rel}"
            return _ok("reward_file", f"tests/test.sh writes the reward file{via}")
        for called in _called_scripts(text, tests):
            if called not in seen:
                seen.add(called)
                queue.append(called)
    called = sorted(seen - {"test.sh"})
    tail = f" (nor do the scripts it calls: {', '.join(f'tests/{c}' for c in called)})" if called else ""
    return _fail(
        "reward_file", [f"tests/test.sh never writes /logs/verifier/reward.txt or reward.json{tail}"]
    )


def check_instruction_length(paths: BundlePaths, min_tokens: int, max_tokens: int) -> GateResult:
    """The instruction's approximate token count lies within [min_tokens, max_tokens]."""
    if not paths.instruction.is_file():
        return _fail("instruction_length", ["instruction.md missing"])
    n = count_tokens(paths.instruction.read_text(errors="replace"))
    if n > max_tokens:
        return _fail(
            "instruction_length", [f"instruction.md has ~{n} tokens, more than the maximum {max_tokens}"]
        )
    if n < min_tokens:
        return _fail(
            "instruction_length", [f"instruction.md has ~{n} tokens, fewer than the minimum {min_tokens}"]
        )
    return _ok("instruction_length", f"instruction.md has ~{n} tokens")


def _dockerfile_leaks(text: str, label: str) -> list[str]:
    problems = []
    for number, line, _ in logical_lines(text):
        words = line.replace("\\\n", " ").split()
        if not words or words[0].startswith("#"):
            continue
        if words[0].upper() in ("COPY", "ADD") and not any(w.startswith("--from") for w in words):
            sources = [w.strip('"[],') for w in words[1:-1] if not w.startswith("--")]
            for s in sources:
                parts = [p for p in Path(s).parts if p not in (".", "")]
                if ".." in parts or parts[:1] in (["solution"], ["tests"]):
                    problems.append(
                        f"{label}:{number}: {words[0].upper()} {s} pulls solution/tests files into the image"
                    )
        elif re.search(r"\.\./(solution|tests)\b|\bsolution/solve\.sh\b", line):
            problems.append(f"{label}:{number}: references the solution/tests paths")
    return problems


def check_leak(paths: BundlePaths) -> GateResult:
    """No environment/ file that copies (same bytes or a telltale name) or pulls in solution/tests."""
    protected: dict[str, str] = {}  # sha256 -> "solution/solve.sh"
    names: dict[str, str] = {}
    for top in (paths.solution, paths.tests):
        for rel, path in _regular_files(top).items():
            label = f"{top.name}/{rel}"
            if path.stat().st_size > 0:
                protected.setdefault(hashlib.sha256(path.read_bytes()).hexdigest(), label)
            base = rel.rsplit("/", 1)[-1]
            if any(fnmatch.fnmatch(base, pat) for pat in _LEAK_NAMES):
                names.setdefault(base, label)
    problems: list[str] = []
    for rel, path in _regular_files(paths.environment).items():
        label = f"environment/{rel}"
        base = rel.rsplit("/", 1)[-1]
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.stat().st_size > 0 else ""
        if digest in protected:
            problems.append(f"{label} is a byte-identical copy of {protected[digest]}")
        elif base in names:
            problems.append(f"{label} has the same name as {names[base]}")
        if rel == "Dockerfile":
            problems += _dockerfile_leaks(path.read_text(errors="replace"), label)
        elif rel in _COMPOSE_NAMES and re.search(
            r"\.\./(solution|tests)\b", path.read_text(errors="replace")
        ):
            problems.append(f"{label} mounts or builds from ../solution or ../tests")
    return (
        _fail("leak", problems) if problems else _ok("leak", "environment/ holds no solution or test files")
    )


def _docker_image(paths: BundlePaths) -> str | None:
    """``[environment].docker_image`` (None when unset or task.toml is unreadable)."""
    try:
        return load_task_config(paths.task_toml).environment.docker_image
    except BundleFormatError:
        return None


def check_images(paths: BundlePaths) -> GateResult:
    """Every image the bundle names resolves (`envpipeline.terminal.images`); substitutions warn.

    An unreadable task.toml (the schema check reports it) leaves the Dockerfile's FROM lines.
    """
    try:
        config = load_task_config(paths.task_toml)
    except BundleFormatError:
        config = TaskConfig()
    images = resolve_bundle_images(Bundle(paths=paths, config=config, instruction=""))
    needs = images.needs_image_flags()
    if needs:
        return _fail("images", [f"needs_image: {flag.message}" for flag in needs])
    subs = images.substitutions()
    warnings = [
        f"{s.original} -> {s.replacement} ({s.file}{f' line {s.line}' if s.line else ''}): {s.reason}"
        for s in subs
    ]
    reason = f"{len(subs)} image(s) substituted" if subs else "every image is the base image"
    return GateResult(
        name="images",
        passed=True,
        reason=reason,
        evidence={"warnings": warnings, "substitutions": [s.model_dump() for s in subs]} if subs else {},
    )


def ngrams(text: str, n: int) -> set[tuple[str, ...]]:
    """Lower-cased word n-grams (the word set itself when the text is shorter than n words)."""
    words = re.findall(r"\w+", text.lower())
    if len(words) < n:
        return {tuple(words)} if words else set()
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def jaccard(a: set, b: set) -> float:
    """|a ∩ b| / |a ∪ b| (0 for two empty sets)."""
    return len(a & b) / len(a | b) if a or b else 0.0


def check_overlap(paths: BundlePaths, heldout: list[str] | None, threshold: float, n: int) -> GateResult:
    """Max word-n-gram Jaccard of the instruction against held-out instructions is below threshold."""
    if not heldout:
        return _ok("overlap", "no held-out instructions given")
    if not paths.instruction.is_file():
        return _fail("overlap", ["instruction.md missing"])
    mine = ngrams(paths.instruction.read_text(errors="replace"), n)
    scores = [jaccard(mine, ngrams(h, n)) for h in heldout]
    best = max(range(len(scores)), key=scores.__getitem__)
    summary = f"held-out #{best} with {n}-gram Jaccard {scores[best]:.2f}"
    if scores[best] >= threshold:
        return _fail("overlap", [f"instruction.md overlaps {summary} >= threshold {threshold:.2f}"])
    return _ok("overlap", f"closest is {summary} < {threshold:.2f}")


def check_bundle(
    path: str | Path,
    *,
    heldout: list[str] | None = None,
    max_instruction_tokens: int = 2000,
    min_instruction_tokens: int = 10,
    overlap_threshold: float = 0.5,
    ngram: int = 3,
) -> CheckReport:
    """Run every static check on the bundle at `path`."""
    paths = BundlePaths(Path(path))
    if not paths.root.is_dir():
        missing = _fail("required_files", [f"{paths.root}: not a directory"])
        return CheckReport(bundle=str(paths.root), passed=False, checks=[missing])
    runs: list[tuple[str, Callable[[], GateResult]]] = [
        ("schema", lambda: check_schema(paths)),
        ("path_safety", lambda: check_path_safety(paths)),
        ("required_files", lambda: check_required_files(paths)),
        ("reward_file", lambda: check_reward_file(paths)),
        (
            "instruction_length",
            lambda: check_instruction_length(paths, min_instruction_tokens, max_instruction_tokens),
        ),
        ("leak", lambda: check_leak(paths)),
        ("images", lambda: check_images(paths)),
        ("overlap", lambda: check_overlap(paths, heldout, overlap_threshold, ngram)),
    ]
    checks = [_guarded(name, run) for name, run in runs]
    warnings = [w for c in checks for w in _evidence_warnings(c)]
    return CheckReport(
        bundle=str(paths.root), passed=all(c.passed for c in checks), checks=checks, warnings=warnings
    )


def _guarded(name: str, run: Callable[[], GateResult]) -> GateResult:
    """One check; an unreadable file fails that check (with the reason) instead of the batch."""
    try:
        return run()
    except OSError as e:
        return _fail(name, [f"cannot read the bundle: {e}"])


def _evidence_warnings(check: GateResult) -> list[str]:
    found = check.evidence.get("warnings", [])
    return [f"{check.name}: {w}" for w in found] if isinstance(found, list) else []


def check_many(
    paths: Iterable[str | Path],
    *,
    heldout: list[str] | None = None,
    max_instruction_tokens: int = 2000,
    min_instruction_tokens: int = 10,
    overlap_threshold: float = 0.5,
    ngram: int = 3,
) -> list[CheckReport]:
    """`check_bundle` on each path with the same options."""
    return [
        check_bundle(
            p,
            heldout=heldout,
            max_instruction_tokens=max_instruction_tokens,
            min_instruction_tokens=min_instruction_tokens,
            overlap_threshold=overlap_threshold,
            ngram=ngram,
        )
        for p in paths
    ]
