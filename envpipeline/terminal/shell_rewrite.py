"""Offline rewriting of bundle shell scripts, command by command, on a real bash parse tree.

Our sandboxes run without network, so a script that installs its tools at test time cannot run
as written. `rewrite_script` parses the script with tree-sitter-bash and rewrites whole simple
commands (never lines), so the shell structure around them is untouched:

    installer (pip/uv/apt-get/apk/npm install, `curl https://... | sh`, `source .../env`)
                                  -> `true`  (the base image provides the tools; in `A || B`
                                              the fallback B still never runs, in `A && B` B runs)
    uv run [opts] X.py | uvx X    -> python3 X.py | python3 -m pytest | X
    python ...                    -> python3 ...  (the base image has no `python`)

Replacing a command by `true` rather than deleting it keeps every list, negation, `$?` and
`set -e` meaning what it meant when the installer succeeded, so the rewrite cannot turn a
failing script into a passing one (`tests/unit/test_shell_rewrite_property.py` checks this).
One exception: an installer whose success alone ends the script with a pass (`INSTALLER && exit 0`,
`if INSTALLER; then exit 0; fi`) becomes `false`, as it behaves offline: `true && exit 0` would
make the pass unconditional, so the tests after it would never decide anything.
Downloads that are not installers (`curl https://... && ...`, `git clone`) are left as written:
they fail offline, and the report says the script needs the network. A script that does not
parse is left unchanged, with a warning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

from envpipeline.errors import MissingExtraError

try:
    import tree_sitter_bash
    from tree_sitter import Language, Node, Parser
except ImportError as missing:
    raise MissingExtraError("sandbox", missing, needed_by=__name__) from missing


_ARG_TYPES = {"word", "string", "raw_string", "concatenation", "simple_expansion", "expansion", "number"}
_LOCAL_URL = re.compile(r"^\w+://(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1\])(?=[:/]|$)")
_REMOTE_URL = re.compile(r"^(https?|ftp)://")
_REMOTE_GIT = re.compile(r"^(git|ssh)://|^[\w.-]+@[\w.-]+:")
_SHELLS = {"sh", "bash", "zsh", "dash"}
_UV_VALUE_OPTS = {
    "--with",
    "-w",
    "--python",
    "-p",
    "--project",
    "--directory",
    "--with-requirements",
    "--group",
    "--extra",
    "--env-file",
    "--from",
    "--index-url",
    "--index",
}
_UV_INSTALL_VERBS = {"add", "sync", "init", "venv", "lock", "pip", "tool", "python"}
_SYSTEM_PACKAGERS = {
    "apt-get": {"update", "install", "upgrade", "dist-upgrade"},
    "apt": {"update", "install", "upgrade"},
    "apk": {"update", "add", "upgrade"},
    "yum": {"install", "update", "makecache"},
    "dnf": {"install", "update", "makecache"},
    "microdnf": {"install", "update"},
}
_NODE_INSTALLERS = {
    "npm": {"install", "i", "ci", "add"},
    "yarn": {"install", "add"},
    "pnpm": {"install", "add", "i"},
}
#: Commands that run the command after them (the wrapped command is the one rewritten).
_WRAPPERS = {"sudo", "exec", "time", "nohup", "timeout", "env"}
_SOURCED_ENV = re.compile(r"(\.local/bin/env|\.cargo/env|/bin/activate)$")


@dataclass(frozen=True)
class ShellEdit:
    """One rewritten command (1-based line of its first character)."""

    line: int
    original: str
    replacement: str
    reason: str


@dataclass
class ShellRewrite:
    """The rewritten script and what changed."""

    text: str
    edits: list[ShellEdit] = field(default_factory=list)
    #: packages the script installed (the base image must provide them offline)
    dropped_packages: list[str] = field(default_factory=list)
    #: commands that need the network at test time, or a script that did not parse
    warnings: list[str] = field(default_factory=list)
    #: the commands left in the script that reach a remote host (``line N: command``)
    network: list[str] = field(default_factory=list)


@cache
def _parser() -> Parser:
    return Parser(Language(tree_sitter_bash.language()))


def _text(node: Node) -> str:
    return (node.text or b"").decode(errors="replace")


def _bare(word: str) -> str:
    """A word without its quotes (expansions stay as written)."""
    return word.replace('"', "").replace("'", "")


@dataclass
class _Command:
    """A simple command: its name, argument nodes and the span that a rewrite replaces."""

    node: Node
    name: str
    args: list[Node]
    start: int  # the command name (prefix assignments such as FOO=1 stay)
    end: int  # the last argument (redirects stay)

    @property
    def words(self) -> list[str]:
        return [_bare(_text(a)) for a in self.args]


def _unwrap(name: str, args: list[Node]) -> int:
    """How many leading arguments belong to a wrapper (`sudo`, `timeout 600`, `env A=1`, ...)."""
    words = [_bare(_text(a)) for a in args]
    i = 0
    while i < len(words) and words[i].startswith("-"):  # the wrapper's own options
        i += 2 if name == "timeout" and words[i] in ("-s", "--signal", "-k", "--kill-after") else 1
    if name == "timeout":
        i += 1  # the duration
    while name == "env" and i < len(words) and "=" in words[i]:
        i += 1
    return i


def _command(node: Node) -> _Command | None:
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return None
    args = [c for c in node.children if c.type in _ARG_TYPES and c.start_byte > name_node.start_byte]
    name, start = _bare(_text(name_node)).rsplit("/", 1)[-1], name_node.start_byte
    while name in _WRAPPERS:  # rewrite the wrapped command, keep the wrapper (not sudo: we are root)
        skip = _unwrap(name, args)
        if skip >= len(args):
            break
        start = start if name == "sudo" else args[skip].start_byte
        name, args = _bare(_text(args[skip])).rsplit("/", 1)[-1], args[skip + 1 :]
    end = max([name_node.end_byte, *(a.end_byte for a in args)])
    return _Command(node, name, args, start, end)


def _packages(words: list[str]) -> list[str]:
    """Non-option words (`-r file` kept as one entry); option values are not packages."""
    out, skip = [], False
    for i, w in enumerate(words):
        if skip:
            skip = False
        elif w in ("-r", "--requirement"):
            out.append(f"-r {words[i + 1]}" if i + 1 < len(words) else "-r")
            skip = True
        elif w in ("-t", "--target", "-c", "--constraint", "-i", "--index-url", "--python", "-p"):
            skip = True
        elif not w.startswith("-"):
            out.append(w)
    return out


def _installer(cmd: _Command) -> tuple[str, list[str]] | None:
    """(reason, packages) when the command installs something over the network."""
    words = cmd.words
    verb = words[0] if words else ""
    if cmd.name in _SYSTEM_PACKAGERS and verb in _SYSTEM_PACKAGERS[cmd.name]:
        pkgs = _packages(words[1:]) if verb in ("install", "add") else []
        return f"`{cmd.name} {verb}` needs the network; the base image provides the system tools", pkgs
    pip_args = words[2:] if cmd.name.startswith("python") and words[:2] == ["-m", "pip"] else words
    if (cmd.name in ("pip", "pip3") or pip_args is not words) and pip_args[:1] in (["install"], ["download"]):
        return "pip install needs the network; the base image provides the Python packages", _packages(
            pip_args[1:]
        )
    if cmd.name == "uv" and verb in _UV_INSTALL_VERBS and verb != "run":
        rest = words[2:] if verb in ("pip", "tool", "python") else words[1:]
        pkgs = _packages(rest) if verb in ("add", "pip", "tool") else []
        return (
            f"`uv {' '.join(words[:2]) if verb in ('pip', 'tool', 'python') else verb}` needs uv and the network",
            pkgs,
        )
    if cmd.name in _NODE_INSTALLERS and verb in _NODE_INSTALLERS[cmd.name]:
        return f"`{cmd.name} {verb}` needs the network", _packages(words[1:])
    if cmd.name in ("source", ".") and words and _SOURCED_ENV.search(words[0]):
        return "environment of a downloaded tool or virtualenv (python3 is on PATH already)", []
    return None


def _without_ctrf(args: list[str]) -> list[str]:
    """pytest arguments without `--ctrf FILE`: the pytest-json-ctrf side report the base image lacks."""
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif _bare(a) == "--ctrf":
            skip = True
        elif not _bare(a).startswith("--ctrf="):
            out.append(a)
    return out


def _python(words: list[str], arg_texts: list[str]) -> list[str] | None:
    """`X args` as the base image runs it (None when X is not a Python entry point)."""
    head = words[0].rsplit("/", 1)[-1] if words else ""
    if head in ("pytest", "py.test"):
        return ["python3", "-m", "pytest", *_without_ctrf(arg_texts[1:])]
    if head in ("python", "python3") or head.startswith("python3."):
        return ["python3", *arg_texts[1:]]
    if head.endswith(".py") or head == "-m":
        return ["python3", *arg_texts]
    return None


def _runner(cmd: _Command) -> tuple[str, list[str]] | None:
    """(replacement, --with packages) for `uv run ...`, `uvx ...`, `python ...`, `pytest ...`."""
    texts, words = [_text(a) for a in cmd.args], cmd.words
    if cmd.name == "python":
        return " ".join(["python3", *texts]), []
    if cmd.name in ("pytest", "py.test"):
        return " ".join(["python3", "-m", "pytest", *_without_ctrf(texts)]), []
    if cmd.name not in ("uv", "uvx") or (cmd.name == "uv" and words[:1] != ["run"]):
        return None
    i, pkgs = (1 if cmd.name == "uv" else 0), []
    while i < len(words) and words[i].startswith("-") and words[i] != "-m":
        opt = words[i].split("=", 1)[0]
        if opt in _UV_VALUE_OPTS and "=" not in words[i] and i + 1 < len(words):
            if opt in ("--with", "-w"):
                pkgs.append(words[i + 1])
            i += 1
        i += 1
    if i >= len(words):
        return "true", pkgs
    new = _python(words[i:], texts[i:]) or texts[i:]
    return " ".join(new), pkgs


def _installer_pipeline(node: Node) -> bool:
    """`curl -fsSL https://astral.sh/uv/install.sh | sh` and the like: a download fed to a shell."""
    cmds = [c for c in (_command(n) for n in node.children if n.type == "command") if c]
    if len(cmds) < 2 or cmds[0].name not in ("curl", "wget") or cmds[-1].name not in _SHELLS:
        return False
    return any(_REMOTE_URL.match(w) and not _LOCAL_URL.match(w) for w in cmds[0].words)


#: Commands that cannot change where a script goes next (they may stand before the passing exit).
_INERT = {"echo", "printf", ":", "true"}
_SEPARATORS = {";", "\n", "{", "}", "then", "fi"}


def _passes_unconditionally(statements: list[Node]) -> bool:
    """`exit`/`exit 0`/`return [0]`, after nothing but messages (`echo ...; exit 0`)."""
    commands = [_command(n) if n.type == "command" else None for n in statements if n.type not in _SEPARATORS]
    if not commands or any(c is None for c in commands):
        return False
    *before, last = [c for c in commands if c is not None]
    return (
        last.name in ("exit", "return")
        and last.words in ([], ["0"])
        and all(c.name in _INERT for c in before)
    )


def _decides_a_pass(node: Node) -> bool:
    """Whether `node` (an installer) is all that stands between the script and a passing exit:
    the left side of `X && exit 0` (or `X && { echo ...; exit 0; }`), or the condition of
    `if X; then exit 0; fi`."""
    while node.parent is not None and node.parent.type == "redirected_statement":
        node = node.parent
    parent = node.parent
    if parent is None:
        return False
    siblings = parent.children
    if parent.type == "list" and len(siblings) == 3 and siblings[0] == node and siblings[1].type == "&&":
        right = siblings[2]
        return _passes_unconditionally(right.children if right.type == "compound_statement" else [right])
    if parent.type in ("if_statement", "elif_clause"):
        kinds = [c.type for c in siblings]
        if "then" not in kinds or node not in siblings[: kinds.index("then")]:
            return False
        body = siblings[kinds.index("then") + 1 :]
        ends = [i for i, c in enumerate(body) if c.type in ("else_clause", "elif_clause", "fi")]
        return _passes_unconditionally(body[: ends[0]] if ends else body)
    return False


def _downloads(cmd: _Command) -> bool:
    if cmd.name in ("curl", "wget"):
        return any(_REMOTE_URL.match(w) and not _LOCAL_URL.match(w) for w in cmd.words)
    if cmd.name == "git" and cmd.words[:1] == ["clone"]:
        return any(_REMOTE_URL.match(w) or _REMOTE_GIT.match(w) for w in cmd.words[1:])
    return False


class _Rewriter:
    def __init__(self, source: bytes, strip_comments: bool) -> None:
        self.source = source
        self.strip_comments = strip_comments
        self.result = ShellRewrite(text="")
        self.spans: list[tuple[int, int, str]] = []

    def edit(self, start: int, end: int, node: Node, replacement: str, reason: str) -> None:
        original = self.source[start:end].decode(errors="replace")
        self.spans.append((start, end, replacement))
        line = node.start_point[0] + 1
        self.result.edits.append(ShellEdit(line, original, replacement, reason))

    def remove_installer(self, start: int, end: int, node: Node, reason: str) -> None:
        """`true` in its place (the base image provides what it installs), or `false` where its
        success alone would end the script with a pass (see the module docstring)."""
        if _decides_a_pass(node):
            reason += "; its success alone would end the script with a pass, so it fails as offline"
            self.edit(start, end, node, "false", reason)
        else:
            self.edit(start, end, node, "true", reason)

    def packages(self, pkgs: list[str]) -> None:
        self.result.dropped_packages.extend(p for p in pkgs if p not in self.result.dropped_packages)

    def visit(self, node: Node) -> None:
        if node.type == "comment" and self.strip_comments:
            self.spans.append((node.start_byte, node.end_byte, ""))
        if node.type in ("heredoc_body", "comment"):
            return
        if node.type == "pipeline" and _installer_pipeline(node):
            self.remove_installer(node.start_byte, node.end_byte, node, "downloads and runs an installer")
            return
        if node.type == "command" and self.command(node):
            return
        for child in node.children:
            self.visit(child)

    def command(self, node: Node) -> bool:
        """Rewrite one simple command; True when it was replaced (its children are done)."""
        cmd = _command(node)
        if cmd is None:
            return False
        installed = _installer(cmd)
        if installed is not None:
            reason, pkgs = installed
            self.packages(pkgs)
            self.remove_installer(cmd.start, cmd.end, node, reason)
            return True
        runner = _runner(cmd)
        if runner is not None:
            new, pkgs = runner
            self.packages(pkgs)
            original = self.source[cmd.start : cmd.end].decode(errors="replace")
            self.edit(cmd.start, cmd.end, node, new, f"offline equivalent of `{original}`")
            return True
        if _downloads(cmd):  # left as written: it fails offline, so it cannot create a pass
            self.result.warnings.append(
                f"line {node.start_point[0] + 1}: `{_text(node)}` needs the network at test time"
            )
            self.result.network.append(f"line {node.start_point[0] + 1}: {_text(node)}")
        return False


def _misparsed(node: Node) -> bool:
    """A tree tree-sitter-bash got wrong: a redirect has one target word in bash, but the grammar
    sometimes runs a ``2>/dev/null`` on into the next lines (e.g. before a ``[ $? -eq 0 ]``)."""
    if node.type == "file_redirect" and len(node.children_by_field_name("destination")) > 1:
        return True
    return any(_misparsed(child) for child in node.children)


def rewrite_script(text: str, *, strip_comments: bool = False) -> ShellRewrite:
    """Rewrite a bash script for the offline base image; see the module docstring for the rules.

    Args:
        text: the script.
        strip_comments: also drop comments (and the shebang), which often describe the removed
            bootstrap; used for a TB1 run-tests.sh that becomes the body of a generated test.sh.
    """
    source = text.encode()
    tree = _parser().parse(source)
    if tree.root_node.has_error:
        return ShellRewrite(text=text, warnings=["the script does not parse as bash; left unchanged"])
    if _misparsed(tree.root_node):  # left as written: it fails offline, so it cannot create a pass
        return ShellRewrite(
            text=text, warnings=["the bash parser misread a redirect in this script; left unchanged"]
        )
    rewriter = _Rewriter(source, strip_comments)
    rewriter.visit(tree.root_node)
    out = source
    for start, end, replacement in sorted(rewriter.spans, reverse=True):
        out = out[:start] + replacement.encode() + out[end:]
    text = out.decode(errors="replace")
    if strip_comments:
        text = re.sub(r"\n[ \t]*(?=\n)", "\n", text)
        text = re.sub(r"\n{3,}", "\n\n", text).strip("\n") + "\n"
    rewriter.result.text = text
    return rewriter.result


def top_level_statements(text: str) -> list[tuple[int, int]] | None:
    """Byte spans of the script's top-level statements (comments excluded), or None when it does
    not parse as bash."""
    tree = _parser().parse(text.encode())
    if tree.root_node.has_error:
        return None
    return [
        (child.start_byte, child.end_byte)
        for child in tree.root_node.named_children
        if child.type != "comment"
    ]
