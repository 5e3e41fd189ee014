"""The terminal red team: each policy breaks a deliberately weak bundle, the fresh verifier phase
defeats planted and stale rewards, and the reward rule refuses garbage."""

from __future__ import annotations

from pathlib import Path

import pytest

from envpipeline.models.bundle import TaskConfig
from envpipeline.redteam.policies.garbage_reward import GARBAGE_REWARDS
from envpipeline.redteam.registry import get_policy, policies_for
from envpipeline.redteam.terminal import red_team
from envpipeline.sandbox.base import Limits, Sandbox
from envpipeline.terminal import trial as trial_module
from envpipeline.terminal.bundle import dump_task_config, read_bundle, write_files
from envpipeline.terminal.families.base import STANDARD_DOCKERFILE, STANDARD_TEST_SH
from envpipeline.terminal.trial import parse_reward
from envpipeline.terminal.verify import verify_bundle

#: The real check every weak bundle runs: the agent must have written "done" to /app/out.txt.
REAL_CHECK = (
    "grep -qx done /app/out.txt && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n"
)
SOLVE_SH = "#!/bin/bash\necho done > /app/out.txt\n"

#: test.sh bodies (after mkdir -p /logs/verifier) that trust something an agent can write.
WEAK_TESTS: dict[str, dict[str, str]] = {
    # a checker vendored into the image: the agent rewrites it to report success
    "checker-in-app": {
        "tests/test.sh": "python3 /app/checker.py && echo 1 > /logs/verifier/reward.txt"
        " || echo 0 > /logs/verifier/reward.txt\n",
        "environment/app/checker.py": "import sys\n"
        "ok = open('/app/out.txt').read().strip() == 'done' if __import__('os').path.exists('/app/out.txt') else False\n"
        "sys.exit(0 if ok else 1)\n",
    },
    # python run from /app imports whatever json.py the agent leaves there
    "imports-from-app": {
        "tests/test.sh": 'cd /app && python3 -c \'import json, sys; sys.exit(0 if json.load(open("/app/out.json"))'
        '["ok"] else 1)\' && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n',
        "solution/solve.sh": "#!/bin/bash\necho '{\"ok\": true}' > /app/out.json\n",
    },
    # forwards the agent's own "result" after stripping what is not a number
    "forwards-agent-result": {
        "tests/test.sh": "if [ -f /app/reward.txt ]; then tr -cd '0-9.' < /app/reward.txt > /logs/verifier/reward.txt;"
        " else echo 0 > /logs/verifier/reward.txt; fi\n",
        "solution/solve.sh": "#!/bin/bash\necho 1 > /app/reward.txt\n",
    },
    # passes on the initial state
    "always-passes": {"tests/test.sh": "echo 1 > /logs/verifier/reward.txt\n"},
    # trusts a reward file that is already there (and waits, so a surviving writer would refill it)
    "trusts-stale-reward": {
        "tests/test.sh": "sleep 0.5\nif [ -s /logs/verifier/reward.txt ]; then exit 0; fi\n" + REAL_CHECK,
    },
}
#: Which weak bundle each policy breaks (a policy with teeth).
BREAKS = {"tamper": "checker-in-app", "garbage-reward": "forwards-agent-result", "nop": "always-passes"}


def weak_bundle(root: Path, kind: str) -> Path:
    """A small bundle whose oracle scores 1 and nop 0, but whose verifier trusts the agent (`kind`)."""
    files: dict[str, str | bytes] = {
        "task.toml": dump_task_config(TaskConfig()),
        "instruction.md": "Write the word done to /app/out.txt.\n",
        "environment/Dockerfile": STANDARD_DOCKERFILE,
        "environment/app/README": "work here\n",
        "solution/solve.sh": SOLVE_SH,
    }
    for name, text in WEAK_TESTS[kind].items():
        files[name] = "#!/bin/bash\nmkdir -p /logs/verifier\n" + text if name == "tests/test.sh" else text
    write_files(root / kind, files, executable={"solution/solve.sh", "tests/test.sh"})
    return root / kind


def false_pass_bundle(root: Path) -> Path:
    """Issue 11's false pass: solve.sh solves nothing and plants reward.json = 1; the real tests fail."""
    files: dict[str, str | bytes] = {
        "task.toml": dump_task_config(TaskConfig()),
        "instruction.md": "Write the word done to /app/out.txt.\n",
        "environment/Dockerfile": STANDARD_DOCKERFILE,
        "environment/app/README": "work here\n",
        "solution/solve.sh": "#!/bin/bash\nmkdir -p /logs/verifier\necho '{\"reward\": 1.0}' > /logs/verifier/reward.json\n",
        "tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\n" + REAL_CHECK,
    }
    write_files(root / "false-pass", files, executable={"solution/solve.sh", "tests/test.sh"})
    return root / "false-pass"


def old_verifier_phase(session, bundle) -> None:
    """The verifier phase before the fix: tests uploaded over whatever the agent left."""
    session.upload(bundle.paths.tests, "/tests")


