"""Harbor task directories for WildAWM world tasks (`WorldTask` / `GatedTask`).

The image holds the task's initial world W0 (the day folder after the task's setup ops, made by
`envpipeline.worlds.tasks.prepare_initial`) under ``/app``: ``home/`` (the CLI interface is the
container shell there), ``apps/*.sqlite`` and ``manifest.json``, plus ``worldtool.py`` (the web
app's and MCP server's actions as commands) and ``worldstore.py`` (`envpipeline.worlds.worldstore`
copied byte for byte: it imports only the standard library, so the commands have the interfaces'
exact semantics).

``tests/`` holds one standalone script per criterion (`criterion_scripts`), the W0 snapshot as
``initial.tar.gz`` (a tarball, so no test file is a byte copy of an environment file) and
``checklist.json``; ``test.sh`` unpacks the snapshot, runs every criterion on (W0, /app) and writes
``{"reward": product of the criteria, "checklist": weighted credit}`` (the credit of the items a
rollout must bring about, 0 when a criterion W0 meets fails: `rewards.held_at_start`). ``solution/solve.sh`` runs
``solve.py`` over ``steps.json``: the task's scripted solution done as a hinted agent would, with
worldtool and shell commands.

Trust boundary: the verifier compares /app with the snapshot, so an agent that edits the SQLite
files directly (instead of using worldtool) is graded on the resulting state as well. Nothing the
agent can edit is verifier code: the criteria, the W0 snapshot and the checklist live under
``tests/`` (uploaded only after the agent phase), the criteria import only the standard library,
and every ``python3`` of ``test.sh`` runs with ``-I``, so modules planted in ``/app`` (the working
folder of ``test.sh``) or ``PYTHON*`` variables are never imported.

Left out: ``calls_through`` criteria (a write made through the interface the instruction names)
are judged on the agent's trajectory, which a script comparing W0 with /app cannot see; in the
image every interface is one command (worldtool), and a log of its calls under /app would be the
agent's to edit. Rather than ship a script that always passes, the export drops them from
``tests/`` and ``checklist.json`` and names them under ``[metadata.envpipeline].not_exported``.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import envpipeline
from envpipeline.errors import ConfigError
from envpipeline.export.harbor_common import (
    SEPARATE_VERIFIER,
    HarborMode,
    agent_dockerfile,
    fresh_folder,
    harbor_difficulty,
    verifier_dockerfile,
)
from envpipeline.export.runtime import RUNTIME_DIR
from envpipeline.models.bundle import (
    AgentSection,
    EnvironmentSection,
    MetadataSection,
    TaskConfig,
    VerifierSection,
)
from envpipeline.models.world_task import GatedTask, WorldTask
from envpipeline.terminal.bundle import dump_task_config, write_files
from envpipeline.worlds import lifestore, worldstore
from envpipeline.worlds.state import pack_day
from envpipeline.worlds.tasks import criterion_scripts, prepare_initial
from envpipeline.worlds.verifier import held_at_start

#: Criterion kinds judged on the trajectory, which the exported verifier cannot see (see above).
TRAJECTORY_KINDS = frozenset({"calls_through"})
NOT_EXPORTED_WHY = (
    "judged on the agent's trajectory (which interface made a write); a verifier comparing W0 "
    "with /app cannot see it, and every interface is one command (worldtool) in the image"
)

#: What of a W0 day folder the image holds (delta.json is never part of W0).
WORLD_PARTS = ("home", "apps", "manifest.json")

WORLDTOOL_USAGE = """\
## How to act

