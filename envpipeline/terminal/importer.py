"""Import Terminal-Bench 1 tasks as Harbor bundles.

    <tb1 task>/                          <harbor bundle>/
      task.yaml                    ->      task.toml + instruction.md
      Dockerfile (+ context files) ->      environment/Dockerfile (+ the same files)
      docker-compose.yaml          ->      dropped when it is the stock one-service wrapper,
                                           else environment/docker-compose.yaml (flag `compose`)
      solution.sh | solution.yaml  ->      solution/solve.sh
      run-tests.sh                 ->      tests/test.sh (offline, always writes the reward file)
      tests/...                    ->      tests/...

Base images are resolved by `envpipeline.terminal.images`: known ones are mapped onto the base
image (recorded with what differs in the report and in ``[metadata].envpipeline.base_image_substitution``),
the others stay as written and are flagged ``needs_image``; network bootstraps in the test script are
rewritten command by command to offline equivalents (`shell_rewrite`: run-tests.sh, solve.sh
and every shell script under tests/ or solution/); Dockerfiles that need the network to build are flagged
``needs_network_build`` (``network``: the package registries, or a host no build reaches). Every change is recorded in the `ImportReport`.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from pydantic import ValidationError

from envpipeline.errors import ConfigError
from envpipeline.models.bundle import (
    AgentSection,
    Author,
    EnvironmentSection,
    MetadataSection,
    TaskConfig,
    TaskSection,
    VerifierSection,
)
from envpipeline.terminal.bundle import dump_task_config, write_files
from envpipeline.terminal.images import BundleImages
from envpipeline.terminal.import_report import (
    BuildNetworkNeed,
    Flag,
    FlagName,
    ImportReport,
    Rewrite,
    Schema,
    Substitution,
)
from envpipeline.terminal.offline import (
    DEFAULT_TEST_BODY,
    TEST_SH_TEMPLATE,
    rewrite_dockerfile,
    solution_from_yaml,
)
from envpipeline.terminal.shell_rewrite import rewrite_script

#: What each kind of network build line means for the operator.
NETWORK_BUILD_MESSAGES: dict[BuildNetworkNeed, str] = {
    "package_registries": (
        "the image build installs from the package registries (Debian, PyPI): Docker builds reach them "
        "unless ENVPIPELINE_BUILD_NETWORK=none; the local sandbox builds without network and fails here"
    ),
    "unreachable_host": (
        "the image build downloads from a host no build here can reach: pre-bake it into an image "
        "or vendor the files into environment/"
    ),
}
#: Terminal-Bench 1 defaults when task.yaml omits the timeouts.
TB_AGENT_TIMEOUT_SEC = 360.0
TB_TEST_TIMEOUT_SEC = 60.0
_COMPOSE_NAMES = ("docker-compose.yaml", "docker-compose.yml", "compose.yaml", "compose.yml")
_CONSUMED = {"task.yaml", "Dockerfile", "solution.sh", "solution.yaml", "run-tests.sh", *_COMPOSE_NAMES}
_SKIP_DIRS = {".git", "__pycache__", ".pytest_cache"}
_PYTEST = re.compile(r"^pytest([=<>!~ ].*)?$")
_SHELL_SHEBANG = re.compile(rb"#![^\n]*\b(?:ba|da|z)?sh\b")
_KNOWN_KEYS = {
    "instruction",
    "descriptions",
    "author_name",
    "author_email",
    "difficulty",
    "category",
    "tags",
    "parser_name",
    "max_agent_timeout_sec",
    "max_test_timeout_sec",
    "run_tests_in_same_shell",
}


def safe_name(name: str) -> str:
    """A folder / task name made of [A-Za-z0-9_.-] (never empty)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.") or "task"


def _read_task_yaml(src: Path) -> dict[str, object]:
    path = src / "task.yaml"
    try:
        data = yaml.safe_load(path.read_text())
    except FileNotFoundError as e:
        raise ConfigError(f"{path}: missing task.yaml (not a Terminal-Bench task)") from e
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: invalid YAML: {e}") from e
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping, got {type(data).__name__}")
    return data


def _instruction(data: dict[str, object], path: Path) -> str:
    text = data.get("instruction")
    descriptions = data.get("descriptions")
    if text is None and isinstance(descriptions, list):  # older TB layout
        by_key = {d.get("key"): d.get("description") for d in descriptions if isinstance(d, dict)}
        text = by_key.get("base")
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(f"{path}: task.yaml has no `instruction` text")
    return text.strip() + "\n"