# ---- the reward rule ---------------------------------------------------------------------------


@pytest.mark.parametrize("garbage", GARBAGE_REWARDS)
def test_garbage_is_never_a_reward(garbage: str) -> None:
    assert parse_reward(None, garbage.encode())[0] is None
    assert parse_reward(garbage.encode(), None)[0] is None


@pytest.mark.parametrize(
    ("json_bytes", "txt_bytes", "expected"),
    [
        (None, b"1\n", 1.0),
        (None, b" 0.25 ", 0.25),
        (b"0", None, 0.0),
        (b'{"reward": 1, "criteria_passed": 3, "criteria_total": 3}', None, 1.0),
        (b'{"score": 0.5}', None, 0.5),
        (b'{"reward": 1}', b"1", 1.0),
    ],
)
def test_a_reward_is_one_finite_number_in_the_unit_interval(json_bytes, txt_bytes, expected) -> None:
    assert parse_reward(json_bytes, txt_bytes) == (expected, "")


def test_two_reward_files_must_agree() -> None:
    reward, problem = parse_reward(b'{"reward": 1.0}', b"0")
    assert reward is None and "disagree" in problem


# ---- each policy has teeth ---------------------------------------------------------------------


def test_every_terminal_policy_brings_a_weak_bundle_to_break() -> None:
    assert set(BREAKS) == {p.name for p in policies_for("terminal")}


@pytest.mark.parametrize("name", sorted(BREAKS))
def test_each_policy_breaks_a_deliberately_weak_bundle(
    name: str, tmp_path: Path, local_sandbox: Sandbox
) -> None:
    bundle = read_bundle(weak_bundle(tmp_path, BREAKS[name]))
    [outcome] = red_team(bundle, local_sandbox, Limits(), policies=[get_policy(name)])
    assert outcome.broke and outcome.reward == 1.0, outcome


@pytest.mark.parametrize("kind", ["checker-in-app", "imports-from-app", "forwards-agent-result"])
def test_the_gate_rejects_a_weak_bundle_naming_the_policy(
    kind: str, tmp_path: Path, local_sandbox: Sandbox
) -> None:
    result = verify_bundle(weak_bundle(tmp_path, kind), local_sandbox)
    assert result.oracle_rewards == [1.0, 1.0] and result.nop_reward == 0.0
    assert result.verdict == "red_team_broken", result.reasons
    broke = {o.policy for o in result.red_team if o.broke}
    assert broke and all(policy in result.reasons[-1] for policy in broke)
    assert {o.policy for o in result.red_team} == {p.name for p in policies_for("terminal")}


# ---- the fresh verifier phase ------------------------------------------------------------------


def test_the_false_pass_of_issue_11_is_rejected(tmp_path: Path, local_sandbox: Sandbox) -> None:
    result = verify_bundle(false_pass_bundle(tmp_path), local_sandbox)
    assert result.verdict == "tampered" and result.oracle_rewards == [None, None]
    assert "oracle solution wrote /logs/verifier/reward.json" in result.reasons[0]
    assert "scored 0" in result.reasons[0]
    assert [t.verifier_reward for t in result.trials[:2]] == [0.0, 0.0]


def test_planted_and_stale_rewards_and_background_writers_are_discarded(
    tmp_path: Path, local_sandbox: Sandbox
) -> None:
    result = verify_bundle(weak_bundle(tmp_path, "trusts-stale-reward"), local_sandbox)
    assert result.verdict == "verified", result.reasons
    assert all(not o.broke for o in result.red_team)


