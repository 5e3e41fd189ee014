"""Offline rewrites of imported Terminal-Bench scripts, and Dockerfile analysis.

Our sandboxes build and verify without network access, so an imported task cannot download
tools at test time. `rewrite_test_script` turns a stock `run-tests.sh` (install curl, install
uv with ``curl ... | sh``, ``uv add pytest``, ``uv run pytest ...``) into its offline equivalent
on the base image (``python3 -m pytest ...``), recording every change. `rewrite_dockerfile`
maps foreign base images onto the base image and lists the lines that need the network to build.
`solution_from_yaml` turns a TB1 solution.yaml (tmux command list) into a shell script.

Both work line by line on the shell text (continuations joined, heredoc bodies left alone,
commands split at top-level ``&&``, ``||`` and ``;``), keeping each word's original quoting.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from envpipeline.errors import ConfigError

#: Shell keywords that may prefix a command on the same line (kept when the command is dropped).
_KEYWORDS = {"if", "then", "else", "elif", "do", "while", "until", "!"}
_LOCAL_HOSTS = ("localhost", "127.0.0.1", "0.0.0.0", "[::1]")
_UV_RUN_VALUE_OPTS = {
    "--with",
    "--python",
    "-p",
    "--project",
    "--directory",
    "--with-requirements",
    "--group",
    "--extra",
    "--env-file",
    "--from",
}
_HEREDOC = re.compile(r"<<-?\s*['\"]?([A-Za-z_][A-Za-z0-9_]*)['\"]?")
#: RUN commands that fetch from the network while the image builds.
NETWORK_RUN = re.compile(
    r"\b(apt-get|apt|apk|yum|dnf|pip3?|npm|yarn|pnpm|npx|curl|wget|uvx?|conda|mamba|gem|poetry"
    r"|cargo\s+install|go\s+(?:get|install)|git\s+clone)\b"
)

TEST_SH_TEMPLATE = """#!/bin/bash
# Verifier entry point imported from Terminal-Bench run-tests.sh by envpipeline.
# Network bootstraps were rewritten to offline equivalents (see the import report).
mkdir -p /logs/verifier
export TEST_DIR="${{TEST_DIR:-/tests}}"
{cd}(
{body}) > /logs/verifier/test-stdout.txt 2>&1
status=$?
if [ "$status" -eq 0 ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""
DEFAULT_TEST_BODY = 'python3 -m pytest "$TEST_DIR/test_outputs.py" -rA\n'


@dataclass(frozen=True)
class LineChange:
    """One changed logical line (1-based number of its first physical line)."""

    line: int
    original: str
    replacement: str
    reason: str


@dataclass
class ScriptRewrite:
    """The rewritten script body and what changed."""

    text: str
    changes: list[LineChange] = field(default_factory=list)
    #: packages the script tried to install (they are not installed offline)
    dropped_packages: list[str] = field(default_factory=list)


@dataclass
class DockerfileRewrite:
    """The rewritten Dockerfile, its base-image substitutions and its network-needing lines."""

    text: str
    substitutions: list[tuple[int, str, str]] = field(default_factory=list)  # (line, from, to)
    network_lines: list[str] = field(default_factory=list)
    #: the final stage's WORKDIR ("" when none): where Terminal-Bench ran the tests
    workdir: str = ""


def logical_lines(text: str) -> list[tuple[int, str, bool]]:
    """(first line number, text, is_heredoc_body) with backslash continuations joined."""
    out: list[tuple[int, str, bool]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        start, buf = i, lines[i]
        while buf.endswith("\\") and i + 1 < len(lines):
            i += 1
            buf = buf + "\n" + lines[i]
        out.append((start + 1, buf, False))
        i += 1
        for delim in _HEREDOC.findall(buf) if not buf.lstrip().startswith("#") else []:
            while i < len(lines):
                out.append((i + 1, lines[i], True))
                i += 1
                if lines[i - 1].strip() == delim:
                    break
    return out


def split_segments(line: str) -> list[tuple[str, str]]:
    """Split at top-level ``&&``, ``||``, ``;`` -> [(separator before, segment)]."""
    if ";;" in line:
        return [("", line)]
    out: list[tuple[str, str]] = []
    sep, buf, quote, i = "", [], "", 0
    while i < len(line):
        c = line[i]
        if c == "\\" and quote != "'":
            buf.append(line[i : i + 2])
            i += 2
            continue
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif line.startswith(("&&", "||"), i) or c == ";":
            out.append((sep, "".join(buf)))
            sep = line[i : i + 2] if c != ";" else ";"
            i += len(sep)
            buf = []
            continue
        buf.append(c)
        i += 1
    out.append((sep, "".join(buf)))
    return out


def raw_words(segment: str) -> list[str]:
    """Split on unquoted whitespace, keeping each word's quoting verbatim."""
    words, buf, quote, i = [], "", "", 0
    while i < len(segment):
        c = segment[i]
        if c == "\\" and quote != "'" and segment[i + 1 : i + 2] != "\n":
            buf += segment[i : i + 2]
            i += 2
            continue
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c.isspace() or c == "\\":  # a line continuation separates words too
            if buf:
                words.append(buf)
            buf = ""
            i += 1
            continue
        buf += c
        i += 1
    if buf:
        words.append(buf)
    return words


def _bare(word: str) -> str:
    return word.replace('"', "").replace("'", "")


def _packages(args: list[str]) -> list[str]:
    """Non-option arguments (``-r file`` kept as one entry)."""
    out, skip = [], False
    for i, a in enumerate(args):
        if skip:
            skip = False
            continue
        if a in ("-r", "--requirement"):
            out.append(f"-r {_bare(args[i + 1])}" if i + 1 < len(args) else "-r")
            skip = True
        elif not a.startswith("-"):
            out.append(_bare(a))
    return out


def _run_target(rest: list[str]) -> tuple[str, list[str]]:
    """Convert the command after `uv run`/`uvx` options; returns (command, --with packages)."""
    with_pkgs: list[str] = []
    i = 0
    while i < len(rest) and rest[i].startswith("-"):
        opt = _bare(rest[i]).split("=", 1)[0]
        if opt in _UV_RUN_VALUE_OPTS and "=" not in rest[i] and i + 1 < len(rest):
            if opt == "--with":
                with_pkgs.append(_bare(rest[i + 1]))
            i += 1
        i += 1
    cmd = rest[i:]
    return " ".join(_python_command(cmd) if cmd else ["true"]), with_pkgs


def _python_command(words: list[str]) -> list[str]:
    head = _bare(words[0]).rsplit("/", 1)[-1]
    if head in ("pytest", "py.test"):
        return ["python3", "-m", "pytest", *words[1:]]
    if head in ("python", "python3"):
        return ["python3", *words[1:]]
    return words


def classify(segment: str) -> tuple[str, str, list[str]]:
    """Decide one command: ("keep"|"drop"|"replace", new text or reason, dropped packages)."""
    words = raw_words(segment)
    prefix: list[str] = []
    while words and words[0] in _KEYWORDS:
        prefix.append(words.pop(0))
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]) or words[:1] == ["sudo"]:
        prefix.append(words.pop(0))
    if not words:
        return "keep", segment, []
    first_stage = words[: words.index("|")] if "|" in words else words
    head, args = _bare(first_stage[0]).rsplit("/", 1)[-1], [_bare(a) for a in first_stage[1:]]
    verb = args[0] if args else ""
    if head in ("apt-get", "apt", "apk", "yum", "dnf", "microdnf"):
        pkgs = _packages(args[1:]) if verb in ("install", "add") else []
        return "drop", "system package manager needs the network", pkgs
    if head in ("pip", "pip3") or (head in ("python", "python3") and args[:2] == ["-m", "pip"]):
        rest = args[2:] if head.startswith("python") else args
        if rest[:1] == ["install"]:
            return "drop", "pip install needs the network", _packages(rest[1:])
    if head == "uv" and verb == "run":
        new, pkgs = _run_target(first_stage[2:])
        return "replace", " ".join([*prefix, new, *words[len(first_stage) :]]), pkgs
    if head == "uvx":
        new, pkgs = _run_target(first_stage[1:])
        return "replace", " ".join([*prefix, new, *words[len(first_stage) :]]), pkgs
    if head == "uv":
        pkgs = (
            _packages(args[2:])
            if args[:2] == ["pip", "install"]
            else _packages(args[1:])
            if verb == "add"
            else []
        )
        return "drop", f"`uv {verb}` needs uv and the network (the base image has python3 + pytest)", pkgs
    if head in ("curl", "wget"):
        urls = [a for a in args if re.match(r"^(https?|ftp)://", a)]
        local = re.compile(r"^\w+://(?:" + "|".join(map(re.escape, _LOCAL_HOSTS)) + r")(?=[:/]|$)")
        if any(not local.match(u) for u in urls):
            return "drop", f"{head} downloads from the network", []
    if (
        head in ("source", ".")
        and args
        and re.search(r"(\.local/bin/env|\.cargo/env|/bin/activate)$", args[0])
    ):
        return "drop", "environment of a downloaded tool or virtualenv", []
    if head == "git" and verb == "clone":
        return "drop", "git clone needs the network", []
    if head in ("npm", "yarn", "pnpm") and verb in ("install", "ci", "add", "i"):
        return "drop", f"{head} {verb} needs the network", _packages(args[1:])
    if head in ("pytest", "py.test", "python"):
        new = _python_command(first_stage)
        return "replace", " ".join([*prefix, *new, *words[len(first_stage) :]]), []
    return "keep", segment, []