def source_files(src: Path, warnings: list[str]) -> list[str]:
    """Regular files under `src` (relative, posix); links and special files are skipped."""
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(src, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for name in [*dirnames, *sorted(filenames)]:
            full = Path(dirpath, name)
            rel = full.relative_to(src).as_posix()
            mode = os.lstat(full).st_mode
            if stat.S_ISLNK(mode):
                warnings.append(f"{rel}: symlink not imported (-> {os.readlink(full)})")
                if name in dirnames:
                    dirnames.remove(name)
            elif stat.S_ISREG(mode):
                out.append(rel)
            elif not stat.S_ISDIR(mode):
                warnings.append(f"{rel}: special file not imported")
    return out


def _compose(src: Path, name: str, has_dockerfile: bool) -> tuple[bool, str]:
    """(keep it?, why) — a one-service compose building the local Dockerfile is TB1's stock wrapper."""
    try:
        data = yaml.safe_load((src / name).read_text()) or {}
    except yaml.YAMLError as e:
        return True, f"unparseable compose file ({e})"
    services = data.get("services") if isinstance(data, dict) else None
    if has_dockerfile and isinstance(services, dict) and len(services) == 1:
        (service,) = services.values()
        if isinstance(service, dict) and "build" in service:
            return False, "stock one-service Terminal-Bench compose wrapper; environment/Dockerfile is used"
    count = len(services) if isinstance(services, dict) else 0
    return True, f"{count} service(s); multi-container tasks are not supported by our sandboxes yet"


def _tags(value: object) -> list[str]:
    """task.yaml `tags`: one string or a list of them (TypeError for anything else)."""
    if not value:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple | set | dict):
        return [str(t) for t in value]
    raise TypeError(f"tags must be a string or a list, not {type(value).__name__}")


def _seconds(value: object, default: float) -> float:
    """A task.yaml timeout (`default` when absent or zero; TypeError/ValueError when not a number)."""
    if not value:
        return default
    if isinstance(value, int | float | str):
        return float(value)
    raise TypeError(f"a timeout must be a number, not {type(value).__name__}")


def _config(
    data: dict[str, object], name: str, instruction: str, schema: Schema, org: str, extra: dict[str, object]
) -> TaskConfig:
    difficulty = str(data.get("difficulty", "unknown")).lower()
    tags = _tags(data.get("tags"))
    meta = MetadataSection(
        author_name=str(data.get("author_name") or ""),
        author_email=str(data.get("author_email") or ""),
        difficulty=difficulty if difficulty in ("easy", "medium", "hard") else "unknown",
        category=str(data.get("category") or ""),
        tags=tags,
        envpipeline=extra,
    )
    common = {
        "metadata": meta,
        "verifier": VerifierSection(
            timeout_sec=_seconds(data.get("max_test_timeout_sec"), TB_TEST_TIMEOUT_SEC)
        ),
        "agent": AgentSection(timeout_sec=_seconds(data.get("max_agent_timeout_sec"), TB_AGENT_TIMEOUT_SEC)),
    }
    if schema == "1.0":
        return TaskConfig(**common)
    author = [Author(name=meta.author_name, email=meta.author_email)] if meta.author_name else []
    first = instruction.strip().splitlines()[0][:200]
    return TaskConfig(
        version="1.1",
        schema_version="1.1",
        task=TaskSection(name=f"{safe_name(org)}/{name}", description=first, authors=author, keywords=tags),
        environment=EnvironmentSection(network_mode="no-network"),
        **common,
    )


#: A Python line that installs or downloads: pip/git in a subprocess, or an HTTP fetch of a remote URL.
_PY_INSTALL = re.compile(r"""["'\s](pip3?|-m\s*["',\s]*pip)["',\s]+install\b|["'\s]git["',\s]+clone\b""")
_PY_FETCH = re.compile(r"\b(requests|httpx)\.(get|post|request)\b|\burlopen\(|\burlretrieve\(")
_PY_REMOTE = re.compile(r"(https?|ftp)://(?!localhost|127\.0\.0\.1|0\.0\.0\.0)")


def _is_test_script(label: str) -> bool:
    return label.startswith("tests/") or label == "run-tests.sh"


def _python_network_lines(rel: str, raw: bytes) -> list[str]:
    """Lines of a Python file under tests/ that need the network (pip install, remote fetches)."""
    if not rel.endswith(".py"):
        return []
    out = []
    for number, line in enumerate(raw.decode(errors="replace").splitlines(), 1):
        code = line.split("#", 1)[0] if not line.lstrip().startswith("#") else ""
        if _PY_INSTALL.search(code) or (_PY_FETCH.search(code) and _PY_REMOTE.search(code)):
            out.append(f"line {number}: {line.strip()}")
    return out


