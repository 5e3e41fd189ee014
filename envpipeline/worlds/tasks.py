"""Cross-interface tasks generated from a materialized world day.

`generate_tasks(day_dir, n)` reads the day through `WorldReader` (and the persona beside it) and
asks the templates of `task_templates` for `n` tasks; the choice is a pure function of (persona,
day, index). A task's initial world W0 is the day folder plus the task's `setup` operations (the
trigger the template seeds, e.g. a go-ahead chat message that names a real product);
`prepare_initial` materializes it. Each task carries an instruction, an interface flow (>= 2
interfaces), N declarative criteria (verifier V = their product), a weighted checklist, one hint
per sub-task, the ordered sub-task document and a scripted solution the agents interpret.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envpipeline.errors import ConfigError
from envpipeline.models.task import Condition
from envpipeline.models.world import Operation, Persona
from envpipeline.models.world_task import (
    ChecklistItem,
    Expectation,
    Interface,
    Mention,
    Step,
    SubTask,
    WorldCriterion,
    WorldTask,
)
from envpipeline.worlds.criteria import render_script
from envpipeline.worlds.state import WorldReader

INTERFACES: tuple[str, ...] = ("mcp", "cli", "web")


def eq(value: Any) -> Condition:
    """An equality condition."""
    return Condition(op="eq", value=value)


def has(value: Any) -> Condition:
    """A substring condition."""
    return Condition(op="contains", value=value)


def new_order_mention(sku: str) -> Mention:
    """The order_number of a newly placed order holding `sku`."""
    return Mention(app="shop", table="orders", column="order_number", where={"items_json": has(sku)})


@dataclass
class Context:
    """What a template sees: the day, its persona, a seeded rng, the task index."""

    reader: WorldReader
    persona: Persona
    day: int
    index: int
    rng: random.Random

    @property
    def date(self) -> str:
        """The day's ISO date."""
        from envpipeline.worlds.schema import day_date

        return day_date(self.day).isoformat()

    def products(self, min_stock: int = 2) -> list[dict[str, Any]]:
        """In-stock products, by id."""
        return self.reader.query("shop", "SELECT * FROM products WHERE stock >= ? ORDER BY id", [min_stock])

    def contacts(self, *relations: str) -> list[Any]:
        """Contacts of the given relations (all when none match)."""
        pool = [c for c in self.persona.contacts if not relations or c.relation in relations]
        return pool or list(self.persona.contacts)


@dataclass
class TaskBuilder:
    """Accumulates a task's parts while a template describes it sub-task by sub-task."""

    template: str
    instruction: str = ""
    subtasks: list[SubTask] = field(default_factory=list)
    criteria: list[WorldCriterion] = field(default_factory=list)
    checklist: list[ChecklistItem] = field(default_factory=list)
    expectations: list[Expectation] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    setup: list[Operation] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)

    def sub(self, interface: Interface, description: str, hint: str) -> int:
        """Add the next sub-task; returns its index."""
        self.subtasks.append(
            SubTask(index=len(self.subtasks), interface=interface, description=description, hint=hint)
        )
        return len(self.subtasks) - 1

    def step(self, action: str, **args: Any) -> None:
        """A scripted-solution step of the latest sub-task (`action` is ``interface.verb``)."""
        interface, _ = action.split(".", 1)
        self.steps.append(Step(subtask=len(self.subtasks) - 1, interface=interface, action=action, args=args))

    def crit(self, kind: str, description: str, weight: float = 1.0, **spec: Any) -> str:
        """A criterion achieved by the latest sub-task, plus its checklist item; returns its id."""
        cid = f"c{len(self.criteria) + 1}"
        interface = self.subtasks[-1].interface
        self.criteria.append(
            WorldCriterion(id=cid, kind=kind, description=description, interface=interface, **spec)
        )
        self.checklist.append(
            ChecklistItem(
                id=f"k{len(self.checklist) + 1}", description=description, weight=weight, criteria=[cid]
            )
        )
        return cid

    def expect(self, app: str, *tokens: str, table: str | None = None, path: str | None = None) -> None:
        """What the state-diff judge should find (tokens in an added/changed row or file)."""
        self.expectations.append(Expectation(app=app, table=table, path=path, tokens=list(tokens)))

    def build(self, persona_id: str, day: int, index: int) -> WorldTask:
        """The finished task (its id hashes everything but the id)."""
        flow = [s.interface for s in self.subtasks]
        body = {
            "persona_id": persona_id,
            "day": day,
            "index": index,
            "template": self.template,
            "instruction": self.instruction,
            "interface_flow": flow,
            "setup": self.setup,
            "criteria": self.criteria,
            "checklist": self.checklist,
            "hints": [s.hint for s in self.subtasks],
            "subtasks": self.subtasks,
            "document": "",
            "expectations": self.expectations,
            "solution": self.steps,
            "facts": self.facts,
        }
        task = WorldTask(task_id="pending", **body)
        task = task.model_copy(update={"document": render_document(task)})
        digest = hashlib.sha256(task.model_dump_json(exclude={"task_id"}).encode()).hexdigest()[:16]
        return task.model_copy(update={"task_id": f"{persona_id}-d{day:02d}-{index}-{digest[:8]}"})


def render_document(task: WorldTask) -> str:
    """The ordered sub-task document (markdown)."""
    lines = [
        f"# Task {task.template} ({task.persona_id}, day {task.day:02d})",
        "",
        task.instruction,
        "",
        f"**Interface flow**: {'>'.join(task.interface_flow)}",
        "",
        "## Sub-tasks",
        "",
    ]
    for sub in task.subtasks:
        lines.append(f"{sub.index + 1}. [{sub.interface}] {sub.description}")
    lines += ["", "## Verifier (all criteria must hold)", ""]
    lines += [f"- {c.id} [{c.interface}] {c.description}" for c in task.criteria]
    return "\n".join(lines) + "\n"


def load_persona(day_dir: Path | str) -> Persona:
    """The persona of a world day (``<world>/persona.json`` beside the day folders)."""
    path = Path(day_dir).parent / "persona.json"
    if not path.is_file():
        raise ConfigError(f"no persona.json beside {day_dir}")
    return Persona.model_validate_json(path.read_text(encoding="utf-8"))


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
    from envpipeline.worlds.task_templates import TEMPLATES

    reader = WorldReader(day_dir)
    persona = persona or load_persona(day_dir)
    names = sorted(TEMPLATES)
    start = (persona.index * 3 + reader.day * 2 + index) % len(names)
    rotation = [names[(start + offset) % len(names)] for offset in range(len(names))]
    for skip in ((exclude or set()) | (avoid or set()), exclude or set()):
        for name in rotation:
            if name in skip:
                continue
            template = TEMPLATES[name]
            ctx = Context(
                reader=reader,
                persona=persona,
                day=reader.day,
                index=index,
                rng=random.Random(f"{persona.persona_id}:{reader.day}:task:{index}:{name}"),
            )
            if template.applicable(ctx):
                return template.build(ctx).build(persona.persona_id, reader.day, index)
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
    from envpipeline.worlds.delta import apply_ops

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
