"""The task-family plug-in: knobs with difficulty presets, a generator, solution variants.

A family module defines a `TaskFamily[ItsKnobs]` subclass and ends with
`register_family(Family())`. The family implements `build(rng, knobs, seed)`, which returns the
`TaskParts` only it knows: instruction, environment (Dockerfile + fixtures under ``app/``), tests
(``test.sh`` + checks, see `_script_kit`) and solutions — the oracle plus partial variants that
miss specific edge cases (they must score below 1). `generate(seed, knobs, difficulty)` is the
same for every family: it checks the knobs, derives the rng from (family, seed), draws which edge
cases the instance contains, calls `build` and returns a complete, synchronized `GeneratedTask`.
Knobs declare an ``axis`` (``depth``: harder reasoning per item; ``breadth``: more items/cases)
so synthesis actions can move them while keeping the family's skills.

Edge cases are what make a task hard: each partial variant misses exactly one, named like it.
An instance contains each edge case with a probability set by the knobs (`presence_probability`:
from ``EDGE_CASE_FLOOR`` with every knob at its minimum to ``EDGE_CASE_CEILING`` at its maximum),
drawn from a stream of its own (family, seed, "edge-cases") so that the same seed at higher knobs
contains a superset of the edge cases. `build` plants exactly the present ones and keeps the
absent ones out of the fixtures: a partial variant scores 1 on an instance without its edge case
and below 1 on one with it, so a solution that handles only some edge cases passes some instances
and fails others. Synthesis may fix the set explicitly (`generate(..., edge_cases=...)`).
A family's `SolverProgram` writes a solution missing any subset of its edge cases.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any, ClassVar, Generic, Literal, TypeVar, final

from pydantic import BaseModel, ConfigDict, Field

from envpipeline.errors import ConfigError
from envpipeline.models.bundle import Difficulty, MetadataSection, TaskConfig, VerifierSection
from envpipeline.sandbox.base import BASE_IMAGE
from envpipeline.terminal.bundle import dump_task_config, write_files
from envpipeline.terminal.families._script_kit import SolverProgram

DIFFICULTIES: tuple[Difficulty, ...] = ("easy", "medium", "hard")

STANDARD_DOCKERFILE = f"""FROM {BASE_IMAGE}
WORKDIR /app
COPY app/ /app/
"""

#: The verifier entry point every family uses: run the checks, write the reward file.
STANDARD_TEST_SH = """#!/bin/bash
# Verifier entry point: runs the checks and writes the reward file (1 = all checks pass).
mkdir -p /logs/verifier
if python3 /tests/test_outputs.py > /logs/verifier/test-stdout.txt 2>&1; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""


#: Chance that an instance contains a given edge case with every knob at its minimum ...
EDGE_CASE_FLOOR = 0.15
#: ... and with every knob at its maximum.
EDGE_CASE_CEILING = 0.95

EdgeCaseAxis = Literal["depth", "breadth"]


class Knobs(BaseModel):
    """Base of a family's knob model; every field needs an `axis` in json_schema_extra."""

    model_config = ConfigDict(extra="forbid")


def knob(default: int, low: int, high: int, axis: Literal["depth", "breadth"], description: str) -> Any:
    """A bounded integer knob on one axis."""
    return Field(default, ge=low, le=high, description=description, json_schema_extra={"axis": axis})


K = TypeVar("K", bound=Knobs)


class TaskParts(BaseModel):
    """What only the family knows about one task: its files, keyed by path relative to their folder."""

    model_config = ConfigDict(extra="forbid")

    instruction: Annotated[str, Field(description="instruction.md text")]
    environment: Annotated[dict[str, str], Field(description="files under environment/")]
    tests: Annotated[dict[str, str], Field(description="files under tests/")]
    solutions: Annotated[
        dict[str, dict[str, str]] | None,
        Field(description="variant -> files under solution/ (derived from `solver` when omitted)"),
    ] = None
    solver: Annotated[
        SolverProgram | None, Field(description="writes a solution missing any subset of the edge cases")
    ] = None


