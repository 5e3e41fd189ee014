"""What a task template writes with: its `Context`, the `TaskBuilder` and the criterion predicates.

A template reads the day through `Context` (the `WorldReader`, the persona, a seeded rng) and
describes its task sub-task by sub-task on a `TaskBuilder`: ``sub`` (the next sub-task and its
hint), ``step`` (a scripted-solution step), ``crit`` (a criterion and its checklist item) and
``expect`` (what the state-diff judge should find). ``eq``, ``has`` and ``new_order_mention`` are
the conditions criteria are made of. `TaskBuilder.build` turns it into a `WorldTask` whose id
hashes its content.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from typing import Any, TypeGuard, get_args

from envpipeline.errors import ConfigError
from envpipeline.models.task import Condition
from envpipeline.models.world import Contact, Operation, Persona
from envpipeline.models.world_task import (
    ChecklistItem,
    CriterionKind,
    Expectation,
    Interface,
    Mention,
    Step,
    SubTask,
    WorldCriterion,
    WorldTask,
)
from envpipeline.worlds.allowance import distractor_values, guard_criteria
from envpipeline.worlds.schema import day_date
from envpipeline.worlds.state import WorldReader

INTERFACES: tuple[Interface, ...] = get_args(Interface)


def eq(value: Any) -> Condition:
    """An equality condition."""
    return Condition(op="eq", value=value)


def has(value: Any) -> Condition:
    """A substring condition."""
    return Condition(op="contains", value=value)


def to(*addresses: str) -> Condition:
    """A recipients condition: exactly these addresses (a copy to anyone else fails)."""
    return Condition(op="addresses", value=", ".join(addresses))


def new_order_mention(sku: str) -> Mention:
    """The order_number of a newly placed order holding `sku`."""
    return Mention(app="shop", table="orders", column="order_number", where={"items_json": has(sku)})


def is_interface(name: str) -> TypeGuard[Interface]:
    """Whether `name` is one of the three interfaces (mcp, cli, web)."""
    return name in INTERFACES


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
        return day_date(self.day).isoformat()

    def products(self, min_stock: int = 2) -> list[dict[str, Any]]:
        """In-stock products, by id."""
        return self.reader.query("shop", "SELECT * FROM products WHERE stock >= ? ORDER BY id", [min_stock])

    def contacts(self, *relations: str) -> list[Contact]:
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
    subtask_of: list[int] = field(default_factory=list)

    def sub(self, interface: Interface, description: str, hint: str) -> int:
        """Add the next sub-task; returns its index."""
        self.subtasks.append(
            SubTask(index=len(self.subtasks), interface=interface, description=description, hint=hint)
        )
        return len(self.subtasks) - 1

    def step(self, action: str, **args: Any) -> None:
        """A scripted-solution step of the latest sub-task (`action` is ``interface.verb``)."""
        interface, _ = action.split(".", 1)
        if not is_interface(interface):
            raise ConfigError(f"step {action!r}: the interface must be one of {', '.join(INTERFACES)}")
        self.steps.append(Step(subtask=len(self.subtasks) - 1, interface=interface, action=action, args=args))

    def crit(self, kind: CriterionKind, description: str, weight: float = 1.0, **spec: Any) -> str:
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
        self.subtask_of.append(len(self.subtasks) - 1)
        return cid

    def expect(self, app: str, *tokens: str, table: str | None = None, path: str | None = None) -> None:
        """What the state-diff judge should find (tokens in an added/changed row or file)."""
        self.expectations.append(Expectation(app=app, table=table, path=path, tokens=list(tokens)))

    def build(self, persona_id: str, day: int, index: int) -> WorldTask:
        """The finished task (its id hashes everything but the id)."""
        flow: list[Interface] = [s.interface for s in self.subtasks]
        criteria, checklist = list(self.criteria), list(self.checklist)
        forbidden = distractor_values(self.steps, self.facts)
        for guard, _ in guard_criteria(self.criteria, self.subtask_of, flow, forbidden):
            criteria.append(guard)
            checklist.append(
                ChecklistItem(
                    id=f"k{len(checklist) + 1}",
                    description=guard.description,
                    weight=1.0,
                    criteria=[guard.id],
                )
            )
        body = {
            "persona_id": persona_id,
            "day": day,
            "index": index,
            "template": self.template,
            "instruction": self.instruction,
            "interface_flow": flow,
            "setup": self.setup,
            "criteria": criteria,
            "checklist": checklist,
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
