"""The day planner: map 2-4 activities per day to skills, follow story arcs and earlier state,
balance per-app usage (and avoid repeating a skill), and turn the plan into a delta.

Per day: (1) the next available step of a story arc, (2) one follow-up of earlier state (an open
order is tracked, an upcoming flight gets a trip plan or a cancellation, unread mail is answered),
(3) the rest by balance: the available skill whose apps are least used so far (a histogram over all
previous days, read from the earlier delta.json files), less a bonus for skills on the persona's
core tools (`core_affinity`: the persona's own apps come up more often). Ties are broken by the
seeded rng.
"""

from __future__ import annotations

import random
from collections import Counter

from envpipeline.models.world import Activity, DayPlan, Operation, Persona, WorldDelta
from envpipeline.worlds.schema import ALL_APPS, stamp
from envpipeline.worlds.skills.base import Skill
from envpipeline.worlds.skills.registry import all_skills
from envpipeline.worlds.state import WorldReader

#: How much one earlier run of a skill weighs against it (in units of per-app usage).
SKILL_REPEAT_WEIGHT = 1.5
#: How much a skill whose apps are all among the persona's core tools is preferred (in units of
#: per-app usage; a skill with half its apps among them gets half of it).
CORE_TOOL_WEIGHT = 4.0


def core_affinity(persona: Persona, skill: Skill) -> float:
    """The share of the skill's apps that are among the persona's core tools (0..1)."""
    core = set(persona.core_tools)
    return sum(a in core for a in skill.apps) / len(skill.apps) if skill.apps else 0.0


def app_usage(reader: WorldReader) -> Counter[str]:
    """Per-app activity counts over every day up to the reader's day."""
    usage: Counter[str] = Counter({app: 0 for app in ALL_APPS})
    for delta in reader.history():
        for activity in delta.get("activities", []):
            usage.update(activity.get("apps", []))
    return usage


def skill_usage(reader: WorldReader) -> Counter[str]:
    """How often each skill ran on earlier days."""
    return Counter(a["skill"] for delta in reader.history() for a in delta.get("activities", []))


def arc_progress(reader: WorldReader) -> Counter[str]:
    """How many steps of each arc earlier days completed."""
    done: Counter[str] = Counter()
    for delta in reader.history():
        for activity in delta.get("activities", []):
            if activity.get("arc"):
                done[activity["arc"]] += 1
    return done


def plan_day(
    persona: Persona,
    day: int,
    previous_world: WorldReader,
    rng: random.Random,
    *,
    skills: dict[str, Skill] | None = None,
) -> DayPlan:
    """Plan day `day` (>= 1) from the previous day's world."""
    skills = skills if skills is not None else all_skills()
    usage = app_usage(previous_world)
    repeats = skill_usage(previous_world)
    available = {n: s for n, s in sorted(skills.items()) if s.available(persona, previous_world)}
    target = rng.randint(2, 4)
    chosen: list[tuple[Skill, str | None, str]] = []

    def free(skill: Skill) -> bool:
        taken = {s.name for s, _, _ in chosen}
        consumed = {s.consumes for s, _, _ in chosen if s.consumes}
        return skill.name not in taken and (skill.consumes is None or skill.consumes not in consumed)

    def take(skill: Skill, arc: str | None, reason: str) -> None:
        chosen.append((skill, arc, reason))
        usage.update(skill.apps)

    def score(skill: Skill) -> tuple[float, float]:
        # the skill reaching the least-used app first (mean usage breaks near-ties); a skill that
        # already ran counts as if its apps had run again; one on the persona's core tools is
        # preferred (it counts as if its apps had run CORE_TOOL_WEIGHT times less)
        least = min(usage[a] for a in skill.apps)
        mean = sum(usage[a] for a in skill.apps) / len(skill.apps)
        bonus = CORE_TOOL_WEIGHT * core_affinity(persona, skill)
        return (least + 0.25 * mean + SKILL_REPEAT_WEIGHT * repeats[skill.name] - bonus, rng.random())

    progress = arc_progress(previous_world)
    arcs = list(persona.arcs)
    if arcs:
        start = day % len(arcs)
        for arc in arcs[start:] + arcs[:start]:
            steps = [s for s in arc.skills[progress[arc.name] :] if s in available and free(available[s])]
            if steps:
                take(available[steps[0]], arc.name, "arc")
                break
    follow = [s for s in available.values() if s.follow_up and free(s)]
    if follow and len(chosen) < target:
        take(min(follow, key=score), None, "follow-up")
    while len(chosen) < target:
        pool = [s for s in available.values() if free(s)]
        if not pool:
            break
        take(min(pool, key=score), None, "balance")
    activities = [
        Activity(
            index=i,
            skill=s.name,
            apps=list(s.apps),
            description=s.describe(persona),
            arc=arc,
            reason=reason,
            time=stamp(day, i),
        )
        for i, (s, arc, reason) in enumerate(chosen)
    ]
    return DayPlan(
        persona_id=persona.persona_id, day=day, activities=activities, app_usage=dict(sorted(usage.items()))
    )


def plan_to_delta(
    persona: Persona,
    plan: DayPlan,
    previous_world: WorldReader,
    *,
    skills: dict[str, Skill] | None = None,
) -> WorldDelta:
    """Run each activity's skill against the previous world; tag every op with its activity."""
    skills = skills if skills is not None else all_skills()
    ops: list[Operation] = []
    for activity in plan.activities:
        skill = skills[activity.skill]
        rng = random.Random(f"{persona.persona_id}:{plan.day}:{activity.index}:{skill.name}")
        for op in skill.plan(persona, previous_world, rng, plan.day, activity.index):
            ops.append(op.model_copy(update={"activity": activity.index}))
    return WorldDelta(persona_id=persona.persona_id, day=plan.day, activities=plan.activities, ops=ops)
