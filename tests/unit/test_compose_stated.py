"""What a request states about a write is checked: the red team's `careless-constants` earns nothing."""

from __future__ import annotations

from envpipeline.compose.author import ComposeConfig
from envpipeline.compose.pipeline import compose_task
from envpipeline.compose.stated import pin_stated, stated_arguments
from envpipeline.models.task import Binding, Condition, Criterion, ToolCallStep
from envpipeline.redteam.base import ComposeAttack, RedTeamPolicy
from envpipeline.redteam.compose import red_team
from envpipeline.redteam.policies.careless_constants import changed
from envpipeline.redteam.registry import get_policy
from tests.unit.edited_records import record_level
from tests.unit.test_redteam import unpinned

INSTRUCTION = (
    "Create a trip to that city (traveler name 'Jade Quispe', start date '2026-08-15', 3 nights, "
    "note 'window seat please'). Use REF-1023."
)
TRIP = ToolCallStep(
    tool="expenses.create_trip",
    arguments={
        "destinationCity": None,
        "travelerName": "Jade Quispe",
        "startDate": "2026-08-15",
        "nights": 3,
        "note": "window seat please",
        "budget": 10,  # stated nowhere: the 10 in REF-1023 is no mention
    },
    bindings={"destinationCity": Binding(step=0, path=["city"])},
)
CRITERION = Criterion(
    id="c1",
    description="a trip to 'Auckland' exists",
    kind="record_exists",
    service="expenses",
    collection="trips",
    match={"destinationCity": Condition(op="eq", value="Auckland")},
)


def _states(**trip: object) -> dict[str, dict]:
    record = {
        "id": "trip_1",
        "destinationCity": "Auckland",
        "travelerName": "Jade Quispe",
        "startDate": "2026-08-15",
        "nights": 3.0,
        "note": "Window seat please. (sent by the assistant)",
        "budget": 10,
    }
    return {"expenses": {"trips": {"trip_1": {**record, **trip}}}}


def test_the_arguments_an_instruction_states_are_those_it_quotes_or_says_as_a_word():
    assert stated_arguments(TRIP, INSTRUCTION) == {
        "travelerName": "Jade Quispe",
        "startDate": "2026-08-15",
        "nights": 3,
        "note": "window seat please",
    }  # not the bound city, not the budget whose 10 appears only inside REF-1023


def test_a_write_criterion_checks_what_the_request_states_as_the_record_holds_it():
    pinned = pin_stated(CRITERION, [TRIP], _states(), INSTRUCTION)
    assert pinned.match == {
        "destinationCity": Condition(op="eq", value="Auckland"),
        "travelerName": Condition(op="eq", value="Jade Quispe"),
        "startDate": Condition(op="eq", value="2026-08-15"),
        "nights": Condition(op="eq", value=3),  # the record keeps 3.0: the same number
        "note": Condition(op="icontains", value="window seat please"),  # kept inside longer text
    }
    assert "traveler name 'Jade Quispe'" in pinned.description
    # a record that holds another traveler or stores nothing of the note: those stay unchecked
    assert "travelerName" not in pin_stated(CRITERION, [TRIP], _states(travelerName="Ana"), INSTRUCTION).match
    assert "note" not in pin_stated(CRITERION, [TRIP], _states(note=None), INSTRUCTION).match


def test_a_criterion_that_matches_no_single_record_is_left_as_it_is():
    two = _states()
    two["expenses"]["trips"]["trip_2"] = {**two["expenses"]["trips"]["trip_1"], "id": "trip_2"}
    assert pin_stated(CRITERION, [TRIP], two, INSTRUCTION) == CRITERION
    assert pin_stated(CRITERION, [TRIP], {"expenses": {"trips": {}}}, INSTRUCTION) == CRITERION
    absent = CRITERION.model_copy(update={"kind": "record_absent"})
    assert pin_stated(absent, [TRIP], _states(), INSTRUCTION) == absent


def test_a_trip_for_another_traveler_on_other_dates_earns_nothing():
    """Curated seed 6 asks for a trip to a city the chain finds, for 'Jade Quispe' from
    2026-08-15 to 2026-10-15. Its criterion checked only the city: a trip for anyone on any
    dates earned the reward (35 of the first 54 accepted curated tasks had such a stated detail
    unchecked). Now the criterion holds the traveler and the dates, and the policy that changes
    them fails; on the criteria as they were it breaks the task."""
    task = compose_task(6, ComposeConfig())
    assert task.status == "accepted"
    trip = next(c for c in task.criteria if c.collection == "trips")
    assert {"travelerName", "travelerEmail", "startDate", "endDate"} <= set(trip.match)
    policy = get_policy("careless-constants")
    assert policy.applies_to(task)
    (outcome,) = red_team(task, policies=[policy])
    assert outcome.binary == 0.0 and trip.id in outcome.failed
    (weak,) = red_team(unpinned(task), policies=[policy])
    assert weak.broke
    gate = next(g for g in task.gates if g.name == "red_team")
    assert gate.evidence["policies"]["careless-constants"]["binary"] == 0.0


