"""WildAWM world core: personas + diversity judge, skills contract, deltas, hashing, build checks."""

from __future__ import annotations

import hashlib
import json
import random
import sqlite3
from pathlib import Path

import pytest

from envpipeline.errors import ConfigError
from envpipeline.models.world import DayPlan, JudgeVerdict, Operation, Persona, WorldDelta
from envpipeline.worlds.build import build_world, check_declaration
from envpipeline.worlds.delta import apply_delta, apply_ops, lint_delta
from envpipeline.worlds.genesis import create_day0
from envpipeline.worlds.personas import DiversityJudge, generate_persona, propose_personas
from envpipeline.worlds.planner import plan_day, plan_to_delta
from envpipeline.worlds.schema import (
    FIXED_SALT,
    RECORD_TIME_COLUMNS,
    day_date,
    password_hash,
    stamp,
)
from envpipeline.worlds.skills.base import Skill, ins, write
from envpipeline.worlds.skills.registry import all_skills, get_skill, register_skill
from envpipeline.worlds.state import WorldReader, canonical_dump, day_path, diff, touched_apps, world_hash

SEED = 11


@pytest.fixture(scope="module")
def persona() -> Persona:
    return generate_persona(SEED, 0)


def fresh_world(persona: Persona, root: Path) -> Path:
    world = root / persona.persona_id
    create_day0(persona, day_path(world, 0))
    return world


def run_skill(persona: Persona, world: Path, day: int, skill: Skill) -> WorldDelta:
    """Apply one activity of `skill` as day `day` on top of day-1."""
    reader = WorldReader(day_path(world, day - 1))
    assert skill.available(persona, reader), f"{skill.name} not available on day {day}"
    plan = DayPlan.model_validate(
        {
            "persona_id": persona.persona_id,
            "day": day,
            "app_usage": {},
            "activities": [
                {
                    "index": 0,
                    "skill": skill.name,
                    "apps": list(skill.apps),
                    "description": "t",
                    "time": stamp(day, 0),
                }
            ],
        }
    )
    delta = plan_to_delta(persona, plan, reader, skills={skill.name: skill})
    apply_delta(day_path(world, day), delta)
    return delta


# --- personas ---------------------------------------------------------------------------------


def test_persona_generation_is_deterministic():
    assert generate_persona(SEED, 3) == generate_persona(SEED, 3)
    assert generate_persona(SEED, 3) != generate_persona(SEED, 4)
    p = generate_persona(SEED, 0)
    assert p.persona_id.startswith("p01-") and len(p.contacts) == 5 and len(p.arcs) == 2
    assert len({c.handle for c in p.contacts}) == 5
    assert propose_personas(3, SEED) == propose_personas(3, SEED)


def test_judge_rejects_repeat_with_feedback_and_revision_is_accepted(persona):
    judge = DiversityJudge(threshold=0.5)
    repeat = generate_persona(SEED, 0).model_copy(update={"persona_id": "p02-copy"})
    verdict = judge.review(repeat, [persona])
    assert not verdict.accepted
    assert persona.occupation in verdict.feedback and "occupation" in verdict.repeats
    assert verdict.similarity == 1.0 and verdict.nearest == persona.persona_id
    revised = generate_persona(SEED, 1, revision=1, exclude=verdict.repeats)
    assert revised.occupation != persona.occupation and revised.revision == 1
    assert judge.review(revised, [persona]).accepted


def test_judge_similarity_threshold(persona):
    other = generate_persona(SEED, 5)
    strict = DiversityJudge(threshold=0.0).review(other, [persona])
    assert not strict.accepted and "too similar" in strict.feedback and strict.similarity > 0


class RejectFirst(DiversityJudge):
    """Rejects every candidate's first attempt (revision 0)."""

    def review(self, candidate, accepted):
        if candidate.revision == 0:
            return JudgeVerdict(
                accepted=False,
                feedback="forced",
                similarity=0.0,
                repeats={"occupation": [candidate.occupation]},
            )
        return super().review(candidate, accepted)


class RejectAll(DiversityJudge):
    def review(self, candidate, accepted):
        return JudgeVerdict(accepted=False, feedback="never", similarity=1.0)


