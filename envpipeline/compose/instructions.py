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
  described is referred to, not described again: "that city" where no other value of the chain
  is a city, else by the name that sentence gave it ("... (call it reference code A)"), see
  `InstructionPlan.said`.

`InstructionPlan` is the style-free plan; it is stored on the draft's metadata so another author
(e.g. an LLM rewriting the request) can write from it.
"""

from __future__ import annotations

import random
import string
from collections import Counter
from typing import Annotated, Literal

from pydantic import Field

from envpipeline.compose import phrasing
from envpipeline.models.base import Strict
from envpipeline.services.links import VALUE_NOUNS, VALUE_PHRASES

InstructionStyle = Literal["explicit", "hinted", "goal"]
#: the fewest relations from the start value at which a value a later sentence refers to is named
#: ("reference code A") where its type is not the chain's only one; nearer ones are described again
NAMED_FROM = 2
_LETTERS = string.ascii_uppercase
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


class StartSource(Strict):
    """Where a chain starts when the request states no value: a read that takes no argument."""

    service: Annotated[str, Field(description="service name")]
    service_title: Annotated[
        str, Field(description="the service's title as a request says it (`spoken_title`)")
    ]
    phrase: Annotated[str, Field(description="procedural phrase of the read")]
    relation: Annotated[str, Field(description="the value it reveals as a noun phrase")]


class InstructionPlan(Strict):
    """Everything an instruction is written from: the start value, the typed chain, the actions."""

    start_value: Annotated[
        str, Field(description="the value the chain starts from (stated unless `start` reads it)")
    ]
    value_types: Annotated[list[str], Field(description="type of the start value, then of each hop's output")]
    visits: list[PlannedVisit]
    start: Annotated[
        StartSource | None,
        Field(description="the read the start value comes from; None: the request states it"),
    ] = None

    @property
    def start_text(self) -> str:
        """The start value as a request says it: quoted, or described by the read that gives it."""
        return self.start.relation if self.start is not None else f"'{self.start_value}'"

    def noun(self, index: int) -> str:
        """The noun of value `index` (0 = start)."""
        return VALUE_NOUNS.get(self.value_types[index], "value")

    def describe(self, index: int) -> str:
        """Value `index` as a goal-level noun phrase: nested relations down to the start value."""
        return self._relations(self.start_text, 0, index)

    def said(
        self, indices: list[int], possessive: frozenset[int] = frozenset()
    ) -> tuple[list[str], dict[str, int]]:
        """Values `indices` as a request's sentences say them, in order, each for a reader of the
        sentences before: relations down to the latest value an earlier sentence described, by
        its name, instead of down to the start value again. The name is "that email address"
        where the chain holds no other email address, else one the first sentence that describes
        the value gives it ("... (call it reference code A)"). A value one relation away from the
        start value is described again, and so is one whose naming would come right before an
        "'s" (in the sentences at `possessive`, at the end of the phrase). Returns the phrases
        and the value each name stands for."""
        kinds = Counter(self.value_types)
        first = {k: next(p for p, index in enumerate(indices) if index >= k) for k in range(max(indices) + 1)}

        def nameable(k: int) -> bool:
            if kinds[self.value_types[k]] == 1:
                return True
            # the naming ends its first sentence's phrase where each relation around it ends there
            last = all(v.relation.endswith("{of}") for v in self.visits[k : indices[first[k]]])
            return k >= NAMED_FROM and not (last and first[k] in possessive)

        anchors: list[int | None] = []
        described = 0
        for index in indices:
            anchors.append(next((k for k in range(min(index, described), 0, -1) if nameable(k)), None))
            described = max(described, index)
        letters: Counter[str] = Counter()
        names: dict[int, str] = {}  # anchor -> what later sentences call it
        given: set[int] = set()  # the anchors a sentence names where it first describes them
        for k in sorted({a for a in anchors if a is not None}):
            if kinds[self.value_types[k]] == 1:
                names[k] = VALUE_PHRASES.get(self.value_types[k], "that value")
                continue
            noun = self.noun(k)
            names[k] = f"{noun} {_LETTERS[letters[noun]]}"
            letters[noun] += 1
            given.add(k)
        phrases: list[str] = []
        introduced = 0  # the values up to here were described (and named, where named) already
        for index, anchor in zip(indices, anchors):
            text = self.start_text if anchor is None else names[anchor]
            for k in range(anchor or 0, index):
                text = self.visits[k].relation.format(of=text)
                if k + 1 > introduced and k + 1 in given:
                    text += f" (call it {names[k + 1]})"
            introduced = max(introduced, index)
            phrases.append(text)
        return phrases, {name: k for k, name in names.items()}

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
    lines = [_opening(plan, "explicit", rng)]
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


def _opening(plan: InstructionPlan, style: InstructionStyle, rng: random.Random) -> str:
    """The first sentence: the value the request starts from, or where to read it (`StartSource`):
    the read's step, where the steps are explicit; the value it gives, in a request."""
    start = plan.start
    if start is None:
        return rng.choice(phrasing.OPENINGS[style]).format(noun=plan.noun(0), value=plan.start_value)
    opening = rng.choice(phrasing.SOURCE_OPENINGS[style])
    if style == "explicit":
        read = phrasing.vary(phrasing.without_service_hints(start.phrase), rng)
        return opening.format(noun=plan.noun(0), read=f"in {start.service_title}, {read}")
    return opening.format(noun=plan.noun(0), start=start.relation)


def goal_values(plan: InstructionPlan) -> tuple[list[str], dict[str, int]]:
    """How a goal-level request says the value of each action, then the answer (`InstructionPlan.said`),
    and the value each name it gives stands for."""
    acting = [visit.action for visit in plan.visits if visit.action is not None]
    possessive = frozenset(
        p
        for p, action in enumerate(acting)
        if f"{VALUE_PHRASES.get(plan.value_types[action.value], '')}'s" in action.phrase
    )
    return plan.said([action.value for action in acting] + [len(plan.visits)], possessive)


def _goal(plan: InstructionPlan, rng: random.Random) -> str:
    """The request: the start value, each action on its value, the answer asked for. A value an
    earlier sentence described is referred to by name, not described again (`InstructionPlan.said`)."""
    lines = [_opening(plan, "goal", rng)]
    acting = [visit.action for visit in plan.visits if visit.action is not None]
    n = len(plan.visits)
    said, _ = goal_values(plan)
    for action, value in zip(acting, said):
        phrase = phrasing.without_service_hints(action.phrase)
        reference = VALUE_PHRASES.get(plan.value_types[action.value], "")
        if reference and reference in phrase:
            phrase = phrase.replace(reference, value, 1)
        else:
            phrase = f"{phrase} (for {value})"
        lines.append(phrasing.capitalize(rng.choice(phrasing.GOAL_ACTION_FRAMES).format(phrase=phrase)))
    lines.append(rng.choice(phrasing.CLOSINGS["goal"]).format(target=said[-1], noun=plan.noun(n)))
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
