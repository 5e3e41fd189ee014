"""Instruction styles of composed tasks: explicit steps, hints, goal-level requests (the difficulty knob)."""

from __future__ import annotations

import random
import re
from collections import Counter

import pytest
from click.testing import CliRunner
from pydantic import ValidationError

from envpipeline.cli import main
from envpipeline.compose import gates
from envpipeline.compose.author import ComposeConfig, draft_task, plant_action, plant_hop
from envpipeline.compose.instructions import (
    InstructionPlan,
    PlannedAction,
    PlannedVisit,
    StartSource,
    draw_style,
    goal_values,
    render,
)
from envpipeline.compose.phrasing import HINT_FRAMES, HINT_INTROS, action_join, without_service_hints
from envpipeline.compose.pipeline import compose_task
from envpipeline.services import vocab
from envpipeline.services.library.calendar import Event
from envpipeline.services.links import (
    VALUE_PHRASES,
    Action,
    ActionPlan,
    Hop,
    HopPlan,
    PlannedCall,
    spoken_title,
)
from envpipeline.services.registry import all_services, get_service

SEEDS = range(40)


def _drafts(style: str, seeds=SEEDS):
    config = ComposeConfig(instruction_style=style)  # type: ignore[arg-type]
    return [d for d in (draft_task(s, config) for s in seeds) if d.failure is None]


def _service_words(draft) -> list[str]:
    """How a request could point at one of the task's services (where to act): 'in X', 'using X', ..."""
    titles = [all_services()[name].title.lower() for name in draft.walk]
    return [form.format(t) for t in titles for form in ("in {},", "using {}", "({})", "{} service", "in {}:")]


def test_explicit_instructions_number_every_visit_and_name_its_service():
    for draft in _drafts("explicit"):
        text = draft.instruction
        assert draft.metadata["instruction_style"] == "explicit"
        for i in range(1, len(draft.walk) + 1):
            assert re.search(rf"(?m)^\W{{0,2}}(?:Step )?#?{i}\b", text), (i, text)
        for name in draft.walk:
            assert all_services()[name].title in text, (name, text)


def test_an_action_that_opens_with_where_it_acts_reads_as_a_sentence():
    """A join "use X to {phrase}" before an imported service's phrase ("in the issue tracker
    service, create ...") read "use the starting title to in the issue tracker service" in 8 of 300
    default instructions."""
    assert action_join(" Once you have it, use {source} to {phrase}.", "in the x service, create a y") == (
        " Once you have it, use {source} here: {phrase}."
    )
    assert action_join(" Once you have it, use {source} to {phrase}.", "book a trip") == (
        " Once you have it, use {source} to {phrase}."
    )
    for draft in _drafts("explicit", [20, 28, *range(40, 80)]):
        assert " to in the " not in draft.instruction, draft.instruction


def test_goal_requests_name_no_service_and_no_step():
    drafts = _drafts("goal")
    assert drafts
    for draft in drafts:
        text = draft.instruction.lower()
        assert draft.metadata["instruction_style"] == "goal"
        assert not re.search(r"\bstep\b", text), text
        assert "service" not in text, text
        for words in _service_words(draft):
            assert words not in text, (words, text)
        assert draft.values[0].lower() in text  # the starting value is given


def _expanded(plan: InstructionPlan, text: str, names: dict[str, int]) -> str:
    """`text` with every name a request gave a value replaced by that value's full description."""
    text = re.sub(r" \(call it [^()]*\)", "", text)
    for name, index in sorted(names.items(), key=lambda item: -len(item[0])):
        text = plan.describe(index).join(re.split(rf"\b{re.escape(name)}\b", text))
    return text