def test_propose_personas_revises_at_most_twice():
    accepted, rejected = propose_personas(2, SEED, judge=RejectFirst())
    assert len(accepted) == 2 and all(p.revision >= 1 for p in accepted)
    assert any(r["revision"] == 0 and r["feedback"] == "forced" for r in rejected)
    accepted, rejected = propose_personas(1, SEED, judge=RejectAll(), max_candidates=3, allow_shortfall=True)
    assert accepted == [] and len(rejected) == 9
    assert max(r["revision"] for r in rejected) == 2
    assert [r["gave_up"] for r in rejected if r["index"] == 0] == [False, False, True]


# --- skills -----------------------------------------------------------------------------------


def test_registry_has_20_skills_and_rejects_duplicates():
    skills = all_skills()
    assert len(skills) >= 20
    assert get_skill("book_flight").apps == ("flights", "mail", "dm", "calendar", "files")
    clone = type(skills["write_journal"])()
    with pytest.raises(ConfigError):
        register_skill(clone)
    with pytest.raises(ConfigError):
        get_skill("no_such_skill")


@pytest.mark.parametrize("name", sorted(all_skills()))
def test_skill_touches_exactly_its_declared_apps(name, persona, tmp_path):
    skill = all_skills()[name]
    world = fresh_world(persona, tmp_path)
    day = 1
    for required in skill.requires:
        run_skill(persona, world, day, get_skill(required))
        day += 1
    delta = run_skill(persona, world, day, skill)
    assert {op.app for op in delta.ops} <= set(skill.apps)
    assert lint_delta(delta, day_path(world, day - 1)) == []
    touched = touched_apps(diff(day_path(world, day - 1), day_path(world, day)))
    assert touched == sorted(skill.apps), f"{name}: declared {skill.apps}, touched {touched}"


# --- deltas, time, ids, hashes ----------------------------------------------------------------


def test_ids_are_max_plus_one(persona, tmp_path):
    world = fresh_world(persona, tmp_path)
    d0 = day_path(world, 0)
    apply_ops(
        d0,
        [
            Operation(app="bank", table="transactions", op="delete", where={"id": 1}),
            ins("bank", "transactions", account_id=2, amount_cents=5, memo="x", posted_at=stamp(0)),
        ],
    )
    ids = [r["id"] for r in WorldReader(d0).query("bank", "SELECT id FROM transactions ORDER BY id")]
    assert ids == [2, 3]  # MAX(id)+1, not COUNT+1


def test_timestamps_frozen_and_password_hash_fixed_salt(persona, tmp_path):
    assert stamp(5, 1) == "2026-03-07T10:30:00" and str(day_date(0)) == "2026-03-02"
    assert password_hash("pw") == hashlib.sha256((FIXED_SALT + "pw").encode()).hexdigest()
    assert FIXED_SALT == "envpipeline-wildawm-salt"
    build = build_world(persona, 3, tmp_path, live_health=False, replay=False)
    world = Path(build.root)
    users = WorldReader(day_path(world, 0)).query("accounts", "SELECT * FROM users")
    assert users == [
        {"id": 1, "username": persona.username, "password_hash": password_hash(persona.password)}
    ]
    for day in range(1, 4):
        d = diff(day_path(world, day - 1), day_path(world, day))
        for (app, table), col in RECORD_TIME_COLUMNS.items():
            for row in d.get(f"{app}/{table}", {}).get("added", []):
                assert row[col].startswith(str(day_date(day))), (app, table, row)


def test_build_world_is_deterministic_and_checks_pass(tmp_path):
    personas, _ = propose_personas(2, SEED)
    runs = []
    for name in ("a", "b"):
        builds = [build_world(p, 3, tmp_path / name, live_health=False) for p in personas]
        runs.append(builds)
    for first, second in zip(*runs):
        assert [d.hash for d in first.days] == [d.hash for d in second.days]
        assert len(first.days) == 4 and first.passed, [
            c for d in first.days for c in d.checks if not c.passed
        ]
        names = {c.name for c in first.days[1].checks}
        assert {"lint", "replay", "declaration", "live_health", "reviewer"} <= names
        for day in range(1, 4):
            a = (Path(first.root) / f"day-{day:02d}" / "delta.json").read_bytes()
            b = (Path(second.root) / f"day-{day:02d}" / "delta.json").read_bytes()
            assert a == b
        manifest = json.loads((Path(first.root) / "day-03" / "manifest.json").read_text())
        assert manifest["hash"] == first.days[3].hash and manifest["day"] == 3
    assert runs[0][0].days[1].hash != runs[0][1].days[1].hash


