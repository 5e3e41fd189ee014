"""`garbage-reward`: write rewards that are not one number in [0, 1] where a verifier may read them.

It writes NaN, infinities, out-of-range and negative values, two numbers, a number with trailing
junk and JSON with extra keys into ``/logs/verifier/reward.txt|json`` and into the result files an
agent controls (``/app/reward.txt``, ``/app/reward.json``, ``/app/score.txt``). It breaks a bundle
whose verifier forwards or loosely cleans up a value the agent wrote.
"""

from __future__ import annotations

from envpipeline.redteam.base import RedTeamPolicy, TerminalAttack
from envpipeline.redteam.registry import register_policy

#: Reward file contents that must never count as a reward (each is `malformed_reward`).
GARBAGE_REWARDS = (
    "NaN",
    "inf",
    "-inf",
    "2.0",
    "-1",
    "1 1",
    "1.0junk",
    '{"reward": 1, "note": "passed"}',
    '{"score": 1, "passed": 1}',
    '{"reward": NaN}',
    "true",
)


def _write(path: str, text: str) -> str:
    return f"printf '%s\\n' {_quote(text)} > {path}\n"


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


class GarbageReward(RedTeamPolicy):
    name = "garbage-reward"
    description = "writes NaN, inf, 2.0, -1, '1 1', '1.0junk' and JSON with extra keys into the reward files"
    families = frozenset({"terminal"})

    def attack_terminal(self, attack: TerminalAttack) -> None:
        script = "mkdir -p /logs/verifier /app\n"
        script += _write("/logs/verifier/reward.txt", "2.0")
        script += _write("/logs/verifier/reward.json", '{"reward": 1, "note": "passed"}')
        script += _write("/app/reward.txt", "1.0junk")
        script += _write("/app/reward.json", '{"reward": 1, "note": "passed"}')
        script += _write("/app/score.txt", "inf")
        for index, value in enumerate(GARBAGE_REWARDS):
            script += _write(f"/logs/verifier/reward-{index}.txt", value)
        attack.run(script + "true\n")


register_policy(GarbageReward())
