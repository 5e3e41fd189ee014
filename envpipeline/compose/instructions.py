"""Instruction styles: the same composed plan written as explicit steps, hinted, or a goal-level request.

The style is the difficulty knob of a composed task's *text* (the plan, state and criteria do not
change with it):

- ``explicit`` (easy): numbered steps, each naming the service and the lookup to make, and the
  action to take with which earlier value;
- ``hinted`` (medium): the goal-level request plus pointers for some lookups (a service named on
  some of them), never the whole chain;
- ``goal`` (hard): a request that names no service and no step: every value the verifier checks
  is described by its relations to the starting value ("the city that the passenger on flight
  booking CNF-4821 is flying to"), so the agent must infer the chain. A value an earlier sentence
  described is referred to as "that city" where no other value of the chain is a city, instead
  of being described again (`InstructionPlan.refer`).

`InstructionPlan` is the style-free plan; it is stored on the draft's metadata so another author
(e.g. an LLM rewriting the request) can write from it.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Annotated, Literal

from pydantic import Field

from envpipeline.compose import phrasing
from envpipeline.models.base import Strict
from envpipeline.services.links import VALUE_NOUNS, VALUE_PHRASES

InstructionStyle = Literal["explicit", "hinted", "goal"]
STYLES: tuple[InstructionStyle, ...] = ("explicit", "hinted", "goal")
#: how often a balanced run draws each style (goal-level at least 40% of tasks)
BALANCED_WEIGHTS: dict[InstructionStyle, float] = {"explicit": 0.25, "hinted": 0.3, "goal": 0.45}


class PlannedAction(Strict):
    """A state change at one visit, on value `value` (0 = the start value, i = hop i's output)."""

    name: Annotated[str, Field(description="the action's link name")]
    phrase: Annotated[str, Field(description="procedural phrase; refers to the value as 'that <noun>'")]
    value: Annotated[int, Field(ge=0, description="index of the value it consumes")]


class PlannedVisit(Strict):
    """One visit of the walk: the hop made there and the action taken there, if any."""

    service: Annotated[str, Field(description="service name")]
    service_title: Annotated[
        str, Field(description="the service's title as a request says it (`spoken_title`)")
    ]
    hop: Annotated[str, Field(description="the hop's link name")]
    phrase: Annotated[str, Field(description="procedural phrase of the lookup")]
    relation: Annotated[str, Field(description="the revealed value as a noun phrase over '{of}'")]
    action: PlannedAction | None = None


class InstructionPlan(Strict):
    """Everything an instruction is written from: the start value, the typed chain, the actions."""

    start_value: Annotated[str, Field(description="the value the task gives")]
    value_types: Annotated[list[str], Field(description="type of the start value, then of each hop's output")]
    visits: list[PlannedVisit]

    def noun(self, index: int) -> str:
        """The noun of value `index` (0 = start)."""
        return VALUE_NOUNS.get(self.value_types[index], "value")

    def describe(self, index: int) -> str:
        """Value `index` as a goal-level noun phrase: nested relations down to the start value."""
        return self._relations(f"'{self.start_value}'", 0, index)

    def refer(self, index: int, described: int) -> str:
        """Value `index` for a reader who has read the descriptions of the values up to `described`:
        nested relations down to their latest that is the chain's only value of its type (`anchor`:
        "that email address"), or down to the start value where none is."""
        anchor = self.anchor(index, described)
        if anchor is None:
            return self.describe(index)
        return self._relations(VALUE_PHRASES.get(self.value_types[anchor], "that value"), anchor, index)

    def anchor(self, index: int, described: int) -> int | None:
        """The latest value up to `index` and `described` (not the start value, which is quoted)
        that no other value of the chain shares a type with: "that <noun>" names it unambiguously."""
        kinds = Counter(self.value_types)
        unique = (k for k in range(min(index, described), 0, -1) if kinds[self.value_types[k]] == 1)
        return next(unique, None)

    def _relations(self, text: str, start: int, index: int) -> str:
        """`text` (value `start`) inside the relations of the visits that lead to value `index`."""
        for visit in self.visits[start:index]:
            text = visit.relation.format(of=text)
        return text


def draw_style(setting: str, seed: int) -> InstructionStyle:
    """The style of candidate `seed`: the setting itself, or a seeded weighted draw when 'balanced'."""
    if setting in STYLES:
        return setting  # type: ignore[return-value]
    if setting != "balanced":
        raise ValueError(f"unknown instruction style '{setting}': use one of {', '.join(STYLES)}, balanced")
    rng = random.Random(f"instruction-style:{seed}")
    return rng.choices(list(BALANCED_WEIGHTS), weights=list(BALANCED_WEIGHTS.values()))[0]


def render(plan: InstructionPlan, style: InstructionStyle, rng: random.Random) -> str:
    """The instruction of `plan` in `style`, phrased by draws from `rng`."""
    if style == "explicit":
        return _explicit(plan, rng)
    text = _goal(plan, rng)
    return text if style == "goal" else f"{text}\n{_hints(plan, rng)}"


def _explicit(plan: InstructionPlan, rng: random.Random) -> str:
    marker = rng.choice(phrasing.STEP_MARKERS)
    frame = rng.choice(phrasing.SERVICE_FRAMES)
    lines = [rng.choice(phrasing.OPENINGS["explicit"]).format(noun=plan.noun(0), value=plan.start_value)]
    for i, visit in enumerate(plan.visits):
        lookup = phrasing.vary(phrasing.without_service_hints(visit.phrase), rng)
        phrase = frame.format(title=visit.service_title, phrase=lookup)
        line = marker.format(i=i + 1) + phrase + "."
        if visit.action is not None:
            j = visit.action.value
            noun = plan.noun(j)
            source = f"the starting {noun}" if j == 0 else f"the {noun} from step {j}"
            line += phrasing.action_join(rng.choice(phrasing.ACTION_JOINS), visit.action.phrase).format(
                source=source, phrase=visit.action.phrase
            )
        lines.append(line)
    n = len(plan.visits)
    lines.append(rng.choice(phrasing.CLOSINGS["explicit"]).format(noun=plan.noun(n), n=n))
    return "\n".join(lines)


def _goal(plan: InstructionPlan, rng: random.Random) -> str:
    """The request: the start value, each action on its value, the answer asked for. A value an
    earlier sentence described is referred to, not described again (`InstructionPlan.refer`)."""
    lines = [rng.choice(phrasing.OPENINGS["goal"]).format(noun=plan.noun(0), value=plan.start_value)]
    described = 0  # the latest value some sentence so far describes (each describes all before it)
    for visit in plan.visits:
        if visit.action is None:
            continue
        j = visit.action.value
        phrase = phrasing.without_service_hints(visit.action.phrase)
        reference = VALUE_PHRASES.get(plan.value_types[j], "")
        said = plan.refer(j, described)
        if reference and reference in phrase:
            phrase = phrase.replace(reference, said, 1)
        else:
            phrase = f"{phrase} (for {said})"
        described = max(described, j)
        lines.append(phrasing.capitalize(rng.choice(phrasing.GOAL_ACTION_FRAMES).format(phrase=phrase)))
    n = len(plan.visits)
    target = plan.refer(n, described)
    lines.append(rng.choice(phrasing.CLOSINGS["goal"]).format(target=target, noun=plan.noun(n)))
    return "\n".join(lines)


def _hints(plan: InstructionPlan, rng: random.Random) -> str:
    """Pointers for some lookups (never all): their procedural phrase, the service on some."""
    n = len(plan.visits)
    shown = sorted(rng.sample(range(n), rng.randint(1, max(1, n // 2))))
    lines = [rng.choice(phrasing.HINT_INTROS)]
    for i in shown:
        visit = plan.visits[i]
        phrase = phrasing.vary(phrasing.without_service_hints(visit.phrase), rng)
        if rng.random() < 0.5:
            phrase = f"{phrase} (in {visit.service_title})"
        lines.append(rng.choice(phrasing.HINT_FRAMES).format(phrase=phrase))
    return " ".join(lines)