def test_lint_catches_bad_ops(persona, tmp_path):
    world = fresh_world(persona, tmp_path)
    delta = WorldDelta.model_validate(
        {
            "persona_id": persona.persona_id,
            "day": 1,
            "activities": [
                {"index": 0, "skill": "x", "apps": ["shop", "files"], "description": "", "time": stamp(1)}
            ],
            "ops": [
                {"app": "shop", "table": "wishlist", "op": "insert", "values": {"name": "x"}},
                {"app": "shop", "table": "orders", "op": "update", "values": {"status": "x"}},
                {"app": "files", "op": "write_file", "path": "../escape.txt", "content": "x"},
                {"app": "mail", "table": "messages", "op": "delete", "where": {"id": 1}},
            ],
        }
    )
    problems = lint_delta(delta, day_path(world, 0))
    text = "\n".join(problems)
    assert "unknown table 'wishlist'" in text
    assert "without where" in text and "'..'" in text and "not declared" in text


class LyingSkill(Skill):
    """Declares mail and bank but writes mail and a file."""

    name = "lying_skill"
    apps = ("mail", "bank")
    summary = "lies about its apps"

    def plan(self, persona, reader, rng, day, slot=0):
        return [
            ins(
                "mail",
                "messages",
                folder="inbox",
                sender="a@b",
                recipients=persona.email,
                subject="s",
                body="b",
                sent_at=stamp(day, slot),
                is_read=0,
            ),
            write("notes/secret.md", "hidden\n"),
        ]


def test_declaration_check_catches_a_lying_skill(persona, tmp_path):
    build = build_world(
        persona, 1, tmp_path, live_health=False, replay=False, skills={"lying_skill": LyingSkill()}
    )
    day1 = {c.name: c for c in build.days[1].checks}
    assert not day1["declaration"].passed and not build.passed
    assert day1["declaration"].evidence == {"declared": ["bank", "mail"], "touched": ["files", "mail"]}
    assert "not declared" in day1["lint"].reason
    world = Path(build.root)
    delta = WorldDelta.model_validate_json((world / "day-01" / "delta.json").read_text())
    assert not check_declaration(world / "day-00", world / "day-01", delta).passed


def test_world_hash_ignores_raw_sqlite_bytes(persona, tmp_path):
    day0 = day_path(fresh_world(persona, tmp_path), 0)
    before, raw = world_hash(day0), (day0 / "apps" / "shop.sqlite").read_bytes()
    conn = sqlite3.connect(day0 / "apps" / "shop.sqlite")
    conn.execute("PRAGMA page_size = 8192")
    conn.execute("VACUUM")
    conn.execute("PRAGMA user_version = 7")
    conn.close()
    assert (day0 / "apps" / "shop.sqlite").read_bytes() != raw
    assert world_hash(day0) == before
    apply_ops(
        day0,
        [
            Operation(
                app="shop", table="products", op="update", where={"id": 1}, values={"stock": {"$add": -1}}
            )
        ],
    )
    assert world_hash(day0) != before
    assert canonical_dump(day0)["tables"]["shop/products"][0]["id"] == 1


def test_planner_balances_and_follows_up(persona, tmp_path):
    build = build_world(persona, 6, tmp_path, live_health=False, replay=False)
    reader = WorldReader(Path(build.root) / "day-06")
    plan = plan_day(persona, 7, reader, random.Random("x"))
    assert 2 <= len(plan.activities) <= 4 and len({a.skill for a in plan.activities}) == len(plan.activities)
    used = {app for d in build.days for app in d.declared_apps}
    assert len(used) >= 6
    assert sum(plan.app_usage.values()) >= sum(len(d.declared_apps) for d in build.days)
