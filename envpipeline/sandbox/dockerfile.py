"""The Dockerfile subset the local sandbox can prepare without an image.

`parse_dockerfile` turns ``environment/Dockerfile`` into `Instruction`s (comments dropped, ``\\``
continuations joined, line numbers kept). The helpers below give the other instructions their
Docker meaning: ``$VAR``/``${VAR}``/``${VAR:-x}``/``${VAR:+x}`` expansion, ``ENV`` pairs, JSON or
word lists and ``COPY``/``ADD`` sources packed into a tar archive that the sandbox extracts as
its own unprivileged user (so a symlink planted by earlier build steps cannot redirect a write
outside the sandbox). Sources must stay inside the build context; ``COPY --from`` and URLs are
refused. Every problem is an `EnvironmentBuildError` naming the Dockerfile line.
"""

from __future__ import annotations

import glob
import json
import posixpath
import re
import shlex
import tarfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from envpipeline.sandbox.base import EnvironmentBuildError

#: Instructions that change nothing the local sandbox can reproduce; they are recorded and skipped.
IGNORED = frozenset(
    {
        "LABEL",
        "EXPOSE",
        "CMD",
        "ENTRYPOINT",
        "USER",
        "ARG",
        "MAINTAINER",
        "STOPSIGNAL",
        "HEALTHCHECK",
        "VOLUME",
    }
)
#: Instructions the local builder executes.
SUPPORTED = frozenset({"FROM", "WORKDIR", "COPY", "ADD", "ENV", "RUN"})
#: COPY/ADD flags that are accepted and ignored (ownership is always the sandbox user).
IGNORED_COPY_FLAGS = ("--chown", "--chmod", "--link")

#: RUN commands that fetch from the network while the image builds.
NETWORK_RUN = re.compile(
    r"\b(apt-get|apt|apk|yum|dnf|pip3?|npm|yarn|pnpm|npx|curl|wget|uvx?|conda|mamba|gem|poetry"
    r"|cargo\s+install|go\s+(?:get|install)|git\s+clone)\b"
)

_VARIABLE = re.compile(
    r"\$(?:\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)(?::(?P<op>[-+])(?P<word>[^}]*))?\}|(?P<bare>[A-Za-z_][A-Za-z0-9_]*))"
)


@dataclass(frozen=True)
class Instruction:
    """One Dockerfile instruction: its first line number, keyword (upper case) and argument text."""

    line: int
    keyword: str
    value: str


def build_error(line: int, reason: str) -> EnvironmentBuildError:
    """An EnvironmentBuildError that names the Dockerfile line."""
    return EnvironmentBuildError(f"Dockerfile line {line}: {reason}")


def parse_dockerfile(text: str) -> list[Instruction]:
    """Split a Dockerfile into instructions; ``# escape=`` other than ``\\`` is refused."""
    instructions: list[Instruction] = []
    pending: list[str] = []
    start = 0
    directives_allowed = True
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if directives_allowed and re.match(r"#\s*escape\s*=", stripped):
            if stripped.split("=", 1)[1].strip() != "\\":
                raise build_error(number, "only the default escape character '\\' is supported")
            continue
        if stripped.startswith("#") or (not stripped and pending):
            continue
        directives_allowed = False
        if not stripped:
            continue
        if not pending:
            start = number
        if stripped.endswith("\\"):
            pending.append(stripped[:-1].strip())
            continue
        pending.append(stripped)
        joined = " ".join(part for part in pending if part)
        pending = []
        keyword, _, value = joined.partition(" ")
        instructions.append(Instruction(start, keyword.upper(), value.strip()))
    if pending:
        raise build_error(start, "line continuation at the end of the file")
    return instructions


def expand(value: str, variables: Mapping[str, str]) -> str:
    """Docker variable substitution (``\\$`` escapes a dollar sign)."""

    def replace(match: re.Match[str]) -> str:
        name = match["braced"] or match["bare"]
        current = variables.get(name, "")
        if match["op"] == "-":
            return current or match["word"]
        if match["op"] == "+":
            return match["word"] if current else ""
        return current

    parts = value.split("\\$")
    return "$".join(_VARIABLE.sub(replace, part) for part in parts)