class GeneratedTask(BaseModel):
    """Everything a bundle needs, as files keyed by path relative to their folder."""

    model_config = ConfigDict(extra="forbid")

    family: Annotated[str, Field(description="family name")]
    name: Annotated[str, Field(description="bundle name, [A-Za-z0-9_-]")]
    seed: Annotated[int, Field(description="generator seed")]
    difficulty: Annotated[Difficulty, Field(description="preset the knobs came from")]
    knobs: Annotated[dict[str, Any], Field(description="knob values used")]
    skills: Annotated[list[str], Field(description="skill nodes the task exercises")]
    category: Annotated[str, Field(description="task category")]
    instruction: Annotated[str, Field(description="instruction.md text")]
    environment: Annotated[dict[str, str], Field(description="files under environment/")]
    tests: Annotated[dict[str, str], Field(description="files under tests/")]
    solutions: Annotated[dict[str, dict[str, str]], Field(description="variant -> files under solution/")]
    edge_cases: Annotated[list[str], Field(description="edge cases this instance contains (sorted)")] = []
    solver: Annotated[
        SolverProgram | None, Field(description="writes a solution missing any subset of the edge cases")
    ] = None

    def solution_missing(self, missed: set[str] | frozenset[str]) -> dict[str, str]:
        """The solution files of a solver that handles every edge case except `missed`."""
        unknown = set(missed) - (set(self.solutions) - {"oracle"})
        if unknown:
            raise ConfigError(f"family {self.family} has no edge cases {sorted(unknown)}")
        if self.solver is not None:
            return self.solver.solution(missed)
        if not missed:
            return self.solutions["oracle"]
        if len(missed) == 1:
            return self.solutions[next(iter(missed))]
        raise ConfigError(f"family {self.family} cannot combine partial variants {sorted(missed)}")