@dataclass
class Draft:
    """What an import accumulates before it writes anything (shared with `seed_import`)."""

    src: Path
    present: set[str]
    files: dict[str, str | bytes] = field(default_factory=dict)
    subs: list[Substitution] = field(default_factory=list)
    rewrites: list[Rewrite] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    workdir: str = ""

    def rewrite(self, file: str, line: int, original: str, replacement: str, reason: str) -> None:
        self.rewrites.append(
            Rewrite(file=file, line=line, original=original, replacement=replacement, reason=reason)
        )

    def flag(self, name: FlagName, file: str, lines: list[str], message: str) -> None:
        self.flags.append(Flag(name=name, file=file, lines=lines, message=message))

    def rewrite_shell(self, label: str, text: str, *, strip_comments: bool = False) -> str:
        """`text` rewritten for the offline base image; every edit and dropped package recorded."""
        result = rewrite_script(text, strip_comments=strip_comments)
        for e in result.edits:
            self.rewrite(label, e.line, e.original, e.replacement, e.reason)
        self.warnings.extend(f"{label}: {w}" for w in result.warnings)
        if result.network and _is_test_script(label):
            self.flag(
                "needs_network_at_test",
                label,
                result.network,
                "the verifier reaches a remote host at test time (after the offline rewrite); "
                "the sandbox has no network, so these commands fail there",
            )
        missing = [p for p in result.dropped_packages if not _PYTEST.match(p)]
        if missing:
            self.warnings.append(
                f"{label} installed {', '.join(missing)}; offline the base image must provide them"
            )
        return result.text

    def flag_network_build(self, lines: list[tuple[str, BuildNetworkNeed]]) -> None:
        """One ``needs_network_build`` flag per kind of reach: the package registries (builds on
        Docker get them) and hosts no build here reaches (the build fails)."""
        for need, why in NETWORK_BUILD_MESSAGES.items():
            picked = [line for line, reach in lines if reach == need]
            if picked:
                self.flags.append(
                    Flag(
                        name="needs_network_build",
                        file="environment/Dockerfile",
                        lines=picked,
                        message=why,
                        network=need,
                    )
                )

    def copy_scripts(self, prefix: str, skip: set[str]) -> None:
        """Copy the files under `prefix`, shell scripts rewritten (and recorded); Python test
        helpers that reach a remote host are flagged ``needs_network_at_test``."""
        for rel in sorted(p for p in self.present if p.startswith(prefix) and p not in skip):
            raw = (self.src / rel).read_bytes()
            if rel.endswith(".sh") or _SHELL_SHEBANG.match(raw[:200]):
                self.files[rel] = self.rewrite_shell(rel, raw.decode(errors="replace"))
            else:
                self.files[rel] = raw
                network = _python_network_lines(rel, raw)
                if network and _is_test_script(rel):
                    why = "a test helper reaches a remote host at test time; the sandbox has no network"
                    self.flag("needs_network_at_test", rel, network, why)


def _environment(d: Draft) -> list[str]:
    """Dockerfile (base image mapped, network lines flagged), compose, build context; returns the context."""
    compose = next((c for c in _COMPOSE_NAMES if c in d.present), None)
    if "Dockerfile" not in d.present and compose is None:
        raise ConfigError(f"{d.src}: neither Dockerfile nor docker-compose.yaml")
    if "Dockerfile" in d.present:
        docker = rewrite_dockerfile((d.src / "Dockerfile").read_text())
        d.files["environment/Dockerfile"] = docker.text
        d.workdir = docker.workdir
        images = BundleImages(uses=docker.images)
        d.subs += [s.model_copy(update={"file": "Dockerfile"}) for s in images.substitutions()]
        d.flags += images.needs_image_flags()
        d.flag_network_build(docker.network_lines)
    if compose is not None:
        keep, why = _compose(d.src, compose, "Dockerfile" in d.present)
        if keep:
            d.files[f"environment/{compose}"] = (d.src / compose).read_bytes()
            d.flag(
                "compose",
                f"environment/{compose}",
                [],
                f"compose task kept but not runnable in our sandboxes: {why}",
            )
        else:
            d.rewrite(compose, 0, compose, "", why)
    context = sorted(p for p in d.present if p not in _CONSUMED and not p.startswith(("tests/", "solution/")))
    for rel in context:
        d.files[f"environment/{rel}"] = (d.src / rel).read_bytes()
    return context


