"""A leak check must see a value the way a reader does: 'REF 6295', 'June 15', '4:15 pm', a person's
address. Each spelling below gives its value away; each near miss does not."""

from __future__ import annotations

import pytest

from envpipeline.compose.gates import chain_hidden
from envpipeline.compose.pipeline import ComposeConfig, draft_record
from envpipeline.models.criteria import ValueKind
from envpipeline.rubric import answer_is
from envpipeline.services.mcp_values import harmonize
from envpipeline.value_mentions import code_key, dates_in, stated_values, states_value

GIVEN_AWAY = [
    ("Find REF 9251 first", "REF-9251"),
    ("the code ref9251", "REF-9251"),
    ("the AZ-452 flight", "AZ452"),
    ("the Team-Lunch nimbus event", "Team Lunch Nimbus"),
    ("Lisbon's office", "Lisbon"),
    ("write to hana.silva@stark.test", "Hana Silva"),
    ("on June 15", "2026-06-15"),
    ("on the 15th of Jun.", "2026-06-15"),
    ("by 6/15", "2026-06-15"),
    ("on 15.06.2026", "2026-06-15"),
    ("on 2026/06/15", "2026-06-15"),
    ("on 3/4/2026", "2026-03-04"),
    ("on March 4th", "2026-03-04"),
    ("at 4:15 pm", "16:15"),
    ("at 4.15PM", "16:15"),
    ("at 16h15", "16:15"),
    ("at 4 p.m.", "16:00"),
    ("at 9:05 am", "09:05"),
    ("pay $1,250 now", "1250.00"),
    ("pay 1250 dollars", "1250.00"),
    ("pay 1,250.00", "1250.00"),
    ("the order ORD 00200", "ORD-00200"),
]

NOT_GIVEN = [
    ("the code REF 92510", "REF-9251"),
    ("June 150 units", "2026-06-15"),
    ("3/4 of the budget", "2026-03-04"),
    ("June 14", "2026-06-15"),
    ("it costs 16.15", "16:15"),
    ("at 14 pm", "16:00"),
    ("at 4 am", "16:00"),
    ("12500 items", "1250.00"),
    ("$1250.50", "1250.00"),
    ("mail hana.sato@stark.test", "Hana Silva"),
    ("ab", "ab"),
]


@pytest.mark.parametrize(("text", "value"), GIVEN_AWAY)
def test_a_value_stated_in_another_spelling_is_stated(text: str, value: str) -> None:
    assert states_value(text, value)


@pytest.mark.parametrize(("text", "value"), NOT_GIVEN)
def test_a_near_miss_is_not_the_value(text: str, value: str) -> None:
    assert not states_value(text, value)


def test_a_verbatim_mention_still_counts_and_each_value_is_named_once() -> None:
    text = "Reply to 'Umar Mensah' about REF-9251 (umar mensah)"
    assert stated_values(text, ["Umar Mensah", "REF-9251", "Umar Mensah", "", "Lima"]) == [
        "Umar Mensah",
        "REF-9251",
    ]


def test_the_gate_rejects_a_paraphrased_leak_the_verbatim_check_let_through() -> None:
    gate = chain_hidden("Book the flight for HANA-SILVA on June 15.", ["Hana Silva", "2026-06-15"])
    assert not gate.passed and gate.evidence["leaked"] == ["Hana Silva", "2026-06-15"]


def test_no_address_is_made_from_a_person_the_agent_must_find() -> None:
    row = {"travelerName": "Hana Silva", "travelerEmail": "x@y.test"}
    assert harmonize(dict(row), {"travelerName"})["travelerEmail"].startswith("hana.silva@")
    assert harmonize(dict(row), {"travelerName"}, secret={"travelerName"})["travelerEmail"] == "x@y.test"


def test_no_default_task_states_a_value_its_agent_must_find() -> None:
    """'create a trip with its traveler name set to the holder of the account charged with REF-6295
    (traveler email 'hana.silva@stark.test', ...)': the trip's stated email was made from the
    person the chain finds, in 21 of seeds 0-299 (20 of them accepted) before."""
    leaking = []
    for seed in range(300):
        record = draft_record(seed, ComposeConfig())
        hidden = [str(v) for v in record.metadata["hidden_values"]]
        if said := stated_values(record.instruction, hidden):
            leaking.append((seed, said))
    assert leaking == []


@pytest.mark.parametrize(
    ("reply", "expected", "kind", "passes"),
    [
        ("June 15, 2026", "2026-06-15", "date", True),
        ("It was on the 15th of June.", "2026-06-15", "date", True),
        ("15/06/2026", "2026-06-15", "date", True),
        ("2026-06-15 or June 16", "2026-06-15", "date", False),  # two dates, one spelled otherwise
        ("June 15, 2025", "2026-06-15", "date", False),
        ("REF 9251", "REF-9251", "code", True),
        ("It is REF-9251 or REF 9252.", "REF-9251", "code", False),
        ("SK 961", "SK961", "flight_number", True),
        ("SK961 or NR 188", "SK961", "flight_number", False),
        ("Mensah, Umar", "Umar Mensah", "person", True),
        ("Umar Mensah or Kim, Noor", "Umar Mensah", "person", False),
        ("It is Umar Mensah, Noor's colleague.", "Umar Mensah", "person", True),
    ],
)
def test_a_final_answer_is_read_in_any_spelling_and_so_is_a_hedge(
    reply: str, expected: str, kind: ValueKind, passes: bool
) -> None:
    """A right answer spelled as people write it passes; naming a second candidate in another
    spelling ('2026-06-15 or June 16', which passed before) fails."""
    assert answer_is(reply, expected, kind, None) is passes


def test_dates_are_found_in_every_spelling_with_their_readings() -> None:
    assert dates_in("June 15, 2026, not 2026-06-16 or 3/4/2026; 15 Jun") == [
        {"2026-06-15"},
        {"2026-06-16"},
        {"2026-03-04", "2026-04-03"},
        {"????-06-15"},
    ]
    assert dates_in("June 150 units, 12.5 kg, 2026") == []
    assert code_key("ref 9251") == code_key("REF-9251") == "ref9251"
