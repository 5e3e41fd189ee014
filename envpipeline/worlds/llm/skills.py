"""LLM event-creation skills: proposed as data, run as a `Skill`, admitted only through execution.

The model proposes skills in the paper's shape ("each scenario specifies the state changes in one
application"): a name, the apps it declares and a list of operations on the world's app tables
and home files, with placeholders (`PLACEHOLDERS`) filled when the skill runs. A proposal that
fails validation (unknown app, table or column, a placeholder that does not exist, a scenario
outside the declared apps, a name that is taken) goes back to the model with the errors.

`skill_gate` then runs a valid proposal the way the world builder would, on a probe persona's
fresh world, on two consecutive days: the delta must lint clean against the previous day, apply,
touch exactly the declared apps (declaration check), pass the rule-based reviewer, keep the world
invariants (no negative balance or stock) and replay to the same hash. Only a skill that passes
every step joins the library handed to the planner.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import tempfile
from pathlib import Path
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from envpipeline.errors import ConfigError
from envpipeline.llm.protocol import LLM
from envpipeline.models.gates import GateResult
from envpipeline.models.world import Activity, Operation, OpKind, Persona, WorldDelta
from envpipeline.worlds.build import check_declaration, review_rules
from envpipeline.worlds.delta import apply_delta, lint_delta
from envpipeline.worlds.genesis import create_day0
from envpipeline.worlds.llm.prompts import schema_text, skill_messages
from envpipeline.worlds.llm.structured import StructuredResult, ask_structured
from envpipeline.worlds.schema import ALL_APPS, FILES_APP, SCHEMA, stamp
from envpipeline.worlds.skills.base import Skill, at_day, code, contact, money
from envpipeline.worlds.state import WorldReader, day_path, world_hash, write_manifest

#: Placeholders a proposed skill may use, and what fills them.
PLACEHOLDERS: dict[str, str] = {
    "name": "the persona's full name",
    "first": "the persona's first name",
    "email": "the persona's e-mail address",
    "city": "the persona's city",
    "occupation": "the persona's occupation",
    "contact_name": "a contact's name",
    "contact_email": "that contact's e-mail",
    "contact_handle": "that contact's DM/chat handle",
    "at": "the activity's time stamp (today)",
    "date": "today's ISO date",
    "future": "a time stamp a few days ahead (for events and departures)",
    "future_end": "one hour after {future}",
    "code": "a code unique in the world (e.g. KQX071)",
    "amount": "an amount in cents (integer; '-{amount}' for its negative)",
    "amount_text": "the same amount as 12.34",
}
_TOKEN = re.compile(r"\{([a-z_]+)\}")
_INT_PLACEHOLDER = re.compile(r"^-?\{amount\}$")


class ScenarioDraft(BaseModel):
    """One state change in one application."""

    model_config = ConfigDict(extra="forbid")

    app: str
    table: str | None = None
    op: OpKind
    values: dict[str, Any] = {}
    where: dict[str, Any] = {}
    path: str | None = None
    content: str | None = None


class SkillDraft(BaseModel):
    """A proposed event-creation skill."""

    model_config = ConfigDict(extra="forbid")

    name: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{2,40}$")]
    summary: Annotated[str, Field(min_length=8, description="what the persona does, e.g. 'pays the gym fee'")]
    apps: Annotated[list[str], Field(min_length=1)]
    scenarios: Annotated[list[ScenarioDraft], Field(min_length=1, max_length=12)]


class SkillProposals(BaseModel):
    """The model's answer: the proposed skills."""

    model_config = ConfigDict(extra="forbid")

    skills: Annotated[list[SkillDraft], Field(min_length=1)]


def _placeholders_in(value: Any) -> set[str]:
    if isinstance(value, str):
        return set(_TOKEN.findall(value))
    if isinstance(value, dict):
        return {t for v in value.values() for t in _placeholders_in(v)}
    if isinstance(value, list):
        return {t for v in value for t in _placeholders_in(v)}
    return set()