def rewrite_test_script(text: str) -> ScriptRewrite:
    """Rewrite a run-tests.sh body for an offline base image (shebang and comments dropped)."""
    result = ScriptRewrite(text="")
    out: list[str] = []
    for number, line, heredoc in logical_lines(text):
        stripped = line.strip()
        if heredoc or not stripped:
            out.append(line)
            continue
        if stripped.startswith("#"):
            continue  # comments (and the shebang) often describe the removed bootstrap
        parts: list[tuple[str, str]] = []
        reasons: list[str] = []
        for sep, segment in split_segments(line):
            action, payload, pkgs = classify(segment)
            result.dropped_packages.extend(p for p in pkgs if p not in result.dropped_packages)
            if action == "keep":
                parts.append((sep, segment))
                continue
            reasons.append(payload if action == "drop" else f"offline equivalent of `{segment.strip()}`")
            lead = segment[: len(segment) - len(segment.lstrip())] or (" " if sep else "")
            if action == "replace":
                parts.append((sep, lead + payload))
                continue
            prefix = [w for w in raw_words(segment) if w in _KEYWORDS]
            if prefix:  # keep the shell syntax valid: `if pip install x` -> `if true`
                parts.append((sep, lead + " ".join([*prefix, "true"])))
        new = _join(parts, line[: len(line) - len(line.lstrip())])
        if new.strip() != stripped:
            result.changes.append(LineChange(number, stripped, new.strip(), "; ".join(reasons)))
        if new.strip():
            out.append(new.rstrip())
        elif line[:1].isspace():  # inside a block: keep `then ... fi` from becoming empty
            out.append(line[: len(line) - len(line.lstrip())] + ":")
    result.text = re.sub(r"\n{3,}", "\n\n", "\n".join(out).strip("\n")) + "\n"
    return result