def test_goal_requests_describe_the_answer_through_the_chain():
    """The answer is fixed by relations down to the start value: the plan's description is in the
    text, or its relations down to a value an earlier sentence described and named ("that
    reference code" where it is the chain's only one, else "title A", named where first described)."""
    named = 0
    for draft in _drafts("goal"):
        plan = InstructionPlan.model_validate(draft.metadata["instruction_plan"])
        n = len(plan.visits)
        phrases, names = goal_values(plan)
        *_, closing = draft.instruction.split("\n")
        assert phrases[-1] in closing
        assert _expanded(plan, phrases[-1], names) == plan.describe(n)
        for name in names:
            if not name.startswith("that "):
                named += 1
                introduced = draft.instruction.find(f"(call it {name})")
                assert introduced >= 0 and draft.instruction.count(f"(call it {name})") == 1, name
                assert re.search(rf"\b{re.escape(name)}\b", draft.instruction).start() > introduced
        assert plan.start_value == draft.values[0]
        assert [v.service for v in plan.visits] == draft.walk
    assert named >= 5


def _plan(types: list[str], relations: list[str], actions: dict[int, int]) -> InstructionPlan:
    visits = [
        PlannedVisit(
            service=f"s{i}",
            service_title=f"S{i}",
            hop=f"h{i}",
            phrase="look it up",
            relation=relation,
            action=PlannedAction(
                name=f"a{i}", phrase=f"file {VALUE_PHRASES[types[actions[i]]]}", value=actions[i]
            )
            if i in actions
            else None,
        )
        for i, relation in enumerate(relations)
    ]
    return InstructionPlan(start_value="Lumen", value_types=types, visits=visits)


def test_a_value_an_earlier_sentence_described_is_referred_to_not_described_again():
    """Before, each sentence described its value down to the start value again: the curated
    default's goal-level requests had a median of 1,145 characters, the whole library's 1,437; now
    849 and 1,052 (explicit steps: 1,422 and 1,767)."""
    plan = _plan(
        ["title", "code", "email", "title"],
        ["the code on {of}", "the owner email of {of}", "the subject sent by {of}"],
        {1: 1, 2: 2},
    )
    phrases, names = plan.said([1, 2, 3])
    assert phrases == [
        "the code on 'Lumen'",  # nothing described before
        "the owner email of that reference code",  # the chain's only code
        "the subject sent by that email address",  # the latest described value: the only email
    ]
    assert names == {"that reference code": 1, "that email address": 2}
    text = render(plan, "goal", random.Random(0))
    assert (
        "the owner email of that reference code" in text and "the subject sent by that email address" in text
    )
    assert text.count("'Lumen'") == 2  # the opening and the first action only

    titles = _plan(["title"] * 4, ["the title of {of}", "the title near {of}", "the title after {of}"], {})
    phrases, names = titles.said([2, 3])
    assert phrases == ["the title near the title of 'Lumen' (call it title A)", "the title after title A"]
    assert names == {"title A": 2}
    assert titles.said([1, 3])[0][1] == titles.describe(3)  # one relation from the start: said again
    # a sentence that says the value before an "'s" cannot name it there ("(call it title A)'s trip"),
    # nor a value inside it whose naming would end up there too: each relation around it ends with it
    assert titles.said([2, 3], possessive=frozenset({0}))[0] == [titles.describe(2), titles.describe(3)]
    deeper = _plan(
        ["title"] * 5,
        ["the title of {of}", "the title near {of}", "the title after {of}", "the title below {of}"],
        {},
    )
    assert deeper.said([3, 4], possessive=frozenset({0}))[0] == [deeper.describe(3), deeper.describe(4)]
    listed = _plan(
        ["title"] * 5,
        [
            "the title of {of}",
            "the title near {of}",
            "the title after {of} in the list",
            "the title below {of}",
        ],
        {},
    )
    assert listed.said([3, 4], possessive=frozenset({0}))[0] == [
        "the title after the title near the title of 'Lumen' (call it title A) in the list",
        "the title below the title after title A in the list",
    ]


