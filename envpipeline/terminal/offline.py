"""Dockerfile analysis and TB1 script conversion for imports (shell rewriting: `shell_rewrite`).

`rewrite_dockerfile` resolves base images (`envpipeline.terminal.images`: known ones mapped onto the
base image, the rest left as written and reported ``needs_image``) and lists the lines that need
the network to build, each judged by `build_network_need`; `logical_lines` joins backslash
continuations and marks heredoc bodies; `solution_from_yaml` turns a TB1 solution.yaml (tmux command list) into a shell script.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from envpipeline.errors import ConfigError
from envpipeline.sandbox.dockerfile import NETWORK_RUN
from envpipeline.terminal.images import ImageUse, resolve_dockerfile
from envpipeline.terminal.import_report import BuildNetworkNeed

_HEREDOC = re.compile(r"<<-?\s*['\"]?([A-Za-z_][A-Za-z0-9_]*)['\"]?")
#: The tools that fetch only from the package registries a build is given: Debian's apt (the
#: mirror the base image's sources name) and pip (PyPI through the host's pip configuration).
REGISTRY_TOOLS = frozenset({"apt-get", "apt", "pip", "pip3"})
#: Hosts of those registries; a URL to any other host needs a network builds do not have.
REGISTRY_HOSTS = frozenset({"deb.debian.org", "security.debian.org", "pypi.org", "files.pythonhosted.org"})
_URL_HOST = re.compile(r"\b(?:https?|ftp|git)://(?:[^@/\s'\"]+@)?([^/:\s'\"]+)|\bgit@([^:\s'\"]+):")

TEST_SH_TEMPLATE = """#!/bin/bash
# Verifier entry point imported from Terminal-Bench run-tests.sh by envpipeline.
# Network bootstraps were rewritten to offline equivalents (see the import report).
mkdir -p /logs/verifier
export TEST_DIR="${{TEST_DIR:-/tests}}"
# A test runner rewritten to `python3 -m pytest` would put the current folder (the agent's /app)
# first on sys.path: a planted /app/pytest.py would then be the test runner. Python >= 3.11 leaves
# it off with PYTHONSAFEPATH (https://docs.python.org/3/using/cmdline.html#envvar-PYTHONSAFEPATH).
export PYTHONSAFEPATH=1
{cd}(
{body}) > /logs/verifier/test-stdout.txt 2>&1
status=$?
# the tests' own output on stdout too, so verify reports (and `oracle_failed` reasons) can show it
tail -c 20000 /logs/verifier/test-stdout.txt
if [ "$status" -eq 0 ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""
DEFAULT_TEST_BODY = 'python3 -m pytest "$TEST_DIR/test_outputs.py" -rA\n'


@dataclass
class DockerfileRewrite:
    """The Dockerfile with known base images substituted, every image use and the network lines."""

    text: str
    images: list[ImageUse] = field(default_factory=list)
    #: (logical line, what it reaches) for every RUN/ADD that needs the network to build
    network_lines: list[tuple[str, BuildNetworkNeed]] = field(default_factory=list)
    #: the final stage's WORKDIR ("" when none): where Terminal-Bench ran the tests
    workdir: str = ""


def build_network_need(line: str) -> BuildNetworkNeed:
    """Whether a build line reaches only the package registries or some host builds cannot reach.

    Only apt/pip with no URL outside `REGISTRY_HOSTS` count as registry installs; curl, wget,
    git clone, npm, cargo, uv bootstraps... need hosts (github.com, astral.sh) no build reaches.
    """
    tools = {" ".join(m.group(1).split()) for m in NETWORK_RUN.finditer(line)}
    hosts = {a or b for a, b in _URL_HOST.findall(line)}
    if tools <= REGISTRY_TOOLS and hosts <= REGISTRY_HOSTS:
        return "package_registries"
    return "unreachable_host"


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


def rewrite_dockerfile(text: str, provided: Callable[[str], bool] | None = None) -> DockerfileRewrite:
    """Resolve the base images (`images.resolve_dockerfile`); collect RUN/ADD lines needing the network."""
    resolved, uses = resolve_dockerfile(text, provided)
    result = DockerfileRewrite(text=resolved, images=uses)
    for _, line, _ in logical_lines(text):
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        keyword = words[0].upper()
        if keyword == "FROM":
            result.workdir = ""
        elif keyword == "WORKDIR" and len(words) > 1:
            path = words[1].strip("\"'")
            result.workdir = (
                path if path.startswith("/") or not result.workdir else f"{result.workdir}/{path}"
            )
        elif (keyword == "RUN" and NETWORK_RUN.search(line)) or (
            keyword == "ADD" and re.search(r"\b(https?|git)://|git@", line)
        ):
            joined = " ".join(line.replace("\\\n", " ").split())
            result.network_lines.append((joined, build_network_need(joined)))
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
