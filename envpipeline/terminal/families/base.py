"""The task-family plug-in: knobs with difficulty presets, a generator, solution variants.

A family module defines a `TaskFamily[ItsKnobs]` subclass and ends with
`register_family(Family())`. The family implements `build(rng, knobs, seed)`, which returns the
`TaskParts` only it knows: instruction, environment (Dockerfile + fixtures under ``app/``), tests
(``test.sh`` + checks, see `_script_kit`) and solutions — the oracle plus partial variants that
miss specific edge cases (they must score below 1). `generate(seed, knobs, difficulty)` is the
same for every family: it checks the knobs, derives the rng from (family, seed), calls `build`
and returns a complete, synchronized `GeneratedTask`.
Knobs declare an ``axis`` (``depth``: harder reasoning per item; ``breadth``: more items/cases)
so synthesis actions can move them while keeping the family's skills.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Annotated, Any, ClassVar, Generic, Literal, TypeVar, final

from pydantic import BaseModel, ConfigDict, Field

from envpipeline.errors import ConfigError
from envpipeline.models.bundle import Difficulty, MetadataSection, TaskConfig, VerifierSection
from envpipeline.sandbox.base import BASE_IMAGE
from envpipeline.terminal.bundle import dump_task_config, write_files

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
    solutions: Annotated[dict[str, dict[str, str]], Field(description="variant -> files under solution/")]


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


class TaskFamily(ABC, Generic[K]):
    """One procedural family of terminal tasks, whose knobs are a `K`."""

    name: ClassVar[str]
    category: ClassVar[str]
    description: ClassVar[str]
    skills: ClassVar[list[str]]
    #: the family's knob model (a class attribute of every family)
    knob_model: type[K]
    presets: ClassVar[dict[str, dict[str, int]]]
    #: partial solution variants (the oracle is always "oracle")
    variants: ClassVar[tuple[str, ...]]

    def knobs_for(self, difficulty: Difficulty, **overrides: Any) -> K:
        """The knob values of a difficulty preset, with overrides."""
        return self.knob_model(**{**self.presets[difficulty], **overrides})

    @final
    def generate(self, seed: int, knobs: Knobs, difficulty: Difficulty) -> GeneratedTask:
        """Build one task deterministically from `seed` and `knobs` (ConfigError: knobs of another family)."""
        if not isinstance(knobs, self.knob_model):
            raise ConfigError(
                f"family {self.name} needs {self.knob_model.__name__} knobs, got {type(knobs).__name__}; "
                f"use knobs_for(difficulty) or {self.knob_model.__name__}(...)"
            )
        parts = self.build(self.rng(seed), knobs, seed)
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
            solutions=parts.solutions,
        )

    @abstractmethod
    def build(self, rng: random.Random, knobs: K, seed: int) -> TaskParts:
        """The family's parts of one task, every random draw taken from `rng`.

        Args:
            rng: the task's own generator, derived from (family, seed).
            knobs: the validated knob values.
            seed: the generator seed, only for text that names it (never as a source of randomness).
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
            envpipeline={"family": task.family, "seed": task.seed, "knobs": task.knobs, "variant": variant},
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