def test_a_chain_that_starts_at_a_read_says_where_to_read_and_never_the_value():
    """A chain may start at a read that takes no argument (`links.Source`): explicit steps open
    with that read in its service; a request starts from the value it gives, described by the
    read, and every value down the chain is described through it. The start value itself is
    what the agent must find, so no style quotes it."""
    plan = _plan(["code", "title"], ["the title tagged {of}"], {0: 0}).model_copy(
        update={
            "start_value": "REF-4411",
            "start": StartSource(
                service="alpaca",
                service_title="Alpaca Trading",
                phrase="use the alpaca trading service's 'get_account_info' tool and note the result it returns",
                relation="the result that get account info gives",
            ),
        }
    )
    for seed in range(12):
        explicit = render(plan, "explicit", random.Random(seed))
        assert "in Alpaca Trading, " in explicit.splitlines()[0]
        assert "'get_account_info' tool" in explicit.splitlines()[0]
        goal = render(plan, "goal", random.Random(seed))
        assert "the result that get account info gives" in goal.splitlines()[0]
        assert "Alpaca" not in goal
        assert "the title tagged the result that get account info gives" in goal
        for text in (explicit, goal, render(plan, "hinted", random.Random(seed))):
            assert "REF-4411" not in text
    assert plan.describe(1) == "the title tagged the result that get account info gives"


def test_hinted_instructions_point_at_some_lookups_but_not_all():
    for draft in _drafts("hinted"):
        plan = InstructionPlan.model_validate(draft.metadata["instruction_plan"])
        goal_part, hints = draft.instruction.rsplit("\n", 1)
        assert not re.search(r"\bstep\b", goal_part.lower())
        assert hints.startswith(HINT_INTROS), hints
        hinted = sum(hints.count(frame.split("{")[0]) for frame in HINT_FRAMES)
        assert 1 <= hinted <= len(plan.visits) // 2, hints


def test_no_style_leaks_a_value_the_agent_must_discover():
    """Rendering adds no leak: a hidden value shows only where a planted constant happens to equal it
    (the same under every style; the chain_hidden gate rejects those candidates), and that is rare."""
    by_style = {style: _drafts(style) for style in ("explicit", "hinted", "goal")}

    def leaks(draft) -> set[str]:
        return {v for v in draft.values[1:] if v.lower() in draft.instruction.lower()}

    explicit = [leaks(d) for d in by_style["explicit"]]
    for style in ("hinted", "goal"):
        assert [leaks(d) for d in by_style[style]] == explicit, style
    assert sum(bool(x) for x in explicit) <= len(explicit) // 10


def test_style_changes_the_text_only():
    """The same seed under every style: same walk, state, criteria and reference calls.

    Only discovery listings (argument-free reads, `compose.discovery`) may differ: an id the
    explicit text shows need not be looked up.
    """
    seed = next(s for s in SEEDS if draft_task(s, ComposeConfig()).failure is None)
    by_style = {s: draft_task(seed, ComposeConfig(instruction_style=s)) for s in ("explicit", "goal")}
    a, b = by_style["explicit"], by_style["goal"]
    assert a.instruction != b.instruction
    assert a.initial_state == b.initial_state
    assert [c.model_dump() for c in a.criteria] == [c.model_dump() for c in b.criteria]

    def planned(steps):
        return [(s.tool, {k: v for k, v in s.arguments.items()}) for s in steps if s.arguments]

    assert planned(a.steps) == planned(b.steps)


def test_balanced_runs_are_mostly_goal_level_and_deterministic():
    styles = Counter(draw_style("balanced", seed) for seed in range(1000))
    assert set(styles) == {"explicit", "hinted", "goal"}
    assert styles["goal"] >= 400, styles
    assert [draw_style("balanced", s) for s in range(50)] == [draw_style("balanced", s) for s in range(50)]
    with pytest.raises(ValueError, match="unknown instruction style 'easy'"):
        draw_style("easy", 0)


def test_phrasings_vary_across_tasks():
    openings = {
        d.instruction.splitlines()[0].replace(d.values[0], "V").split("'")[0] for d in _drafts("goal")
    }
    assert len(openings) >= 5, openings