def draft_problems(draft: SkillDraft, taken: set[str]) -> list[str]:
    """Static problems of one proposal (named by skill and scenario index)."""
    where = f"skill {draft.name!r}"
    problems = []
    if draft.name in taken:
        problems.append(f"{where}: the name is taken by an existing skill")
    unknown_apps = [a for a in draft.apps if a not in ALL_APPS]
    if unknown_apps:
        problems.append(f"{where}: unknown apps {unknown_apps}; the apps are {list(ALL_APPS)}")
    for n, s in enumerate(draft.scenarios):
        at = f"{where} scenario {n}"
        if s.app not in ALL_APPS:
            problems.append(f"{at}: unknown app {s.app!r}")
            continue
        if s.app not in draft.apps:
            problems.append(f"{at}: app {s.app!r} is not in the skill's apps {draft.apps}")
        if s.app == FILES_APP:
            if s.op not in ("write_file", "append_file") or not s.path or s.content is None:
                problems.append(f"{at}: a files scenario is write_file/append_file with path and content")
        else:
            columns = SCHEMA[s.app].get(s.table or "")
            if columns is None:
                problems.append(
                    f"{at}: unknown table {s.table!r} in app {s.app!r} (tables: {sorted(SCHEMA[s.app])})"
                )
            else:
                bad = [c for c in [*s.values, *s.where] if c not in columns and c != "id"]
                if bad:
                    problems.append(f"{at}: unknown columns {bad} of {s.app}/{s.table}")
        unknown = sorted(_placeholders_in([s.values, s.where, s.path, s.content]) - set(PLACEHOLDERS))
        if unknown:
            problems.append(f"{at}: unknown placeholders {unknown}")
    unused = sorted(set(draft.apps) - {s.app for s in draft.scenarios})
    if unused:
        problems.append(f"{where}: declares apps {unused} that no scenario touches")
    return problems


def _fill(value: Any, slots: dict[str, str]) -> Any:
    if isinstance(value, str):
        if _INT_PLACEHOLDER.match(value):
            return int(slots["amount"]) * (-1 if value.startswith("-") else 1)
        return _TOKEN.sub(lambda m: slots.get(m.group(1), m.group(0)), value)
    if isinstance(value, dict):
        return {k: _fill(v, slots) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, slots) for v in value]
    return value


class DeclarativeSkill(Skill):
    """A skill whose operations come from a validated proposal (placeholders filled per run)."""

    name: ClassVar[str] = "declarative"
    apps: ClassVar[tuple[str, ...]] = ()
    summary: ClassVar[str] = ""

    def __init__(self, draft: SkillDraft) -> None:
        self.draft = draft
        # instance attributes shadow the ClassVars the planner and the declaration check read
        self.name = draft.name  # type: ignore[misc]
        self.apps = tuple(draft.apps)  # type: ignore[misc]
        self.summary = draft.summary  # type: ignore[misc]

    def slots(self, persona: Persona, rng: random.Random, day: int, slot: int) -> dict[str, str]:
        """The placeholder values of one run."""
        friend = contact(persona, rng)
        future = at_day(day + rng.randint(2, 6), rng.choice([9, 11, 14, 16]))
        amount = rng.randint(5, 80) * 100
        return {
            "name": persona.name,
            "first": persona.name.split()[0],
            "email": persona.email,
            "city": persona.city,
            "occupation": persona.occupation,
            "contact_name": friend.name,
            "contact_email": friend.email,
            "contact_handle": friend.handle,
            "at": stamp(day, slot),
            "date": stamp(day, slot)[:10],
            "future": future,
            "future_end": _plus_hour(future),
            "code": code(rng, 3, day, slot),
            "amount": str(amount),
            "amount_text": money(amount),
        }

    def plan(
        self, persona: Persona, reader: WorldReader, rng: random.Random, day: int, slot: int = 0
    ) -> list[Operation]:
        """The proposal's scenarios with this run's placeholder values."""
        slots = self.slots(persona, rng, day, slot)
        return [
            Operation(
                app=s.app,
                table=s.table,
                op=s.op,
                values=_fill(s.values, slots),
                where=_fill(s.where, slots),
                path=_fill(s.path, slots),
                content=_fill(s.content, slots),
            )
            for s in self.draft.scenarios
        ]

    def available(self, persona: Persona, reader: WorldReader) -> bool:
        """Today's run would lint clean on this world and keep balances and stock non-negative."""
        day = reader.day + 1
        ops = self.plan(
            persona, reader, random.Random(f"{persona.persona_id}:{day}:available:{self.name}"), day
        )
        delta = _delta(persona, self, day, ops)
        return not lint_delta(delta, reader) and not _would_go_negative(ops, reader)


def _plus_hour(iso: str) -> str:
    hour = int(iso[11:13]) + 1
    return f"{iso[:11]}{hour:02d}{iso[13:]}"


def _delta(persona: Persona, skill: Skill, day: int, ops: list[Operation]) -> WorldDelta:
    activity = Activity(
        index=0, skill=skill.name, apps=list(skill.apps), description=skill.summary, time=stamp(day, 0)
    )
    return WorldDelta(persona_id=persona.persona_id, day=day, activities=[activity], ops=ops)


#: (app, table) -> the integer column that must never go negative.
NON_NEGATIVE: dict[tuple[str, str], str] = {
    ("bank", "accounts"): "balance_cents",
    ("shop", "products"): "stock",
}