def test_a_stated_list_is_an_argument_the_request_states_and_is_checked_whole():
    """Lists were left out: Telegram's create_group for user ids [0] or a poll with options
    ['delta-570'] was checked without them (2 of 60 whole-library tasks paid a write with other
    members). A list written out as the request writes it is stated; one it never writes is not."""
    step = ToolCallStep(
        tool="chat.create_group",
        arguments={"title": "Ops", "user_ids": [0, 3], "tags": ["ops"], "admins": [7], "meta": [{"a": 1}]},
    )
    instruction = "Create a group 'Ops' (user ids [0, 3], tags [\"ops\"]) with 7 admins."
    assert stated_arguments(step, instruction) == {"title": "Ops", "user_ids": [0, 3], "tags": ["ops"]}
    group = Criterion(
        id="c1",
        description="a group 'Ops' exists",
        kind="record_exists",
        service="chat",
        collection="groups",
        match={"title": Condition(op="eq", value="Ops")},
    )
    states = {
        "chat": {"groups": {"g1": {"title": "Ops", "user_ids": [0, 3], "tags": ["ops"], "admins": [7]}}}
    }
    pinned = pin_stated(group, [step], states, instruction)
    assert pinned.match["user_ids"] == Condition(op="eq", value=[0, 3])
    assert pinned.match["tags"] == Condition(op="eq", value=["ops"])
    assert "admins" not in pinned.match


class _ChangedArgument(RedTeamPolicy):
    """The reference with one argument changed wherever a call passes it (a list's last item moved on)."""

    name = "changed-argument"
    description = "the reference, with one stated argument changed"
    families = frozenset({"compose"})

    def __init__(self, argument: str) -> None:
        self.argument = argument

    def attack_compose(self, attack: ComposeAttack) -> str:
        for step in attack.reference.steps:
            arguments = dict(step.arguments)
            if self.argument in arguments:
                arguments[self.argument] = changed(arguments[self.argument])
            attack.call(step.tool, arguments)
        return attack.reference.output


def _without(task, criterion: Criterion, field: str):
    """`task` with `field` left out of `criterion`'s conditions (the criteria as they were)."""
    loose = criterion.model_copy(update={"match": {k: v for k, v in criterion.match.items() if k != field}})
    return task.model_copy(update={"criteria": [loose if c.id == criterion.id else c for c in task.criteria]})


def test_a_poll_with_other_options_earns_nothing():
    """Whole-library seed 151 asks for a poll with options ['delta-570']: the reference with
    other options earns nothing now; with the list left out of its criterion (and the created
    poll's members not pinned by the state check, as before) it earned the reward. The careless
    policy (every stated detail changed, the list's last item too) earns nothing."""
    task = compose_task(151, ComposeConfig(library_scope="all"))
    assert task.status == "accepted"
    poll = next(c for c in task.criteria if c.collection == "polls")
    preserved = next(c for c in task.criteria if c.kind == "state_preserved")
    assert isinstance(poll.match["options"].value, list)
    (outcome,) = red_team(task, policies=[_ChangedArgument("options")])
    assert outcome.binary == 0.0 and outcome.failed == [poll.id, preserved.id], (
        "the created poll is pinned too"
    )
    (half,) = red_team(_without(task, poll, "options"), policies=[_ChangedArgument("options")])
    assert half.failed == [preserved.id], "without the list in its criterion, the state check holds it"
    (weak,) = red_team(record_level(_without(task, poll, "options")), policies=[_ChangedArgument("options")])
    assert weak.broke
    (careless,) = red_team(task, policies=[get_policy("careless-constants")])
    assert careless.binary == 0.0 and poll.id in careless.failed


def test_a_channel_created_with_another_topic_earns_nothing():
    """Curated seed 160 asks for a chat channel 'team-maple-291' with the topic 'Support Escalation
    Maple' and a person added to it. The criterion is achieved by the second write (adding the
    member), and only that write's stated arguments were checked: a channel with any topic earned
    the reward. `careless-constants` did not see it (it changes every stated argument at once, and
    the channel's name is checked); changing one stated argument at a time did, in 4 of 281
    accepted curated tasks, all this shape. Now every write of the action is pinned."""
    task = compose_task(160, ComposeConfig())
    assert task.status == "accepted"
    channel = next(c for c in task.criteria if c.collection == "channels")
    assert channel.match["topic"].value == "Support Escalation Maple"
    assert {"name", "members"} <= set(channel.match)  # what the member's write pinned, as before
    (outcome,) = red_team(task, policies=[_ChangedArgument("topic")])
    assert outcome.binary == 0.0 and outcome.failed == [channel.id]
    (weak,) = red_team(_without(task, channel, "topic"), policies=[_ChangedArgument("topic")])
    assert weak.broke