class TaskFamily(ABC, Generic[K]):
    """One procedural family of terminal tasks, whose knobs are a `K`."""

    name: ClassVar[str]
    category: ClassVar[str]
    description: ClassVar[str]
    skills: ClassVar[list[str]]
    #: the family's knob model (a class attribute of every family)
    knob_model: type[K]
    presets: ClassVar[dict[str, dict[str, int]]]
    #: partial solution variants (the oracle is always "oracle"); each misses the edge case it names
    variants: ClassVar[tuple[str, ...]]
    #: the axis of each edge case: synthesis in_depth adds/removes depth ones, in_breadth breadth ones
    edge_case_axes: ClassVar[dict[str, EdgeCaseAxis]] = {}

    def knobs_for(self, difficulty: Difficulty, **overrides: Any) -> K:
        """The knob values of a difficulty preset, with overrides."""
        return self.knob_model(**{**self.presets[difficulty], **overrides})

    def knob_position(self, knobs: Knobs | dict[str, Any]) -> float:
        """Mean normalized knob position in [0, 1] (0 = every knob at its minimum)."""
        values = knobs.model_dump() if isinstance(knobs, Knobs) else knobs
        positions = []
        for name, prop in self.knob_model.model_json_schema()["properties"].items():
            low, high = int(prop.get("minimum", 0)), int(prop.get("maximum", 1))
            if high > low and name in values:
                positions.append((float(values[name]) - low) / (high - low))
        return sum(positions) / len(positions) if positions else 0.5

    def presence_probability(self, knobs: Knobs | dict[str, Any]) -> float:
        """Chance that an instance with these knobs contains any one edge case."""
        return EDGE_CASE_FLOOR + (EDGE_CASE_CEILING - EDGE_CASE_FLOOR) * self.knob_position(knobs)

    def draw_edge_cases(self, seed: int, knobs: Knobs | dict[str, Any]) -> frozenset[str]:
        """The edge cases an instance contains: one uniform draw per edge case from the stream
        (family, seed, "edge-cases"), present when below `presence_probability` (so raising a knob
        only adds edge cases to the same seed)."""
        rng = random.Random(f"{self.name}:{seed}:edge-cases")
        threshold = self.presence_probability(knobs)
        return frozenset(v for v in self.variants if rng.random() < threshold)

    @final
    def generate(
        self, seed: int, knobs: Knobs, difficulty: Difficulty, edge_cases: Iterable[str] | None = None
    ) -> GeneratedTask:
        """Build one task deterministically from `seed`, `knobs` and its edge cases (drawn from the
        seed and knobs unless given; ConfigError: knobs of another family or unknown edge cases)."""
        if not isinstance(knobs, self.knob_model):
            raise ConfigError(
                f"family {self.name} needs {self.knob_model.__name__} knobs, got {type(knobs).__name__}; "
                f"use knobs_for(difficulty) or {self.knob_model.__name__}(...)"
            )
        present = self.draw_edge_cases(seed, knobs) if edge_cases is None else frozenset(edge_cases)
        unknown = present - set(self.variants)
        if unknown:
            raise ConfigError(
                f"family {self.name} has no edge cases {sorted(unknown)}; known: {', '.join(self.variants)}"
            )
        parts = self.build(self.rng(seed), knobs, seed, present)
        solutions = parts.solutions
        if solutions is None:
            if parts.solver is None:
                raise ConfigError(f"family {self.name} built a task with neither solutions nor a solver")
            solutions = parts.solver.solutions(self.variants)
        return GeneratedTask(
            family=self.name,
            name=f"{self.name}-{seed}-{difficulty}",
            seed=seed,
            difficulty=difficulty,
            knobs=knobs.model_dump(),
            skills=list(self.skills),
            category=self.category,
            instruction=parts.instruction,
            environment=parts.environment,
            tests=parts.tests,
            solutions=solutions,
            edge_cases=sorted(present),
            solver=parts.solver,
        )

    @abstractmethod
    def build(self, rng: random.Random, knobs: K, seed: int, edge_cases: frozenset[str]) -> TaskParts:
        """The family's parts of one task, every random draw taken from `rng`.

        Args:
            rng: the task's own generator, derived from (family, seed).
            knobs: the validated knob values.
            seed: the generator seed, only for text that names it (never as a source of randomness).
            edge_cases: the edge cases (variant names) the instance must contain; every other one
                must be absent, so that the variant missing it scores 1 here.
        """

    def rng(self, seed: int) -> random.Random:
        """The task's own random generator, derived from (family, seed)."""
        return random.Random(f"{self.name}:{seed}")


def task_config(task: GeneratedTask, variant: str) -> TaskConfig:
    """The task.toml of a generated task with its provenance."""
    return TaskConfig(
        metadata=MetadataSection(
            author_name="envpipeline",
            author_email="envpipeline@localhost",
            difficulty=task.difficulty,
            category=task.category,
            tags=[task.family, *task.skills],
            envpipeline={
                "family": task.family,
                "seed": task.seed,
                "knobs": task.knobs,
                "edge_cases": task.edge_cases,
                "variant": variant,
            },
        ),
        verifier=VerifierSection(timeout_sec=60.0),
    )


def write_generated(task: GeneratedTask, out: Path, variant: str = "oracle") -> Path:
    """Write a generated task as a Harbor bundle whose solution is `variant`."""
    if variant not in task.solutions:
        raise ConfigError(f"family {task.family} has no variant '{variant}'; known: {sorted(task.solutions)}")
    out.mkdir(parents=True, exist_ok=True)
    files: dict[str, str | bytes] = {"task.toml": dump_task_config(task_config(task, variant))}
    files["instruction.md"] = task.instruction
    files |= {f"environment/{k}": v for k, v in task.environment.items()}
    files |= {f"tests/{k}": v for k, v in task.tests.items()}
    files |= {f"solution/{k}": v for k, v in task.solutions[variant].items()}
    write_files(out, files)
    return out
