"""Task authoring: plant a joint initial state along a typed walk; write instruction, solution, rubric."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, TypeVar, get_args

from pydantic import Field, model_validator

from envpipeline.agents.environment import ComposedEnvironment
from envpipeline.canonical import canonical_hash
from envpipeline.compose.discovery import with_discovery_calls
from envpipeline.compose.distractors import plant_twin
from envpipeline.compose.instructions import (
    InstructionPlan,
    PlannedAction,
    PlannedVisit,
    StartSource,
    draw_style,
    render,
)
from envpipeline.compose.limits import MAX_WALK_LENGTH
from envpipeline.compose.stated import pin_stated
from envpipeline.compose.variants import link_weights, links_of, service_weight, sources_of, weighted_order
from envpipeline.compose.walk import assign_actions, assign_hops, random_walk
from envpipeline.errors import CompositionError, PlantingError
from envpipeline.models.base import Strict
from envpipeline.models.criteria import ValueKind
from envpipeline.models.task import (
    Binding,
    ComposeEnvironmentRef,
    Condition,
    Criterion,
    ToolCallStep,
    fill_template,
)
from envpipeline.rubric import preservation_of
from envpipeline.services import vocab
from envpipeline.services.base import Service, copy_state, dump_state
from envpipeline.services.links import (
    VALUE_NOUNS,
    Action,
    ActionPlan,
    Hop,
    HopPlan,
    PlannedCall,
    Source,
    ValueType,
    spoken_title,
)
from envpipeline.services.options import write_options
from envpipeline.services.registry import all_services
from envpipeline.value_mentions import stated_values

GENERATOR = "compoworld.random_walk"
GENERATOR_VERSION = "2"
#: the longest final reply a composed task accepts
ANSWER_CHARS = 200
#: service sets a candidate over the whole library may draw by default (`ComposeConfig.service_draws`)
WHOLE_LIBRARY_DRAWS = 16
#: Over the whole library most links carry a code or a title. A hop to or from any other kind of
#: value (a person, an email, a date, a city) weighs this much more, and actions on such values
#: are placed first, so that chains carry them and the actions that need them are drawn (GitHub's
#: 26 actions on a repository's owner, a person, were in no reference of 1,000 tasks).
OTHER_VALUE_WEIGHT = 10.0
OTHER_VALUES = frozenset(get_args(ValueKind)) - {"code", "title"}
#: Over the whole library, the share of candidates with a source among their services (a read
#: that takes no argument, `links.Source`) whose chain starts there instead of at a stated value.
SOURCE_SHARE = 0.75


class ComposeConfig(Strict):
    """Knobs of the composer (defaults follow the paper: 5 services + 5 distractors)."""

    services: Annotated[int, Field(ge=2, description="K: services each task composes")] = 5
    distractors: Annotated[int, Field(ge=0, description="extra services exposed but not needed")] = 5
    walk_length: Annotated[
        int | None,
        Field(le=MAX_WALK_LENGTH, description="visits in the walk (>= K+1; default K+1)"),
    ] = None
    min_actions: Annotated[int, Field(ge=1, description="state-changing steps each task needs")] = 4
    min_action_services: Annotated[int, Field(ge=1, description="distinct services those steps touch")] = 3
    library: Annotated[list[str] | None, Field(description="restrict to these services")] = None
    library_scope: Annotated[
        Literal["curated", "all"],
        Field(
            description="services drawn when `library` is not given: the curated ones (hand-written "
            "links and phrasings), or all, the imported MCP corpus included (links derived from names; "
            "a service drawn in proportion to its tools)"
        ),
    ] = "curated"
    walk_attempts: Annotated[
        int, Field(ge=1, description="walks tried per set of services before another set is drawn")
    ] = 60
    service_draws: Annotated[
        int | None,
        Field(
            ge=1,
            le=100,
            description="sets of services a candidate may draw before it is rejected as not composable "
            "(default: 1 over the curated services, whose records stay as they were; "
            f"{WHOLE_LIBRARY_DRAWS} over the whole library, where most sets share no typed data flow)",
        ),
    ] = None
    instruction_style: Annotated[
        Literal["explicit", "hinted", "goal", "balanced"],
        Field(
            description="how instructions are written: explicit steps (easy), hinted, a goal-level "
            "request naming no service or step (hard), or balanced (a seeded draw per task, "
            "goal-level for about 45%)"
        ),
    ] = "balanced"

    @model_validator(mode="after")
    def _satisfiable(self) -> ComposeConfig:
        """Refuse settings no candidate can meet, before any work is spent on them."""
        if self.services < self.min_action_services:
            raise ValueError(
                f"services={self.services} is below min_action_services={self.min_action_services}: "
                f"each task changes state in at least {self.min_action_services} services, so compose "
                f"at least {self.min_action_services}"
            )
        if self.walk_length is not None and self.walk_length < self.services + 1:
            raise ValueError(
                f"walk_length={self.walk_length} must be at least services + 1 = {self.services + 1}"
            )
        if self.min_actions < self.min_action_services:
            raise ValueError(
                f"min_actions={self.min_actions} cannot cover min_action_services={self.min_action_services}"
            )
        return self

    def length(self) -> int:
        """The effective walk length."""
        return self.walk_length or self.services + 1

    def draws(self) -> int:
        """The effective number of service sets a candidate may draw (`service_draws`)."""
        if self.service_draws is not None:
            return self.service_draws
        return WHOLE_LIBRARY_DRAWS if self.whole_library() else 1

    def whole_library(self) -> bool:
        """Whether candidates draw from the whole library (no `library` given, scope ``all``)."""
        return self.library is None and self.library_scope == "all"


@dataclass
class Draft:
    """A composed candidate before verification; `services` hold the live planted state."""

    seed: int
    walk: list[str]
    distractors: list[str]
    services: dict[str, Service]
    instruction: str
    steps: list[ToolCallStep]
    criteria: list[Criterion]
    values: list[str]
    reference_output: str
    initial_state: dict[str, Any]
    state_seeds: dict[str, str] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    failure: str | None = None
    #: action criterion id -> indices in `steps` of its action's writes, the one that achieves it
    #: last (`compose.stated`: a channel created with a topic, then given a member)
    writers: dict[str, list[int]] = field(default_factory=dict)

    def hidden_values(self) -> list[str]:
        """The values the agent must discover (`discovered`)."""
        return discovered(self.values, read_start="start_source" in self.metadata)

    def environment_ref(self) -> ComposeEnvironmentRef:
        """Where the task's agent acts: the planted services, the distractors, as stored."""
        return ComposeEnvironmentRef(
            services=sorted(set(self.walk)),
            distractors=self.distractors,
            initial_state=self.initial_state,
            state_seeds=self.state_seeds,
        )

    def task_hash(self) -> str:
        """Content hash over everything that defines the task (`canonical_hash`: the task id's source)."""
        payload = {
            "instruction": self.instruction,
            "initial_state": self.initial_state,
            "state_seeds": self.state_seeds,
            "criteria": [c.model_dump() for c in self.criteria],
            "steps": [s.model_dump() for s in self.steps],
            "exposed": sorted(self.services),
        }
        return canonical_hash(payload)