def test_goal_tasks_still_pass_every_gate():
    config = ComposeConfig(instruction_style="goal")
    records = [compose_task(seed, config) for seed in range(12)]
    accepted = [r for r in records if r.status == "accepted"]
    assert accepted, [r.reasons for r in records]
    for record in accepted:
        assert record.metadata["instruction_style"] == "goal"
        assert all(g.passed for g in record.gates)


def test_service_hints_are_removed_from_goal_phrases():
    assert (
        without_service_hints("in online banking, pay that person 10.00 USD") == "pay that person 10.00 USD"
    )
    assert without_service_hints("log a call with that person in the CRM on 2026-01-08") == (
        "log a call with that person on 2026-01-08"
    )
    assert "team chat" not in without_service_hints("look up that person in the team chat directory")


def test_a_service_title_with_a_parenthesis_reads_as_a_name():
    """Imported services carry remarks in their titles ("GitHub (official MCP server)"): requests
    name them without the remark, and a remark's commas no longer cut a goal-level phrase short
    (it read "Please r2, d1, hyperdrive) service, create a d1 database ...")."""
    assert (
        spoken_title("Cloudflare Workers bindings (KV, R2, D1, Hyperdrive)") == "Cloudflare Workers bindings"
    )
    assert spoken_title("GitHub (official MCP server)") == "GitHub" and spoken_title("Calendar") == "Calendar"
    phrase = "in the cloudflare workers bindings (kv, r2, d1, hyperdrive) service, create a d1 database"
    assert without_service_hints(phrase) == "create a d1 database"
    config = ComposeConfig(library_scope="all")
    drafts = [draft_task(seed, config) for seed in range(60)]
    texts = [d.instruction for d in drafts if d.failure is None]
    titled = [t for t in texts if "(" in t and "service" in t]
    assert len(texts) >= 10
    assert not any(re.search(r"\) service|\(official|\(reference mcp", t, re.IGNORECASE) for t in texts), (
        titled[:2]
    )


def test_an_unknown_style_is_refused_in_config_and_cli(tmp_path):
    with pytest.raises(ValidationError, match="instruction_style"):
        ComposeConfig(instruction_style="easy")  # type: ignore[arg-type]
    result = CliRunner().invoke(
        main, ["compose", "--tasks", "1", "--instruction-style", "easy", "--out", str(tmp_path / "o")]
    )
    assert result.exit_code != 0 and "--instruction-style" in result.output


def _plant_meetup(state, rng, value: str) -> ActionPlan:
    """An action that quotes a value it draws itself (the meetup's city)."""
    city = vocab.city(rng)[0]
    eid = f"evt_{900 + len(state.events)}"
    state.events[eid] = Event(
        id=eid, summary="Meetup", location=city, start="2026-05-01T18:00", end="2026-05-01T20:00"
    )
    return ActionPlan([], [], f"plan a meetup in '{city}' for {value}")


def test_an_action_that_would_quote_a_hidden_value_is_planted_again_and_its_first_planting_undone():
    calendar = get_service("calendar")
    meetup = Action("plan_meetup", "person", _plant_meetup)
    service = calendar(calendar.generate_state(vocab.seeded("meetup")))
    before = dict(service.state.events)
    first_city = vocab.city(vocab.seeded(11))[0]  # what the first planting draws

    plan = plant_action(service, meetup, vocab.seeded(11), "Ada", hidden=[first_city, "Ada Lovelace"])
    assert first_city.lower() not in plan.phrase.lower()
    added = [e for eid, e in service.state.events.items() if eid not in before]
    assert len(added) == 1 and added[0].location in plan.phrase  # the leaking planting was undone
    assert all(service.state.events[eid] == e for eid, e in before.items())


