"""WildAWM world models: personas, day plans, deltas (operations as data) and verification records.

Pure pydantic, no I/O. Every model forbids unknown fields; a day's checks are `GateResult`s.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from envpipeline.models.gates import GateResult

OpKind = Literal["insert", "update", "delete", "write_file", "append_file"]


class WorldModel(BaseModel):
    """Base of every world model: unknown fields are an error."""

    model_config = ConfigDict(extra="forbid")


class Contact(WorldModel):
    """Someone the persona writes to: by email, by DM (handle) and in chat."""

    name: str
    email: str
    handle: Annotated[str, Field(description="DM peer / chat author name, e.g. maja.k")]
    relation: Annotated[str, Field(description="colleague, friend, client, family ...")]


class StoryArc(WorldModel):
    """A narrative thread that the planner advances one skill at a time."""

    name: Annotated[str, Field(description="stable arc id, e.g. conference-trip")]
    description: str
    skills: Annotated[list[str], Field(description="skill names, in story order")]


class Persona(WorldModel):
    """A synthetic computer user; everything is derived from (seed, index, revision)."""

    persona_id: Annotated[str, Field(pattern=r"^[a-z0-9-]+$", description="e.g. p01-lars-petersen")]
    name: str
    username: Annotated[str, Field(description="login name, e.g. lars.petersen")]
    email: str
    password: Annotated[str, Field(description="day-00 password (stored only as a fixed-salt hash)")]
    occupation: str
    city: str
    description: Annotated[str, Field(description="the persona text the diversity judge compares")]
    contacts: list[Contact]
    favourite_sites: list[str]
    core_tools: Annotated[list[str], Field(description="apps this persona relies on, sorted")]
    arcs: list[StoryArc]
    seed: int
    index: int
    revision: Annotated[int, Field(ge=0, description="judge-driven revisions before acceptance")] = 0


class JudgeVerdict(WorldModel):
    """The diversity judge's answer for one candidate."""

    accepted: bool
    feedback: Annotated[str, Field(description="diagnostic text for the next revision ('' if accepted)")]
    similarity: Annotated[float, Field(description="max Jaccard similarity to an accepted persona")]
    nearest: Annotated[str | None, Field(description="persona_id of the most similar accepted one")] = None
    repeats: Annotated[
        dict[str, list[str]],
        Field(description="what was repeated: occupation / core_tools / arcs -> values to exclude"),
    ] = {}


class Operation(WorldModel):
    """One state change, as data. Apps: the SQLite apps plus the pseudo-app `files` (home/).

    Values may hold two markers resolved by `apply_delta`: ``{"$add": n}`` (update: add n to the
    column) and ``{"$last_id": "table"}`` (the id of the last row this delta inserted there).
    """

    app: str
    table: str | None = None
    op: OpKind
    values: dict[str, Any] = {}
    where: Annotated[dict[str, Any], Field(description="column -> value equality (AND)")] = {}
    path: Annotated[str | None, Field(description="file ops: path relative to home/")] = None
    content: str | None = None
    activity: Annotated[int, Field(ge=0, description="index of the activity that produced it")] = 0


class Activity(WorldModel):
    """One planned activity of a day, mapped to a skill."""

    index: int
    skill: str
    apps: Annotated[list[str], Field(description="apps the skill declares it touches")]
    description: str
    arc: Annotated[str | None, Field(description="story arc this step advances")] = None
    reason: Annotated[str, Field(description="arc / follow-up / balance")] = "balance"
    time: Annotated[str, Field(description="frozen ISO start time of the activity")]


class DayPlan(WorldModel):
    """A day's activities plus the cumulative per-app usage histogram after it."""

    persona_id: str
    day: int
    activities: list[Activity]
    app_usage: dict[str, int]


class WorldDelta(WorldModel):
    """What turns day d-1 into day d (stored as delta.json)."""

    persona_id: str
    day: int
    activities: list[Activity]
    ops: list[Operation]


class DaySnapshot(WorldModel):
    """One materialized day and its checks."""

    day: int
    hash: str
    touched_apps: list[str]
    declared_apps: list[str]
    skills: list[str] = []
    checks: list[GateResult]

    @property
    def passed(self) -> bool:
        """Every check passed."""
        return all(c.passed for c in self.checks)


class WorldBuild(WorldModel):
    """A persona's whole world: day 00..D with the checks of each day."""

    persona_id: str
    root: Annotated[str, Field(description="folder holding day-00..day-D")] = ""
    days: list[DaySnapshot]

    @property
    def passed(self) -> bool:
        """Every day passed every check."""
        return all(d.passed for d in self.days)