def _solution(d: Draft) -> None:
    """solve.sh from solution.sh or solution.yaml; a solution/ folder's files travel with it."""
    d.copy_scripts("solution/", set())
    if "solution.sh" in d.present:
        text = d.rewrite_shell("solution.sh", (d.src / "solution.sh").read_text())
        d.files["solution/solve.sh"] = text if text.startswith("#!") else "#!/bin/bash\n" + text
    elif "solution.yaml" in d.present:
        d.files["solution/solve.sh"] = d.rewrite_shell(
            "solution/solve.sh", solution_from_yaml(d.src / "solution.yaml", d.warnings)
        )
        d.rewrite(
            "solution.yaml",
            0,
            "solution.yaml",
            "solution/solve.sh",
            "command list converted to a shell script",
        )
    elif "solution/solve.sh" not in d.files:
        raise ConfigError(
            f"{d.src}: no solution.sh or solution.yaml: the task has no oracle, so it cannot be gold-verified"
        )


def _tests(d: Draft) -> None:
    if "tests/test.sh" in d.present:
        d.warnings.append("tests/test.sh replaced by the generated verifier entry point")
    d.copy_scripts("tests/", {"tests/test.sh"})
    if "run-tests.sh" in d.present:
        text = (d.src / "run-tests.sh").read_text()
        body = d.rewrite_shell("run-tests.sh", text, strip_comments=True)
    else:
        body = DEFAULT_TEST_BODY
        d.rewrite("run-tests.sh", 0, "", body.strip(), "no run-tests.sh: Terminal-Bench's default pytest run")
    d.files["tests/test.sh"] = TEST_SH_TEMPLATE.format(
        body=body, cd=f'cd "{d.workdir}" 2>/dev/null || true\n' if d.workdir else ""
    )


def import_terminal_bench(
    source_dir: str | Path,
    out_dir: str | Path,
    *,
    schema: Schema = "1.0",
    org: str = "terminal-bench",
    overwrite: bool = False,
) -> ImportReport:
    """Convert one Terminal-Bench 1 task directory into a Harbor bundle at `out_dir`.

    Raises ConfigError for a directory that is not a readable TB1 task or a non-empty `out_dir`
    (unless `overwrite`); everything else is recorded in the returned report.
    """
    src, out = Path(source_dir), Path(out_dir)
    data = _read_task_yaml(src)
    instruction = _instruction(data, src / "task.yaml")
    name = safe_name(src.resolve().name)
    if out.exists() and any(out.iterdir()) and not overwrite:
        raise ConfigError(f"{out}: not empty (pass overwrite=True to replace it)")
    warnings: list[str] = []
    d = Draft(src, set(source_files(src, warnings)), {"instruction.md": instruction}, warnings=warnings)
    unknown = sorted(set(data) - _KNOWN_KEYS)
    if unknown:
        d.warnings.append(
            f"task.yaml: keys kept only in [metadata].envpipeline.tb_extra: {', '.join(unknown)}"
        )
    if str(data.get("difficulty", "")).lower() not in ("easy", "medium", "hard"):
        d.warnings.append(f"task.yaml: difficulty {data.get('difficulty')!r} mapped to 'unknown'")
    context = _environment(d)
    _solution(d)
    _tests(d)
    parser = str(data.get("parser_name") or "pytest")
    if parser != "pytest":
        d.warnings.append(f"parser_name {parser!r}: the reward now comes from the test command's exit status")
    if data.get("run_tests_in_same_shell"):
        d.warnings.append("run_tests_in_same_shell: tests now run in a fresh shell, not the agent's session")

    extra: dict[str, object] = {
        "source": "terminal-bench-1",
        "source_task": src.resolve().name,
        "parser_name": parser,
        "run_tests_in_same_shell": bool(data.get("run_tests_in_same_shell", False)),
    }
    if d.subs:
        extra["base_image_substitution"] = {"from": d.subs[0].original, "to": d.subs[0].replacement}
    if d.flags:
        extra["flags"] = [f.name for f in d.flags]
    tb_extra = {k: data[k] for k in unknown if isinstance(data[k], str | int | float | bool)}
    if tb_extra:
        extra["tb_extra"] = tb_extra
    try:
        config = _config(data, name, instruction, schema, org, extra)
    except (ValidationError, TypeError, ValueError) as e:
        raise ConfigError(f"{src / 'task.yaml'}: cannot build task.toml: {e}") from e
    d.files["task.toml"] = dump_task_config(config)

    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    write_files(out, d.files)
    for rel in context:  # keep the build context's own permissions
        os.chmod(out / "environment" / rel, stat.S_IMODE(os.stat(src / rel).st_mode))
    return ImportReport(
        task=name,
        source=str(src),
        out=str(out),
        substitutions=d.subs,
        rewrites=d.rewrites,
        flags=d.flags,
        warnings=d.warnings,
    )