def _would_go_negative(ops: list[Operation], reader: WorldReader) -> bool:
    for op in ops:
        column = NON_NEGATIVE.get((op.app, op.table or ""))
        marker = op.values.get(column) if column else None
        if op.op != "update" or not isinstance(marker, dict) or not isinstance(marker.get("$add"), int):
            continue
        cols = sorted(op.where)
        if not cols or any(isinstance(op.where[c], dict) for c in cols):
            continue
        sql = f'SELECT "{column}" AS v FROM "{op.table}" WHERE ' + " AND ".join(f'"{c}" = ?' for c in cols)
        if any(r["v"] + marker["$add"] < 0 for r in reader.query(op.app, sql, [op.where[c] for c in cols])):
            return True
    return False


def world_invariants(day_dir: Path) -> list[str]:
    """Balances and stock that went negative (the rule-based reviewer checks the rest)."""
    reader = WorldReader(day_dir)
    out = []
    for (app, table), column in NON_NEGATIVE.items():
        for row in reader.query(app, f'SELECT id, "{column}" AS v FROM "{table}" WHERE "{column}" < 0'):
            out.append(f"{app}/{table} {row['id']} has negative {column} {row['v']}")
    return out


def skill_gate(skill: DeclarativeSkill, persona: Persona, days: int = 2) -> GateResult:
    """Run `skill` on a fresh world of `persona` for `days` days; every world check must pass."""
    problems: list[str] = []
    hashes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="wildawm-skill-") as tmp:
        for attempt in range(2):  # the second pass is the replay
            world = Path(tmp) / f"run-{attempt}"
            create_day0(persona, day_path(world, 0))
            write_manifest(day_path(world, 0), persona.persona_id, 0)
            for day in range(1, days + 1):
                previous, today = day_path(world, day - 1), day_path(world, day)
                reader = WorldReader(previous)
                rng = random.Random(f"{persona.persona_id}:{day}:0:{skill.name}")
                try:
                    delta = _delta(persona, skill, day, skill.plan(persona, reader, rng, day, 0))
                except (ConfigError, ValueError, KeyError) as exc:
                    problems.append(f"day {day}: the skill cannot plan: {exc}")
                    break
                lint = lint_delta(delta, reader)
                if lint:
                    problems += [f"day {day}: lint: {p}" for p in lint]
                    break
                try:
                    apply_delta(today, delta)
                except Exception as exc:  # sqlite constraint errors and bad file ops alike
                    problems.append(f"day {day}: the delta does not apply: {exc}")
                    break
                for check in (check_declaration(previous, today, delta), review_rules(today, day)):
                    if not check.passed:
                        problems.append(f"day {day}: {check.name}: {check.reason}")
                problems += [f"day {day}: invariant: {p}" for p in world_invariants(today)]
                hashes.append(world_hash(today))
            if problems:
                break
            shutil.rmtree(world, ignore_errors=True)
    if not problems and hashes[:days] != hashes[days:]:
        problems.append("replay: two runs from scratch give different hashes")
    return GateResult(
        name="skill_gate",
        passed=not problems,
        reason="; ".join(problems) or f"applies cleanly on {days} consecutive days and replays identically",
        evidence={"skill": skill.name, "apps": list(skill.apps), "problems": problems},
    )


def propose_skills(
    llm: LLM,
    n: int,
    probe: Persona,
    *,
    existing: dict[str, Skill],
    max_repairs: int = 2,
) -> tuple[dict[str, DeclarativeSkill], list[dict[str, Any]], StructuredResult[SkillProposals]]:
    """Ask for `n` skills, validate them (with repairs) and gate each on `probe`'s world.

    Returns (admitted skills by name, one record per proposal — name, admitted, reason —, the
    structured request record).

    Raises:
        LLMError: the endpoint failed after the client's retries.
    """
    taken = set(existing)

    def check(answer: SkillProposals) -> list[str]:
        names = [s.name for s in answer.skills]
        dupes = sorted({x for x in names if names.count(x) > 1})
        problems = [f"skills: the names {dupes} repeat"] if dupes else []
        return problems + [p for s in answer.skills for p in draft_problems(s, taken)]

    tables = {app: SCHEMA[app] for app in SCHEMA}
    messages = skill_messages(
        schema_text(SkillProposals),
        {name: s.summary for name, s in sorted(existing.items())},
        tables,
        sorted(PLACEHOLDERS),
        n,
    )
    result = ask_structured(
        llm, messages, SkillProposals, stage="skills", check=check, max_repairs=max_repairs
    )
    admitted: dict[str, DeclarativeSkill] = {}
    records: list[dict[str, Any]] = []
    for draft in result.value.skills if result.value else []:
        skill = DeclarativeSkill(draft)
        gate = skill_gate(skill, probe)
        records.append(
            {
                "name": draft.name,
                "admitted": gate.passed,
                "reason": gate.reason,
                "draft": json.loads(draft.model_dump_json()),
            }
        )
        if gate.passed:
            admitted[draft.name] = skill
    return admitted, records, result