def discovered(values: list[str], *, read_start: bool) -> list[str]:
    """Of a chain's `values`, those the agent must discover: every one but the start value the
    request states (all of them where the chain starts at a read: the agent reads the start too)."""
    return list(values) if read_start else values[1:]


def _links(names: list[str]) -> tuple[dict[str, list[Hop]], dict[str, list[Action]]]:
    library = all_services()
    hops = {n: list(links_of(library[n])[0]) for n in names}
    actions = {n: list(links_of(library[n])[1]) for n in names}
    return hops, actions


def _steps_for(
    calls: list[PlannedCall], namespace: str, value: str, value_source: Binding | None, base: int
) -> list[ToolCallStep]:
    steps = []
    for call in calls:
        arguments = dict(call.arguments)
        bindings: dict[str, Binding] = {}
        for arg, template in call.inputs.items():
            arguments[arg] = fill_template(template, value)
            if value_source is not None:
                bindings[arg] = Binding(step=value_source.step, path=value_source.path, template=template)
        for arg, (index, path) in call.bind.items():
            arguments[arg] = None
            bindings[arg] = Binding(step=base + index, path=list(path))
        steps.append(ToolCallStep(tool=f"{namespace}.{call.tool}", arguments=arguments, bindings=bindings))
    return steps


def library_pool(scope: str) -> list[str]:
    """The services a composition draws from when no `library` is given (see `library_scope`)."""
    return [name for name, cls in all_services().items() if scope == "all" or cls.curated]