def test_the_old_verifier_phase_was_broken_by_tamper(
    tmp_path: Path, local_sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the fresh phase, tamper's planted files win: a stale reward and a shadowed test import."""
    stale = read_bundle(weak_bundle(tmp_path, "trusts-stale-reward"))
    standard = weak_bundle(tmp_path, "always-passes")
    (standard / "tests" / "test.sh").write_text(STANDARD_TEST_SH)
    (standard / "tests" / "test_outputs.py").write_text(
        "import json, sys\nsys.exit(0 if open('/app/out.txt').read().strip() == 'done' else 1)\n"
    )
    tamper = get_policy("tamper")
    for bundle in (stale, read_bundle(standard)):
        [fresh] = red_team(bundle, local_sandbox, Limits(), policies=[tamper])
        assert not fresh.broke, fresh
    monkeypatch.setattr(trial_module, "fresh_verifier_phase", old_verifier_phase)
    monkeypatch.setattr(trial_module, "planted_files", lambda session: [])
    for bundle in (stale, read_bundle(standard)):
        [old] = red_team(bundle, local_sandbox, Limits(), policies=[tamper])
        assert old.broke, old


@pytest.mark.docker
def test_fresh_verifier_phase_under_docker(tmp_path: Path, docker_sandbox: Sandbox) -> None:
    assert verify_bundle(false_pass_bundle(tmp_path), docker_sandbox).verdict == "tampered"
    stale = verify_bundle(weak_bundle(tmp_path, "trusts-stale-reward"), docker_sandbox)
    assert stale.verdict == "verified", stale.reasons
    broken = verify_bundle(weak_bundle(tmp_path, "checker-in-app"), docker_sandbox)
    assert broken.verdict == "red_team_broken" and "tamper" in broken.reasons[-1]


def test_terminal_dataset_rows_carry_the_red_team_gate(tmp_path: Path) -> None:
    """collect_accepted's terminal rows feed the dataset card's Red team section."""
    import json

    from envpipeline.export.card import _red_team_rows
    from envpipeline.export.unified import from_bundle

    outcomes = [
        {"policy": "tamper", "binary": 0.0, "checklist": 0.0, "cfrr": 0.0, "moot": False, "reward": 0.0},
        {"policy": "nop", "binary": 0.0, "checklist": 0.0, "cfrr": 0.0, "moot": False, "reward": 0.0},
    ]
    task = from_bundle(
        weak_bundle(tmp_path, "trusts-stale-reward"), {"oracle": True, "nop": True}, red_team=outcomes
    )
    stats = json.loads(task.gate_stats)
    assert stats["gates"] == {"oracle": True, "nop": True, "red_team": True}
    assert _red_team_rows([task]) == [("terminal", "nop", 1, 0, "0.00"), ("terminal", "tamper", 1, 0, "0.00")]


def _clear_follows_no_link(sandbox: Sandbox, tmp_path: Path) -> None:
    bundle = read_bundle(weak_bundle(tmp_path, "always-passes"))
    with sandbox.open(bundle, Limits()) as session:
        planted = session.exec(
            "echo keep > /app/keep; rm -rf /logs/verifier; ln -s /app /logs/verifier; "
            "ln -s /app /tests/app; echo 1 > /tests/reward.txt; chmod 000 /tests",
            timeout_sec=30,
        )
        assert planted.exit_code == 0, planted.stderr
        for path in ("/tests", "/logs/verifier"):
            session.clear(path)
        listing = session.exec(
            "ls -A /tests /logs/verifier; test -d /logs/verifier -a ! -L /logs/verifier", 30
        )
        assert listing.exit_code == 0 and listing.stdout.split() == ["/logs/verifier:", "/tests:"], listing
        assert session.read_file("/app/keep") == b"keep\n"


def test_clear_removes_planted_links_without_following_them(tmp_path: Path, local_sandbox: Sandbox) -> None:
    _clear_follows_no_link(local_sandbox, tmp_path)


@pytest.mark.docker
def test_clear_removes_planted_links_without_following_them_in_docker(
    tmp_path: Path, docker_sandbox: Sandbox
) -> None:
    _clear_follows_no_link(docker_sandbox, tmp_path)


def test_the_run_summary_reports_terminal_rejections_per_policy_and_the_hack_pass_rate() -> None:
    from envpipeline.commands.run import _method_lines
    from envpipeline.redteam.summary import terminal_red_team_summary

    clean = [{"policy": p, "binary": 0.0, "moot": False} for p in ("nop", "tamper", "garbage-reward")]
    broken = [{"policy": "tamper", "binary": 1.0, "moot": False}, {"policy": "nop", "binary": 0.0}]
    figures = terminal_red_team_summary([(True, clean), (True, clean), (False, broken), (False, [])])
    assert figures["attacked"] == 3 and figures["rejected_by_policy"] == {"tamper": 1}
    assert figures["accepted_hack_passes"] == 0 and figures["accepted_hack_pass_rate"] == 0.0
    terminal = {"seeds": 3, "verified": 2, "failed": 1, "quarantined": 0, "backends": ["local"]}
    lines = _method_lines(
        {"terminal": {**terminal, "failures": {"weak": "red_team_broken"}, "red_team": figures}}
    )
    [line] = [line for line in lines if line.startswith("terminal red team")]
    assert '{"tamper": 1}' in line and "hack-pass rate 0.0%" in line


def test_collect_accepted_reads_the_stored_red_team_of_terminal_bundles(tmp_path: Path) -> None:
    import json

    from envpipeline.export.collect import collect_accepted
    from envpipeline.store.lake import Lake, Lineage

    lake, lineage = Lake(tmp_path / "home"), Lineage("test", "test")
    bundle = weak_bundle(tmp_path, "trusts-stale-reward")
    outcomes = [{"policy": "tamper", "binary": 0.0, "checklist": 0.0, "cfrr": 0.0, "moot": False}]
    lake.write_partition("terminal_seeds", "s", [{"seed_key": "s", "bundle_path": str(bundle)}], lineage)
    row = {"seed_key": "s", "status": "verified", "red_team": json.dumps(outcomes)}
    lake.write_partition("seed_verification", "s", [row], lineage)
    [task] = collect_accepted(lake)
    stats = json.loads(task.gate_stats)
    assert task.family == "terminal" and stats["gates"]["red_team"] is True
    assert stats["red_team"] == {"tamper": {"binary": 0.0, "checklist": 0.0, "moot": False}}
