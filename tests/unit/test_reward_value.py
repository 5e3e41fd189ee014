"""Issue 12's out-of-range rewards: a reward is one plain decimal number in [0, 1], read the same
way in reward.txt, reward.json and a recorded rollouts table; anything else is a malformed
reward with a reason, never a crash and never a value outside [0, 1]."""

from __future__ import annotations

from pathlib import Path

import pytest

from envpipeline.errors import ConfigError
from envpipeline.forge.passrates import pass_rates_from_rollouts
from envpipeline.terminal.trial import parse_reward

#: Each probe of the issue, with a word the reason must hold.
OUT_OF_RANGE_OR_NOT_PLAIN = {
    "2": "outside [0, 1]",
    "-1": "outside [0, 1]",
    "1.0000001": "outside [0, 1]",
    "1_0": "not a plain decimal",
    "nan": "not a plain decimal",
    "inf": "not a plain decimal",
    "-Infinity": "not a plain decimal",
    "1e400": "not a plain decimal",
    "1e-1": "not a plain decimal",
    "0x1": "not a plain decimal",
    "\u0661": "not a plain decimal",  # ARABIC-INDIC DIGIT ONE: float() reads it as 1.0
    "9" * 400: "characters",
    "1" + "0" * 4999: "characters",
    "true": "not a plain decimal",
}


@pytest.mark.parametrize("text", sorted(OUT_OF_RANGE_OR_NOT_PLAIN), ids=lambda t: t[:12])
def test_reward_txt_outside_the_rule_is_malformed_with_a_reason(text: str) -> None:
    reward, problem = parse_reward(None, text.encode())
    assert reward is None and OUT_OF_RANGE_OR_NOT_PLAIN[text] in problem, problem
    assert len(problem) < 200  # a 5,000-digit reward is never echoed back


@pytest.mark.parametrize(
    "raw",
    [
        b"2",
        b"-1",
        b'{"reward": 2}',
        b'{"reward": -0.5}',
        b'{"reward": 1e400}',
        b'{"reward": NaN}',
        b'{"reward": Infinity}',
        b'{"reward": "1_0"}',
        b'{"reward": true}',
        b'{"reward": 1, "other": 1e400}',
        b'{"reward": ' + b"9" * 5000 + b"}",
        b"1" + b"0" * 5000,
        b"[" * 100_000 + b"]" * 100_000,
        b"{}",
    ],
    ids=lambda raw: raw[:20].decode(),
)
def test_reward_json_outside_the_rule_is_malformed_never_a_crash(raw: bytes) -> None:
    reward, problem = parse_reward(raw, None)
    assert reward is None and problem, problem


@pytest.mark.parametrize(
    ("txt", "expected"),
    [(b"1", 1.0), (b"0", 0.0), (b" 0.5\n", 0.5), (b".25", 0.25), (b"+1.000", 1.0), (b"-0", 0.0)],
)
def test_plain_decimals_in_the_unit_interval_are_rewards(txt: bytes, expected: float) -> None:
    assert parse_reward(None, txt) == (expected, "")
    as_json = txt.strip().lstrip(b"+")
    if not as_json.startswith(b"."):  # JSON has no ".25"
        assert parse_reward(b'{"reward": ' + as_json + b"}", None) == (expected, "")


@pytest.mark.parametrize("reward", ['"1_0"', "2", "-1", "1e400", "NaN", '"inf"', "9" * 5000, "true"])
def test_a_rollouts_table_reads_rewards_by_the_same_rule(tmp_path: Path, reward: str) -> None:
    table = tmp_path / "rollouts.jsonl"
    table.write_text('{"seed_id": "a", "reward": 1}\n' + f'{{"seed_id": "a", "reward": {reward}}}\n')
    with pytest.raises(ConfigError, match=r":2: .*plain decimal"):
        pass_rates_from_rollouts(table)


def test_a_rollouts_table_of_good_rewards_gives_rates_in_the_unit_interval(tmp_path: Path) -> None:
    table = tmp_path / "rollouts.jsonl"
    table.write_text('{"seed_id": "a", "reward": 1}\n{"seed_id": "a", "reward": "0.5"}\n')
    (rate,) = pass_rates_from_rollouts(table)
    assert (rate.seed_id, rate.pass_rate, rate.rollouts) == ("a", 0.75, 2)


def test_sidecar_metrics_may_be_any_finite_number() -> None:
    """Only the reward is held to the plain-decimal rule; json.dumps writes small floats as 1e-05."""
    assert parse_reward(b'{"reward": 1.0, "seconds": 1.2e-05, "delta": -3}', None) == (1.0, "")