You are at a personal computer. The **cli** interface is this shell: the user's files are under
`/app/home`. The **web** (storefront, webmail) and **mcp** (chat, direct messages, email) interfaces
are reached through one command, `python3 /app/worldtool.py` (below: `worldtool`); every command
prints JSON, errors carry a status (400 invalid, 404 unknown, 409 conflict):

    worldtool shop list [QUERY] | show SKU | cart | add-to-cart SKU [QTY] | remove SKU | checkout
    worldtool shop orders | order ORDER_NUMBER
    worldtool mail list [inbox|sent|archive] | read ID | send TO SUBJECT BODY | archive ID
    worldtool chat channels | read CHANNEL [LIMIT] | post CHANNEL BODY
    worldtool dm threads | read PEER | send PEER BODY
"""

WORLD_TEST_SH = """#!/bin/bash
# Verifier: unpack the initial world, run every criterion on (initial, /app), write the reward.
mkdir -p /logs/verifier
echo '{"reward": 0, "checklist": 0}' > /logs/verifier/reward.json
INITIAL=$(mktemp -d)
tar -xzf /tests/initial.tar.gz -C "$INITIAL" || exit 0
PASSED=""
for script in /tests/criterion_*.py; do
  id=$(basename "$script" .py)
  id=${id#criterion_}
  if python3 -I "$script" "$INITIAL" /app >> /logs/verifier/test-stdout.txt 2>&1; then
    PASSED="$PASSED $id"
  fi
  echo "$id done" >> /logs/verifier/test-stdout.txt
done
python3 -I - "$PASSED" > /logs/verifier/reward.json.new <<'PY' && mv /logs/verifier/reward.json.new /logs/verifier/reward.json
import json, sys
task = json.load(open("/tests/checklist.json"))
passed = set(sys.argv[1].split())
reward = 1 if all(c in passed for c in task["criteria"]) else 0
held = set(task.get("held_at_start", []))  # met by the initial world: a condition, not credit
items = [i for i in task["checklist"] if not set(i["criteria"]) <= held] or task["checklist"]
total = sum(item["weight"] for item in items)
credit = sum(item["weight"] for item in items if all(c in passed for c in item["criteria"]))
credit = credit if held <= passed else 0
print(json.dumps({"reward": reward, "checklist": round(credit / total, 4) if total else 0.0}))
PY
"""

WORLD_SOLVE_SH = """#!/bin/bash
# Oracle: the task's reference steps through worldtool and the shell.
set -e
python3 /solution/solve.py /solution/steps.json
"""


def worldstore_source() -> bytes:
    """The bytes of `envpipeline.worlds.worldstore`, shipped unchanged as ``/app/worldstore.py``."""
    return Path(worldstore.__file__).read_bytes()


def snapshot_tar(day: Path) -> bytes:
    """A reproducible .tar.gz of the W0 parts of a day folder (sorted, mtime 0, root-owned, modes
    0o755 and 0o644)."""
    return pack_day(day, WORLD_PARTS, normalize_modes=True)


def exported_criteria(task: WorldTask) -> tuple[list[str], dict[str, Any]]:
    """The ids of the criteria the export scripts, and checklist.json (without trajectory criteria;
    ``held_at_start``: the criteria the initial world meets, which earn no checklist credit)."""
    kept = [c.id for c in task.criteria if c.kind not in TRAJECTORY_KINDS]
    items = []
    for item in task.checklist:
        ids = [c for c in item.criteria if c in kept]
        if ids:
            items.append({**item.model_dump(mode="json"), "criteria": ids})
    held = [c for c in held_at_start(task.criteria) if c in kept]
    return kept, {"criteria": kept, "checklist": items, "held_at_start": held}


def world_task_config(task: WorldTask, difficulty: str | None, mode: HarborMode = "offline") -> TaskConfig:
    """The task.toml of a world task, with its provenance under [metadata].envpipeline.

    The verifier runs in Harbor's separate mode: its image (``tests/Dockerfile``) holds no
    ``/app``, and the agent's ``/app`` comes to it as the task's one artifact.
    """
    dropped = [c.id for c in task.criteria if c.kind in TRAJECTORY_KINDS]
    return TaskConfig(
        metadata=MetadataSection(
            author_name="envpipeline",
            author_email="envpipeline@localhost",
            difficulty=harbor_difficulty({"difficulty": difficulty}),
            category="world",
            tags=["world", task.template, *dict.fromkeys(task.interface_flow)],
            envpipeline={
                "family": "world",
                "task_id": task.task_id,
                "template": task.template,
                "persona_id": task.persona_id,
                "day": task.day,
                "interface_flow": list(task.interface_flow),
                "harbor_mode": mode,
                "runtime": f"worldtool + stdlib worldstore (envpipeline {envpipeline.__version__})",
                **({"not_exported": {"criteria": dropped, "why": NOT_EXPORTED_WHY}} if dropped else {}),
            },
        ),
        verifier=VerifierSection(timeout_sec=120.0, environment_mode=SEPARATE_VERIFIER),
        agent=AgentSection(timeout_sec=900.0),
        environment=EnvironmentSection(memory_mb=2048),
        artifacts=["/app"],
    )


def world_instruction(task: WorldTask) -> str:
    """The task instruction, how to act, and the interface flow."""
    flow = " > ".join(task.interface_flow)
    return (
        f"{task.instruction.strip()}\n\n{WORLDTOOL_USAGE}\n"
        f"The task is meant to be done across the interfaces in this order: {flow}.\n"
    )


def export_world_task(
    item: WorldTask | GatedTask, day_dir: str | Path, out: str | Path, mode: HarborMode = "offline"
) -> Path:
    """Write one world task (W0 = `day_dir` + its setup) as a Harbor task directory at `out`.

    Both modes ship the same files; `mode` picks the images' base (the tools are standard-library
    Python, so a portable image needs no ``pip install``).
    """
    task, difficulty = (item.task, item.difficulty) if isinstance(item, GatedTask) else (item, None)
    if isinstance(item, GatedTask) and item.status != "accepted":
        raise ConfigError(f"{task.task_id}: refusing to export a rejected task")
    day_dir, out = Path(day_dir), Path(out)
    if not (day_dir / "apps").is_dir():
        raise ConfigError(f"{day_dir}: not a world day folder (no apps/)")
    plan = {"task_id": task.task_id, "steps": [s.model_dump(mode="json") for s in task.solution]}
    kept, checklist = exported_criteria(task)
    with tempfile.TemporaryDirectory(prefix="world-export-") as work:
        initial = prepare_initial(task, day_dir, Path(work) / f"day-{task.day:02d}")
        files: dict[str, str | bytes] = {
            "task.toml": dump_task_config(world_task_config(task, difficulty, mode)),
            "instruction.md": world_instruction(task),
            "environment/Dockerfile": agent_dockerfile(mode),
            "environment/app/worldtool.py": (RUNTIME_DIR / "worldtool.py").read_text(),
            "environment/app/worldstore.py": worldstore_source(),
            "environment/app/lifestore.py": Path(lifestore.__file__).read_bytes(),
            "tests/Dockerfile": verifier_dockerfile(mode),
            "tests/test.sh": WORLD_TEST_SH,
            "tests/initial.tar.gz": snapshot_tar(initial),
            "tests/checklist.json": json.dumps(checklist, sort_keys=True, indent=1),
            **{
                f"tests/{name}": text
                for name, text in criterion_scripts(task).items()
                if name.removeprefix("criterion_").removesuffix(".py") in kept
            },
            "solution/solve.sh": WORLD_SOLVE_SH,
            "solution/solve.py": (RUNTIME_DIR / "world_solve.py").read_text(),
            "solution/steps.json": json.dumps(plan, sort_keys=True, indent=1),
        }
        fresh_folder(out)
        write_files(out, files, executable={"environment/app/worldtool.py"})
        app = out / "environment" / "app"
        for part in WORLD_PARTS:
            source = initial / part
            if source.is_dir():
                shutil.copytree(source, app / part, symlinks=True)
            elif source.is_file():
                shutil.copyfile(source, app / part)
    return out
