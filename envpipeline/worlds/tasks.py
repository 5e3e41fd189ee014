"""Cross-interface tasks generated from a materialized world day.

`generate_tasks(day_dir, n)` reads the day through `WorldReader` (and the persona beside it) and
asks the registered templates (`envpipeline.worlds.templates`) for `n` tasks; the choice is a pure
function of (persona, day, index). A task's initial world W0 is the day folder plus the task's
`setup` operations (the trigger the template seeds, e.g. a go-ahead chat message that names a real
product); `prepare_initial` materializes it. Each task carries an instruction, an interface flow (>= 2
interfaces), N declarative criteria (verifier V = their product), a weighted checklist, one hint
per sub-task, the ordered sub-task document and a scripted solution the agents interpret.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

from envpipeline.errors import ConfigError
from envpipeline.models.world import Persona
from envpipeline.models.world_task import WorldTask
from envpipeline.worlds.criteria import render_script
from envpipeline.worlds.delta import apply_ops
from envpipeline.worlds.state import WorldReader
from envpipeline.worlds.task_builder import Context
from envpipeline.worlds.task_meta import with_needs
from envpipeline.worlds.templates import Template, all_templates


def load_persona(day_dir: Path | str) -> Persona:
    """The persona of a world day (``<world>/persona.json`` beside the day folders)."""
    path = Path(day_dir).parent / "persona.json"
    if not path.is_file():
        raise ConfigError(f"no persona.json beside {day_dir}")
    return Persona.model_validate_json(path.read_text(encoding="utf-8"))


def template_context(reader: WorldReader, persona: Persona, index: int, template: str) -> Context:
    """What template `template` sees for task `index` of the day: its rng derives from all four."""
    return Context(
        reader=reader,
        persona=persona,
        day=reader.day,
        index=index,
        rng=random.Random(f"{persona.persona_id}:{reader.day}:task:{index}:{template}"),
    )


def task_from_template(
    template: Template, reader: WorldReader, persona: Persona, index: int
) -> WorldTask | None:
    """Task `index` of the day from one template, or None when the template does not apply."""
    ctx = template_context(reader, persona, index, template.name)
    if not template.applicable(ctx):
        return None
    return with_needs(template.build(ctx).build(persona.persona_id, reader.day, index), reader)


def generate_task(
    day_dir: Path | str,
    index: int,
    persona: Persona | None = None,
    exclude: set[str] | None = None,
    avoid: set[str] | None = None,
) -> WorldTask | None:
    """Task `index` of a day, or None when no template applies (deterministic per persona/day/index).

    Templates are tried in a rotation that depends on (persona, day, index); `exclude` is never
    used, `avoid` (e.g. the persona's templates of earlier days) only when nothing else applies.
    """
    templates = all_templates()
    reader = WorldReader(day_dir)
    persona = persona or load_persona(day_dir)
    names = sorted(templates)
    start = (persona.index * 3 + reader.day * 2 + index) % len(names)
    rotation = [names[(start + offset) % len(names)] for offset in range(len(names))]
    for skip in ((exclude or set()) | (avoid or set()), exclude or set()):
        for name in rotation:
            if name in skip:
                continue
            task = task_from_template(templates[name], reader, persona, index)
            if task is not None:
                return task
    return None


def generate_tasks(
    day_dir: Path | str, n: int, persona: Persona | None = None, avoid: set[str] | None = None
) -> list[WorldTask]:
    """Up to `n` tasks of one day, each from a different template (`avoid`ing some when possible)."""
    persona = persona or load_persona(day_dir)
    tasks: list[WorldTask] = []
    for index in range(n):
        task = generate_task(day_dir, index, persona, exclude={t.template for t in tasks}, avoid=avoid)
        if task is not None:
            tasks.append(task)
    return tasks


def prepare_initial(task: WorldTask, day_dir: Path | str, dest: Path | str) -> Path:
    """Copy the day to `dest` (a ``day-dd`` folder) and apply the task's setup: the task's W0."""
    dest = Path(dest)
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(day_dir, dest, ignore=shutil.ignore_patterns("delta.json"))
    if task.setup:
        apply_ops(dest, list(task.setup))
    return dest


def criterion_scripts(task: WorldTask) -> dict[str, str]:
    """{``criterion_<id>.py``: standalone script text} for every criterion (Harbor export)."""
    return {f"criterion_{c.id}.py": render_script(c.model_dump(mode="json")) for c in task.criteria}


def task_text(task: WorldTask) -> str:
    """The text the diversity gate and metrics embed: instruction, flow and sub-tasks."""
    return " ".join(
        [task.instruction, " ".join(task.interface_flow), *(s.description for s in task.subtasks)]
    )


def to_json(task: WorldTask) -> str:
    """One JSON line."""
    return json.dumps(task.model_dump(mode="json"), sort_keys=True)