def draft_task(seed: int, config: ComposeConfig) -> Draft:
    """Compose one candidate deterministically from `seed` (all randomness derives from it)."""
    rng = vocab.seeded(f"compose:{seed}")
    pool = sorted(config.library or library_pool(config.library_scope))
    need = config.services + config.distractors
    if need > len(pool):
        raise CompositionError(f"{need} services requested but the library has {len(pool)}")
    library = all_services()
    # Walk services come from those with a hop (a service no link reaches cannot carry the chain);
    # distractors from everything else, simulated-only and link-less services included.
    composable = [name for name in pool if links_of(library[name])[0]]
    if config.services > len(composable):
        raise CompositionError(
            f"{config.services} services requested but only {len(composable)} of the library's "
            f"{len(pool)} take part in a hop"
        )
    walk, hops, actions, chosen, distractors = [], None, None, [], []
    for _ in range(config.draws()):
        chosen = _drawn_services(composable, config, rng)
        distractors = sorted(rng.sample([name for name in pool if name not in chosen], config.distractors))
        walk, hops, actions = _walk_and_flow(chosen, config, rng)
        if hops is not None and actions is not None:
            break
    if hops is None or actions is None:
        failure = (
            "no typed data flow links every consecutive visit of the walk"
            if hops is None
            else f"fewer than {config.min_actions} actions over {config.min_action_services} services fit the walk"
        )
        return Draft(seed, walk, distractors, {}, "", [], [], [], "", {}, failure=failure)
    source = _start_source(chosen, hops[0], rng) if config.whole_library() else None
    services = {
        name: library[name](library[name].generate_state(state_rng(state_seed(seed, name))))
        for name in chosen
    }
    style = draw_style(config.instruction_style, seed)
    try:
        draft = _plant_and_write(seed, walk, distractors, services, hops, actions, rng, style, source)
    except PlantingError as exc:
        return Draft(seed, walk, distractors, {}, "", [], [], [], "", {}, failure=str(exc))
    return with_preservation(draft)


def _drawn_services(composable: list[str], config: ComposeConfig, rng: random.Random) -> list[str]:
    """The services of one draw: uniform over the curated services or a given `library` (their
    records stay as they were); over the whole library, weighted by their tools (`service_weight`),
    so that the large imported services' tools appear in references too."""
    if not config.whole_library():
        return sorted(rng.sample(composable, config.services))
    library = all_services()
    weights = [service_weight(library[name]) for name in composable]
    return sorted(weighted_order(composable, weights, rng)[: config.services])


def _start_source(chosen: list[str], first: Hop, rng: random.Random) -> tuple[str, Source] | None:
    """Where a chain over the whole library starts, when not from a value the request states: a
    source of one of `chosen` (a read that takes no argument) that reveals what the first hop
    consumes, for about `SOURCE_SHARE` of the candidates that have one."""
    library = all_services()
    fits = [(name, s) for name in chosen for s in sources_of(library[name]) if s.produces == first.consumes]
    if not fits or rng.random() >= SOURCE_SHARE:
        return None
    return rng.choice(fits)