def test_an_action_that_always_leaks_is_kept_for_the_gate_to_reject():
    calendar = get_service("calendar")
    meetup = Action("plan_meetup", "person", _plant_meetup)
    service = calendar(calendar.generate_state(vocab.seeded("meetup")))
    before = set(service.state.events)
    every_city = [c[0] for c in vocab.CITIES]

    plan = plant_action(service, meetup, vocab.seeded(11), "Ada", hidden=every_city)
    assert any(c.lower() in plan.phrase.lower() for c in every_city)
    assert len(set(service.state.events) - before) == 1  # one planting kept of PLANT_TRIES
    assert not gates.chain_hidden(plan.phrase, every_city).passed


def _plant_venue(state, rng, value: str) -> HopPlan:
    """A hop that draws its answer (the venue city of a new event titled `value`)."""
    city = vocab.city(rng)[0]
    eid = f"evt_{900 + len(state.events)}"
    state.events[eid] = Event(
        id=eid, summary=value, location=city, start="2026-05-01T18:00", end="2026-05-01T20:00"
    )
    return HopPlan(
        [PlannedCall("search_events", {"query": value}, reveals=("events", 0, "location"))], city, ""
    )


def test_a_hop_that_would_reveal_a_value_the_chain_already_holds_is_planted_again():
    """A loop (the start city found again) would let the instruction quote the answer it asks for,
    and a later visit could clobber the first planting of that value."""
    calendar = get_service("calendar")
    venue = Hop("event_venue", "title", "city", _plant_venue)
    service = calendar(calendar.generate_state(vocab.seeded("venue")))
    before = dict(service.state.events)
    first_city = vocab.city(vocab.seeded(5))[0]

    plan = plant_hop(service, venue, vocab.seeded(5), "Launch Party", known=[first_city, "Launch Party"])
    assert plan.output != first_city
    added = [e for eid, e in service.state.events.items() if eid not in before]
    assert [e.location for e in added] == [plan.output]


def _plant_listed(state, rng, value: str) -> HopPlan:
    """A hop whose phrase states a constant it draws (a listing's required filter)."""
    city = vocab.city(rng)[0]
    return HopPlan([], f"REF-{rng.randint(1000, 9999)}", f"list the events in {city!r}", "")


def test_a_hop_that_would_state_a_hidden_value_is_planted_again():
    """A listing hop that draws the record planted for a value the agent must discover states it
    as its filter ("the post comments with post id 'REF-3561'", whole-library seed 24; "the
    message listed with folder id 'REF-3210'" after a read start, seed 94; both rejected by
    ``chain_hidden``): it is planted again."""
    calendar = get_service("calendar")
    listed = Hop("listed", "title", "code", _plant_listed)
    service = calendar(calendar.generate_state(vocab.seeded("listed")))
    first_city = vocab.city(vocab.seeded(7))[0]
    plan = plant_hop(service, listed, vocab.seeded(7), "Launch Party", known=[], hidden=[first_city])
    assert first_city not in plan.phrase
    assert plant_hop(service, listed, vocab.seeded(7), "Launch Party", known=[]).phrase.endswith(
        f"{first_city!r}"
    )


def test_curated_instructions_read_without_doubled_words_or_wrong_articles():
    """What a reader trips over, over 150 curated drafts: a relation written "with the email {of}"
    read "the shop customer with the email email address A" (9 of 300 default instructions); an
    action read "file a unpaid leave request"; a relation parsed from a link name read "the traveler
    email of the get whose trip is" (`test_compose_variants`)."""
    config = ComposeConfig()
    for seed in range(150):
        text = draft_task(seed, config).instruction
        unquoted = re.sub(r"'[^']*'", "''", text)
        assert not re.search(r"\b(\w+) \1\b", unquoted), (seed, re.search(r"\b(\w+) \1\b", unquoted))
        assert not re.search(r"\ba [aeiou]", unquoted), (seed, re.search(r".{30}\ba [aeiou]\w*", unquoted))
        assert not re.search(r"\bof the (get|fetch|retrieve)\b", unquoted), seed
