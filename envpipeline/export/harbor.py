"""Harbor task directories for the three families (terminal, composed, world), in two modes.

- **terminal** bundles are Harbor already: copied (links kept only inside the bundle, special
  files refused) with ``task.toml`` re-serialized through our schema.
- **composed** tasks (`TaskRecord`, family ``compose``) become a task whose image runs the real
  service implementations behind ``envtool.py`` (the tools on the command line).
  *offline* (default; `HarborMode`): ``FROM`` the local base image (python3 and pytest only);
  ``environment/app/`` holds ``state.json`` (the joint initial state, distractors included),
  envtool and ``vendor/`` (the envpipeline modules the services need plus copies of pydantic,
  pydantic_core, annotated_types, typing_inspection and typing_extensions). The base runs
  Debian's CPython 3.11, so the compiled pydantic_core of this interpreter works there only when
  it is CPython 3.11 on the same platform: export refuses otherwise. The agent can read the
  state file (the tools run in its process).
  *portable*: ``FROM python:3.11-slim`` with exact ``pip install`` pins of pydantic and its
  dependencies, no compiled file shipped. The services run as root (`envserver.py`, started by the
  image's entrypoint, on 127.0.0.1:8765) from a root-only ``/srv/envtool`` holding the state, the
  pure-Python envpipeline runtime and the call log; the agent runs as the unprivileged user
  ``agent`` and gets only what the tools serve (``/app`` holds envtool, a client).
  In both modes ``tests/evaluate.py`` replays the agent's call log on the initial state
  (``tests/task.json``) and scores the criteria with its own copy of the runtime
  (``tests/vendor.tar.gz``); ``solution/solve.py`` replays the reference solution through envtool.
- **world** tasks (WildAWM `WorldTask`/`GatedTask`, given as ``(task, day_dir)`` pairs or with
  `world_root`) are written by `envpipeline.export.world_harbor`: the image holds the task's
  initial world and a stdlib ``worldtool.py`` for the web and MCP actions; the shell is the CLI.

Verifier: Harbor's separate mode for composed and world tasks in both modes (``[verifier]
environment_mode = "separate"``; harbor 0.26.0, harbor/models/task/config.py ``VerifierConfig``
and harbor/models/task/verifier_mode.py): the verifier's image is built from ``tests/Dockerfile``
(tests baked in at ``/tests``, no ``/app``), and the agent's outputs reach it as the task's
``artifacts`` (call log and answer; the whole ``/app`` of a world task), re-materialized at their
paths. The criteria, expected answers and initial state never enter the agent's image.

Trust boundary: the verifier trusts nothing an agent can edit. Its code, the initial state and the
runtime it imports live under ``tests/``, and it runs as ``python3 -I`` (no current folder, no
``PYTHON*`` variables, no user site on its path), so rewriting ``/app/vendor`` or planting modules
in ``/app`` changes nothing; editing ``/app/state.json`` earns nothing either (the state is rebuilt
from the call log). The agent's inputs are the call log and ``/app/answer.txt``, read as data.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import shutil
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import envpipeline
from envpipeline.errors import ConfigError
from envpipeline.export.composed_portable import (
    AGENT_USER,
    ENTRYPOINT_SH,
    PORTABLE_CALLS,
    PORTABLE_TEST_SH,
    portable_dockerfile,
)
from envpipeline.export.harbor_common import (
    SEPARATE_VERIFIER,
    HarborMode,
    agent_dockerfile,
    base_image,
    fresh_folder,
    harbor_difficulty,
    reproducible_tar_gz,
    runtime_pins,
    safe_name,
    verifier_dockerfile,
)
from envpipeline.export.runtime import RUNTIME_DIR
from envpipeline.export.world_harbor import export_world_task
from envpipeline.models.bundle import (
    AgentSection,
    BundlePaths,
    EnvironmentSection,
    HealthcheckSection,
    MetadataSection,
    TaskConfig,
    VerifierSection,
)
from envpipeline.models.task import TaskRecord
from envpipeline.models.world_task import GatedTask, WorldTask
from envpipeline.terminal.bundle import dump_task_config, read_bundle, write_files
from envpipeline.terminal.checks import check_path_safety

#: Python of the base image (Debian bookworm): the vendored pydantic_core must match it.
BASE_PYTHON = (3, 11)
#: Third-party modules the services import (all of pydantic's runtime dependencies).
THIRD_PARTY = ("pydantic", "pydantic_core", "annotated_types", "typing_inspection", "typing_extensions")
#: The envpipeline parts a composed environment needs (relative to the package).
ENVPIPELINE_PARTS = (
    "__init__.py",
    "versions.py",
    "canonical.py",
    "errors.py",
    "plugins.py",
    "services",
    "models",
    "rubric.py",
    "value_mentions.py",
    "agents/__init__.py",
    "agents/environment.py",
)
#: Modules of envpipeline/services that need more than the vendored runtime (never imported there).
_SKIP_SERVICE_FILES = ("summary.py", "llm_worldmodel.py", "llm_synthesis.py")

ENVTOOL_USAGE = """\
## How to act