def _walk_and_flow(
    chosen: list[str], config: ComposeConfig, rng: random.Random
) -> tuple[list[str], list[Hop] | None, list[tuple[int, Action, int]] | None]:
    """A walk over `chosen` with a typed hop per visit and enough actions (None where none fit).

    Over the whole library, values other than codes and titles are favoured (`OTHER_VALUE_WEIGHT`);
    the curated services draw as they always did."""
    hops_by, actions_by = _links(chosen)
    weights = {name: link_weights(all_services()[name]) for name in chosen}
    whole = config.whole_library()
    favoured = OTHER_VALUES if whole else frozenset()
    type_weights = dict.fromkeys(OTHER_VALUES, OTHER_VALUE_WEIGHT) if whole else None
    walk, hops, actions = [], None, None
    for _ in range(config.walk_attempts):
        walk = random_walk(chosen, config.length(), rng)
        hops = assign_hops(walk, hops_by, rng, weights=weights, type_weights=type_weights)
        if hops is None:
            continue
        actions = assign_actions(
            walk,
            hops,
            actions_by,
            rng,
            config.min_actions,
            config.min_action_services,
            weights=weights,
            first_types=favoured,
        )
        if actions is not None:
            break
    return walk, hops, actions


def with_preservation(draft: Draft) -> Draft:
    """Run the reference where agents act, make its ids discoverable, and pin everything else.

    The reference runs on the environment as agents get it (rebuilt from the stored initial state,
    distractors included). A listing call goes before any call that uses an id nothing showed
    yet (`compose.discovery`). Each action's criterion then checks what the instruction states
    about its write as well (`compose.stated`). Then the collateral-damage criterion: every record
    the reference leaves alone, and every field it leaves alone in a record it edits, is pinned by
    a digest, so deleting, archiving or editing anything else (renaming or closing the issue whose
    assignee the task sets), or writing one record too many, fails the task.
    """
    env = ComposedEnvironment.from_task_environment(draft.environment_ref())
    before = env.snapshot()
    steps, moved, missing = with_discovery_calls(draft.steps, env, draft.instruction)
    draft.steps = steps
    draft.writers = {crit: [moved[step] for step in writes] for crit, writes in draft.writers.items()}
    draft.criteria = [
        pin_stated(c, [steps[k] for k in draft.writers[c.id]], env.states, draft.instruction)
        if c.id in draft.writers
        else c
        for c in draft.criteria
    ]
    reveal = draft.metadata["final_reveal"]
    draft.metadata["final_reveal"] = {**reveal, "step": moved[reveal["step"]]}
    draft.metadata["undiscoverable_ids"] = missing
    options = {name: write_options(live.tools.values()) for name, live in env.services.items()}
    draft.criteria.append(
        Criterion(
            id=f"c{len(draft.criteria) + 1}",
            description="nothing changed beyond the records the task asks to change",
            kind="state_preserved",
            **preservation_of(before, env.states, options)._asdict(),
        )
    )
    return draft


def state_seed(seed: int, service: str) -> str:
    """The rng seed of one service's generated initial state within candidate `seed`."""
    return f"{seed}:{service}"


def state_rng(seed: str) -> random.Random:
    """The generator of one service's initial state, from its `state_seed`."""
    return vocab.seeded(seed)


#: Plantings of one link before it is kept although it gives a value away (a gate then rejects).
PLANT_TRIES = 5

Plan = TypeVar("Plan", HopPlan, ActionPlan)


def _planted_until_clean(
    service: Service, plant: Callable[[], Plan], gives_away: Callable[[Plan], bool]
) -> Plan:
    """`plant()` into `service`, again while the plan gives a value away, the state put back first."""
    for _ in range(PLANT_TRIES - 1):
        before = copy_state(service.state)
        plan = plant()
        if not gives_away(plan):
            return plan
        service.state = before
    return plant()