def _join(parts: list[tuple[str, str]], indent: str) -> str:
    """Re-join kept segments; the first keeps the line's indentation, not its old separator."""
    text = ""
    for sep, segment in parts:
        text += sep + segment if text.strip() else indent + segment.lstrip()
    return text


def rewrite_dockerfile(text: str, base_image: str) -> DockerfileRewrite:
    """Map every external FROM onto `base_image`; collect RUN/ADD lines needing the network."""
    result = DockerfileRewrite(text="")
    stages: set[str] = set()
    out = text.splitlines()
    for number, line, _ in logical_lines(text):
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        keyword = words[0].upper()
        if keyword == "FROM":
            args = [w for w in words[1:] if not w.startswith("--")]
            image = args[0] if args else ""
            alias = args[2] if len(args) >= 3 and args[1].upper() == "AS" else ""
            if image and image not in stages and image != base_image:
                result.substitutions.append((number, image, base_image))
                out[number - 1] = f"FROM {base_image}" + (f" AS {alias}" if alias else "")
            if alias:
                stages.add(alias)
            result.workdir = ""
        elif keyword == "WORKDIR" and len(words) > 1:
            path = words[1].strip("\"'")
            result.workdir = (
                path if path.startswith("/") or not result.workdir else f"{result.workdir}/{path}"
            )
        elif (keyword == "RUN" and NETWORK_RUN.search(line)) or (
            keyword == "ADD" and re.search(r"\b(https?|git)://|git@", line)
        ):
            result.network_lines.append(" ".join(line.replace("\\\n", " ").split()))
    result.text = "\n".join(out) + "\n"
    return result


def solution_from_yaml(path: Path, warnings: list[str]) -> str:
    """TB1 solution.yaml (a list of tmux commands) as a shell script."""
    try:
        steps = yaml.safe_load(path.read_text()) or []
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: invalid YAML: {e}") from e
    if not isinstance(steps, list):
        raise ConfigError(f"{path}: expected a list of commands")
    lines = ["#!/bin/bash", "# Converted by envpipeline from Terminal-Bench solution.yaml."]
    for i, step in enumerate(steps):
        step = {"command": step} if isinstance(step, str) else step
        if not isinstance(step, dict) or not isinstance(step.get("command"), str):
            raise ConfigError(f"{path}: step {i} has no `command` string")
        command = step["command"].rstrip("\n")
        if step.get("append_enter") is False:
            warnings.append(
                f"solution.yaml step {i}: keystrokes without Enter ({command!r}) run as a command"
            )
        if step.get("block") is False:
            command += " &"
            warnings.append(f"solution.yaml step {i}: non-blocking command run in the background")
        lines.append(command)
    return "\n".join(lines) + "\n"