The services of this task are reachable through one command-line tool, `/app/envtool.py`:

    python3 /app/envtool.py services                   # list the services
    python3 /app/envtool.py tools SERVICE              # list the tools of one service
    python3 /app/envtool.py describe SERVICE.TOOL      # the JSON schema of a tool's arguments
    python3 /app/envtool.py call SERVICE.TOOL '{"arg": "value"}'   # call a tool
    python3 /app/envtool.py answer 'YOUR FINAL ANSWER'  # record your final reply

Each command prints one JSON observation; errors carry a code (400 invalid argument, 404 unknown
id, 409 conflict). Describe a tool before you first call it. When the task is done, record a
short final answer with `answer` (it is part of the grading).
"""

COMPOSED_TEST_SH = """#!/bin/bash
# Verifier: replay /app/calls.jsonl, evaluate the criteria, write /logs/verifier/reward.json.
mkdir -p /logs/verifier
if ! python3 -I /tests/evaluate.py > /logs/verifier/test-stdout.txt 2>&1; then
  [ -f /logs/verifier/reward.json ] || echo '{"reward": 0}' > /logs/verifier/reward.json
fi
"""

SOLVE_SH = """#!/bin/bash
# Oracle: replay the reference solution through envtool and record the gold answer.
set -e
python3 /solution/solve.py
"""


def _module_root(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise ConfigError(f"cannot vendor {name}: it is not importable here")
    origin = Path(spec.origin)
    return origin.parent if origin.name == "__init__.py" else origin


def _files_under(root: Path, skip: tuple[str, ...] = ()) -> Iterable[tuple[str, Path]]:
    if root.is_file():
        yield root.name, root
        return
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if (
            path.is_file()
            and "__pycache__" not in rel.parts
            and path.suffix != ".pyc"
            and path.name not in skip
        ):
            yield rel.as_posix(), path


def vendor_files(third_party: bool = True) -> dict[str, Path]:
    """Relative path under ``vendor/`` -> source file, for the composed-task runtime.

    `third_party` adds copies of pydantic and its dependencies (offline exports, whose base image
    has none); portable exports ``pip install`` them instead and ship only envpipeline's own
    pure-Python files. The list is read from the installed packages once per process (as
    `vendor_tar` is): every composed task of an export vendors the same files.
    """
    return dict(_vendor_file_items(third_party))


@functools.cache
def _vendor_file_items(third_party: bool) -> tuple[tuple[str, Path], ...]:
    files: dict[str, Path] = {}
    package = Path(envpipeline.__file__).resolve().parent
    for part in ENVPIPELINE_PARTS:
        source = package / part
        for rel, path in _files_under(source, _SKIP_SERVICE_FILES):
            files[f"envpipeline/{part}" if source.is_file() else f"envpipeline/{part}/{rel}"] = path
    for name in THIRD_PARTY if third_party else ():
        root = _module_root(name)
        prefix = "" if root.is_file() else f"{root.name}/"
        for rel, path in _files_under(root):
            files[f"{prefix}{rel}"] = path
    return tuple(files.items())


@functools.cache
def vendor_tar(third_party: bool = True) -> bytes:
    """The vendored runtime as a reproducible ``.tar.gz`` (the verifier's own copy, in ``tests/``)."""
    return reproducible_tar_gz(sorted(vendor_files(third_party).items()))


def check_runtime_python() -> None:
    """Refuse to vendor a pydantic_core compiled for another Python than the base image's."""
    if sys.version_info[:2] != BASE_PYTHON or sys.implementation.name != "cpython":
        raise ConfigError(
            f"composed-task export vendors this interpreter's compiled pydantic_core, but the base "
            f"image runs CPython {BASE_PYTHON[0]}.{BASE_PYTHON[1]} and this is "
            f"{sys.implementation.name} {sys.version_info[0]}.{sys.version_info[1]}: export from a 3.11 venv"
        )


def write_vendor(dest: Path, link_from: Path | None = None, third_party: bool = True) -> None:
    """Write the vendored runtime into `dest`; files of an earlier copy `link_from` are hard-linked."""
    for rel, source in vendor_files(third_party).items():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        earlier = link_from / rel if link_from is not None else None
        if earlier is not None and earlier.is_file():
            try:
                os.link(earlier, target)
                continue
            except OSError:
                pass
        shutil.copyfile(source, target)
        os.chmod(target, 0o644)


def composed_task_config(record: TaskRecord, mode: HarborMode = "offline") -> TaskConfig:
    """The task.toml of a composed task, with its provenance under [metadata].envpipeline.

    The verifier runs in Harbor's separate mode (its own container, built from ``tests/``); the
    agent's call log and final answer reach it as artifacts (in portable mode the log is the
    root-only one the envserver writes, and the agent runs as an unprivileged user).
    """
    services = list(record.environment.services)
    portable = mode == "portable"
    runtime = (
        f"envtool client + root-only envserver (envpipeline {envpipeline.__version__}, {' '.join(runtime_pins())})"
        if portable
        else f"envtool + vendored envpipeline {envpipeline.__version__} (cp311)"
    )
    return TaskConfig(
        metadata=MetadataSection(
            author_name="envpipeline",
            author_email="envpipeline@localhost",
            difficulty=harbor_difficulty(record.metadata),
            category="compose",
            tags=["compose", *services],
            envpipeline={
                "family": "compose",
                "task_id": record.task_id,
                "seed_key": record.seed_key,
                "generator": record.provenance.generator,
                "generator_version": record.provenance.generator_version,
                "seed": record.provenance.seed,
                "services": services,
                "distractors": list(record.environment.distractors),
                "harbor_mode": mode,
                "runtime": runtime,
            },
        ),
        verifier=VerifierSection(timeout_sec=120.0, environment_mode=SEPARATE_VERIFIER),
        agent=AgentSection(timeout_sec=900.0, user=AGENT_USER if portable else None),
        environment=EnvironmentSection(
            memory_mb=2048,
            healthcheck=HealthcheckSection(command="python3 /app/envtool.py services") if portable else None,
        ),
        artifacts=[PORTABLE_CALLS if portable else "/app/calls.jsonl", "/app/answer.txt"],
    )


def joint_initial_state(record: TaskRecord) -> dict[str, Any]:
    """The whole initial state the agent meets: planted services and seeded distractors."""
    from envpipeline.agents.environment import ComposedEnvironment

    return ComposedEnvironment.from_task_environment(record.environment).snapshot()


def export_composed_task(
    record: TaskRecord, out: Path, link_vendor_from: Path | None = None, mode: HarborMode = "offline"
) -> Path:
    """Write one composed task as a Harbor task directory at `out` (see the module doc); returns `out`."""
    if record.family != "compose":
        raise ConfigError(f"{record.task_id}: not a composed task (family {record.family})")
    portable = mode == "portable"
    if not portable:
        check_runtime_python()
    state = joint_initial_state(record)
    runtime = {
        name: (RUNTIME_DIR / name).read_text()
        for name in ("envtool.py", "evaluate.py", "solve.py", "envserver.py")
    }
    plan = {
        "steps": [s.model_dump(mode="json") for s in record.reference_solution],
        "answer": record.reference_output,
    }
    task = {
        "task_id": record.task_id,
        "criteria": [c.model_dump(mode="json") for c in record.criteria],
        "initial_state": state,
    }
    pins = runtime_pins() if portable else []
    files: dict[str, str | bytes] = {
        "task.toml": dump_task_config(composed_task_config(record, mode)),
        "instruction.md": f"{record.instruction.strip()}\n\n{ENVTOOL_USAGE}",
        "environment/app/envtool.py": runtime["envtool.py"],
        "tests/Dockerfile": verifier_dockerfile(mode, pins),
        "tests/test.sh": PORTABLE_TEST_SH if portable else COMPOSED_TEST_SH,
        "tests/evaluate.py": runtime["evaluate.py"],
        "tests/task.json": json.dumps(task, sort_keys=True, indent=1),
        "solution/solve.sh": SOLVE_SH,
        "solution/solve.py": runtime["solve.py"],
        "solution/steps.json": json.dumps(plan, sort_keys=True, indent=1),
    }
    if portable:  # the state and the services live in a root-only folder, out of the agent's reach
        files |= {
            "environment/Dockerfile": portable_dockerfile(pins),
            "environment/tools/entrypoint.sh": ENTRYPOINT_SH,
            "environment/tools/envserver.py": runtime["envserver.py"],
            "environment/tools/envtool.py": runtime["envtool.py"],
            "environment/tools/state.json": json.dumps(state, sort_keys=True),
        }
    else:
        files |= {
            "environment/Dockerfile": agent_dockerfile(mode),
            "environment/app/state.json": json.dumps(state, sort_keys=True),
        }
    fresh_folder(out)
    write_files(out, files, executable={"environment/app/envtool.py"})
    vendor = out / "environment" / ("tools" if portable else "app") / "vendor"
    write_vendor(vendor, link_vendor_from, third_party=not portable)
    write_vendor_tar(out / "tests" / "vendor.tar.gz", link_vendor_from, third_party=not portable)
    return out


def write_vendor_tar(target: Path, link_vendor_from: Path | None, third_party: bool = True) -> None:
    """The verifier's runtime archive, hard-linked from an earlier export's when one is given."""
    earlier = link_vendor_from.parents[2] / "tests" / "vendor.tar.gz" if link_vendor_from else None
    if earlier is not None and earlier.is_file() and earlier.read_bytes() == vendor_tar(third_party):
        try:
            os.link(earlier, target)
            return
        except OSError:
            pass
    target.write_bytes(vendor_tar(third_party))
    os.chmod(target, 0o644)


def export_terminal_bundle(source: str | Path, out: Path) -> Path:
    """Copy a terminal bundle to `out` (path-safe, task.toml normalized); returns `out`."""
    source = Path(source)
    safety = check_path_safety(BundlePaths(source))
    if not safety.passed:
        raise ConfigError(f"{source}: refusing to export: {safety.reason}")
    bundle = read_bundle(source)
    fresh_folder(out)
    out.rmdir()
    shutil.copytree(source, out, symlinks=True, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (out / "task.toml").write_text(dump_task_config(bundle.config))
    return out


def export_harbor(
    items: Iterable[Any],
    out: str | Path,
    world_root: str | Path | None = None,
    mode: HarborMode = "offline",
) -> list[Path]:
    """Export composed `TaskRecord`s, terminal bundle folders and world tasks under `out` (``out/<name>``).

    A world task is a ``(WorldTask | GatedTask, day_dir)`` pair, or a bare task whose day folder is
    ``<world_root>/<persona_id>/day-<dd>`` (the layout `build_and_gate` writes). The vendored
    runtime of composed tasks is hard-linked between tasks when the filesystem allows. `mode`
    (``offline`` or ``portable``, see `HarborMode`) applies to composed and world tasks; terminal
    bundles are copied as their family wrote them (offline base image, shared verifier).
    """
    base_image(mode)  # an unknown mode fails before anything is written
    world_types = (WorldTask, GatedTask)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    first_vendor: Path | None = None
    for item in items:
        if isinstance(item, TaskRecord):
            target = export_composed_task(item, out / safe_name(item.task_id), first_vendor, mode)
            first_vendor = (
                first_vendor or target / "environment" / ("tools" if mode == "portable" else "app") / "vendor"
            )
        elif isinstance(item, world_types) or (
            isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], world_types)
        ):
            task, day_dir = item if isinstance(item, tuple) else (item, None)
            inner = task.task if isinstance(task, GatedTask) else task
            if day_dir is None:
                if world_root is None:
                    raise ConfigError(f"{inner.task_id}: a world task needs its day folder or world_root")
                day_dir = Path(world_root) / inner.persona_id / f"day-{inner.day:02d}"
            target = export_world_task(task, day_dir, out / safe_name(inner.task_id), mode)
        elif isinstance(item, str | Path):
            bundle = read_bundle(item)
            target = export_terminal_bundle(item, out / safe_name(bundle.name.replace("/", "__")))
        else:
            raise ConfigError(f"cannot export {type(item).__name__} as a Harbor task")
        written.append(target)
    return written