def plant_hop(
    service: Service, hop: Hop, rng: random.Random, value: str, known: list[str], hidden: Sequence[str] = ()
) -> HopPlan:
    """Plant `hop`, drawing again while it would reveal a value the chain already holds, or while
    its phrase or relation states one of `hidden` in any spelling (`value_mentions`; a value the
    agent must discover: one found earlier in the chain, or a start it reads).

    A hop that draws its answer (a city, a date) can draw one found earlier in the chain, or the
    start value itself: the chain then loops, the instruction may quote the answer it asks for
    (``chain_hidden``), and a later visit of the same service can clobber the earlier planting of
    that value (``reference_pass``). A listing hop states the constant its listing needs, drawn
    from the records there: it can draw the record planted for an earlier value ("the post
    comments with post id 'REF-3561'", whole-library seed 24; "the message listed with folder id
    'REF-3210'" after a read start, seed 94), which ``chain_hidden`` rejected. After `PLANT_TRIES`
    plantings the last plan is kept.
    """
    seen = {v.lower() for v in known}

    def gives_away(plan: HopPlan) -> bool:
        said = f"{plan.phrase} {plan.relation}"
        return plan.output.lower() in seen or bool(stated_values(said, hidden))

    return _planted_until_clean(service, lambda: hop.plant(service.state, rng, value), gives_away)


def plant_action(
    service: Service, action: Action, rng: random.Random, value: str, hidden: list[str]
) -> ActionPlan:
    """Plant `action`, drawing again while its phrase states a value the chain hides (in any
    spelling: `value_mentions`).

    An action may quote values it draws itself (a new trip's destination city, a new contact's
    email); when a draw equals a value the agent must discover on the way, the instruction would
    give that value away (the ``chain_hidden`` gate rejects it). The service's state is then put
    back as it was before the planting and the action planted again with the next draws. After
    `PLANT_TRIES` plantings the last plan is kept, and the gate rejects the task.
    """
    return _planted_until_clean(
        service,
        lambda: action.plant(service.state, rng, value),
        lambda plan: bool(stated_values(plan.phrase, hidden)),
    )