def parse_env(value: str, line: int, variables: Mapping[str, str]) -> list[tuple[str, str]]:
    """``ENV K=V K2="v 2"`` or the legacy ``ENV K some value``."""
    try:
        words = shlex.split(value)
    except ValueError as e:
        raise build_error(line, f"ENV: {e}") from e
    if not words:
        raise build_error(line, "ENV needs a name and a value")
    if "=" not in words[0]:
        name, _, rest = value.strip().partition(" ")
        pairs = [(name, rest.strip())]
    else:
        pairs = []
        for word in words:
            name, sep, val = word.partition("=")
            if not sep:
                raise build_error(line, f"ENV: expected NAME=VALUE, got '{word}'")
            pairs.append((name, val))
    for name, _ in pairs:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise build_error(line, f"ENV: invalid variable name '{name}'")
    return [(name, expand(val, variables)) for name, val in pairs]


def json_or_words(value: str) -> tuple[list[str], bool]:
    """The exec (JSON array) form of an argument list, or its whitespace-separated words."""
    if value.startswith("["):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            parsed = None
        if isinstance(parsed, list) and all(isinstance(item, str) for item in parsed):
            return parsed, True
    return value.split(), False


def run_command(value: str, line: int) -> str:
    """The bash command of a RUN: shell form through /bin/sh, exec form run as given."""
    words, is_json = json_or_words(value)
    if is_json:
        if not words:
            raise build_error(line, "RUN with an empty exec form")
        return "exec " + shlex.join(words)
    if not value:
        raise build_error(line, "RUN needs a command")
    return "exec /bin/sh -c " + shlex.quote(value)


def resolve_dir(path: str, workdir: str, line: int, roots: tuple[str, ...]) -> str:
    """An absolute, normalised sandbox directory that must lie under one of `roots`."""
    absolute = posixpath.normpath(posixpath.join(workdir, path))
    if not any(absolute == root or absolute.startswith(root + "/") for root in roots):
        raise build_error(line, f"{path}: the local sandbox only writes under {', '.join(roots)}")
    return absolute


def pack_copy(
    instruction: Instruction,
    context: Path,
    workdir: str,
    variables: Mapping[str, str],
    archive: IO[bytes],
    roots: tuple[str, ...] = ("/app",),
) -> str:
    """Write the sources of a COPY/ADD into `archive` (a tar); return the directory to extract in."""
    line, add = instruction.line, instruction.keyword == "ADD"
    words, _ = json_or_words(instruction.value)
    words = [expand(word, variables) for word in words]
    while words and words[0].startswith("--"):
        flag = words.pop(0)
        if not flag.startswith(IGNORED_COPY_FLAGS):
            raise build_error(line, f"{instruction.keyword} {flag.split('=')[0]} is not supported locally")
    if len(words) < 2:
        raise build_error(line, f"{instruction.keyword} needs at least one source and a destination")
    *sources, dest = words
    context = context.resolve()
    matched: list[Path] = []
    for source in sources:
        if add and re.match(r"^[a-z]+://", source):
            raise build_error(line, f"ADD {source}: URLs need the network, which builds do not have")
        hits = sorted(glob.glob(str(context / source.lstrip("/")))) or []
        if not hits:
            raise build_error(line, f"{source}: no such file in the build context")
        for hit in hits:
            path = Path(hit).resolve()
            if path != context and context not in path.parents:
                raise build_error(line, f"{source}: leaves the build context")
            matched.append(path)
    dir_like = dest.endswith("/") or len(matched) > 1 or any(p.is_dir() for p in matched)
    target = resolve_dir(dest if dir_like else posixpath.dirname(dest) or ".", workdir, line, roots)
    with tarfile.open(fileobj=archive, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in matched:
            if path.is_dir():
                for child in sorted(path.iterdir()):
                    tar.add(child, arcname=child.name)
            elif add and tarfile.is_tarfile(path):
                _add_archive(tar, path, line)
            else:
                tar.add(path, arcname=path.name if dir_like else posixpath.basename(dest))
    return target


def _add_archive(tar: tarfile.TarFile, path: Path, line: int) -> None:
    """ADD of a local tar archive: its members, re-packed (the sandbox extracts them)."""
    try:
        with tarfile.open(path, mode="r:*") as source:
            for member in source.getmembers():
                data = source.extractfile(member) if member.isfile() else None
                tar.addfile(member, data)
    except (tarfile.TarError, OSError) as e:
        raise build_error(line, f"ADD {path.name}: cannot read the archive: {e}") from e