def _plant_and_write(
    seed: int,
    walk: list[str],
    distractors: list[str],
    services: dict[str, Service],
    hops: list[Hop],
    actions: list[tuple[int, Action, int]],
    rng: random.Random,
    style: str = "explicit",
    source: tuple[str, Source] | None = None,
) -> Draft:
    types: list[ValueType] = [hops[0].consumes, *(h.produces for h in hops)]
    start = source[1].plant(services[source[0]].state, rng) if source is not None else None
    values = [start.output if start is not None else vocab.sample_value(types[0], rng)]
    hop_plans = []
    twins: list[dict[str, Any]] = []
    for i, (service_name, hop) in enumerate(zip(walk, hops)):
        hidden = discovered(values, read_start=start is not None)
        plan = plant_hop(services[service_name], hop, rng, values[-1], values, hidden)
        state = services[service_name].state
        changed = plant_twin(state, values[-1], hop.consumes, rng, plan.output, hop.produces)
        if changed:
            twins.append({"visit": i, "service": service_name, "link": hop.name, "differs": changed})
        hop_plans.append(plan)
        values.append(plan.output)
    action_plans = {}
    for i, action, j in actions:
        hidden = discovered(values, read_start=start is not None)
        action_plans[i] = (action, j, plant_action(services[walk[i]], action, rng, values[j], hidden))
        state = services[walk[i]].state
        changed = plant_twin(state, values[j], action.consumes, rng)
        if changed:
            twins.append({"visit": i, "service": walk[i], "link": action.name, "differs": changed})
    initial_state = {name: dump_state(s.state) for name, s in sorted(services.items())}

    steps: list[ToolCallStep] = []
    criteria: list[Criterion] = []
    writers: dict[str, list[int]] = {}
    reveal_at: dict[int, Binding] = {}
    library = all_services()
    started: StartSource | None = None
    if source is not None and start is not None:  # the read comes first; the chain takes its answer
        steps += _steps_for(start.calls, source[0], "", None, 0)
        last = max(k for k, c in enumerate(start.calls) if c.reveals)
        reveal_at[0] = Binding(step=last, path=list(start.calls[last].reveals or ()))
        title = spoken_title(library[source[0]].title)
        started = StartSource(
            service=source[0], service_title=title, phrase=start.phrase, relation=start.relation
        )
    visits: list[PlannedVisit] = []
    for i, (service_name, plan) in enumerate(zip(walk, hop_plans)):
        base = len(steps)
        steps += _steps_for(plan.calls, service_name, values[i], reveal_at.get(i), base)
        last = max(k for k, c in enumerate(plan.calls) if c.reveals)
        reveal_at[i + 1] = Binding(step=base + last, path=list(plan.calls[last].reveals or ()))
        visit = PlannedVisit(
            service=service_name,
            service_title=spoken_title(library[service_name].title),
            hop=hops[i].name,
            phrase=plan.phrase,
            relation=plan.relation or hops[i].relation or hops[i].relation_of("{of}"),
        )
        if i in action_plans:
            action, j, aplan = action_plans[i]
            base = len(steps)
            steps += _steps_for(aplan.calls, service_name, values[j], reveal_at.get(j), base)
            writes = [k for k, c in enumerate(aplan.calls) if services[service_name].tools[c.tool].writes]
            visit = visit.model_copy(
                update={"action": PlannedAction(name=action.name, phrase=aplan.phrase, value=j)}
            )
            for crit in aplan.criteria:
                crit_id = f"c{len(criteria) + 1}"
                writer = f"{service_name}.{aplan.calls[writes[-1]].tool}" if writes else None
                criteria.append(
                    crit.model_copy(update={"id": crit_id, "service": service_name, "achieved_by": writer})
                )
                if writes:
                    writers[crit_id] = [base + k for k in writes]
        visits.append(visit)
    final_noun = VALUE_NOUNS[types[-1]]
    instruction_plan = InstructionPlan(
        start_value=values[0], value_types=list(types), visits=visits, start=started
    )
    instruction = render(instruction_plan, style, vocab.seeded(f"phrasing:{seed}"))  # type: ignore[arg-type]
    criteria.append(
        Criterion(
            id=f"c{len(criteria) + 1}",
            description=f"the final reply gives the {final_noun} found in the last step, and no other",
            kind="final_answer",
            match={"text": Condition(op="eq", value=values[-1])},
            value_kind=types[-1],
            max_chars=ANSWER_CHARS,
        )
    )
    edges = [
        {"from": walk[i], "to": walk[i + 1], "type": types[i + 1], "visit": i + 1}
        for i in range(len(walk) - 1)
    ]
    metadata = {
        "services": sorted(set(walk)),
        "distractors": distractors,
        "walk": walk,
        "value_types": types,
        "dependency_edges": edges,
        "hops": [h.name for h in hops],
        "actions": [{"visit": i, "action": a.name, "value": j} for i, a, j in actions],
        "final_reveal": reveal_at[len(walk)].model_dump(),
        "difficulty": "hard" if len(steps) >= 14 else "medium" if len(steps) >= 10 else "easy",
        "instruction_style": style,
        "instruction_plan": instruction_plan.model_dump(),
        "planted_values": list(values),
        "confusable_twins": twins,
    }
    if source is not None:  # the start value is read, not stated: the request must not give it
        metadata["start_source"] = {"service": source[0], "link": source[1].name}
    return Draft(
        seed=seed,
        walk=walk,
        distractors=distractors,
        services=services,
        instruction=instruction,
        steps=steps,
        criteria=criteria,
        values=values,
        reference_output=f"Done. The {final_noun} you asked for is {values[-1]}.",
        initial_state=initial_state,
        state_seeds={name: state_seed(seed, name) for name in distractors},
        metadata=metadata,
        writers=writers,
    )
