"""Issue 12's hostile bundles, each a contract test on both backends (Docker ones skipped without
Docker): a shipped family's bundle (csv-json-merge, whose tests import ``json``) plus a hostile
solution, test or task.toml. Every probe ends in a verdict with a reason -- never a pass, never a
crash -- and leaves the host as it was: every session the trial opened is gone (no container, no
temp root).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from envpipeline.models.bundle import Bundle
from envpipeline.sandbox.base import Limits, Sandbox, SandboxSession
from envpipeline.terminal.bundle import read_bundle
from envpipeline.terminal.families.base import write_generated
from envpipeline.terminal.families.registry import get_family
from envpipeline.terminal.seeds import materialize_seed, verification_row
from envpipeline.terminal.trial import TrialResult, run_trial
from envpipeline.terminal.verify import VerificationResult, verify_bundle

BACKENDS = [pytest.param("local", id="local"), pytest.param("docker", id="docker", marks=pytest.mark.docker)]
LIMITS = Limits(memory_mb=512, pids=128)
#: A Python start-up file that makes every Python the verifier starts exit 0 at once.
EXIT_ZERO = "printf 'import os\\nos._exit(0)\\n'"
USER_SITE = "d=$(python3 -c 'import site; print(site.getusersitepackages())'); mkdir -p \"$d\"; "
SECRET = "hunter2-do-not-leak"


class RecordingSandbox(Sandbox):
    """A real backend that remembers every session it opened (to check that each is gone)."""

    def __init__(self, inner: Sandbox) -> None:
        self.inner = inner
        self.backend = inner.backend  # type: ignore[misc]
        self.opened: list[SandboxSession] = []

    def open(self, bundle: Bundle, limits: Limits) -> SandboxSession:
        session = self.inner.open(bundle, limits)
        self.opened.append(session)
        return session

    @classmethod
    def available(cls) -> bool:
        return True

    def assert_nothing_left(self) -> None:
        """No container and no temp root of any session this test opened is left on the host."""
        for session in self.opened:
            container = getattr(session, "container", None)
            if container is not None:
                probe = subprocess.run(["docker", "inspect", container], capture_output=True)
                assert probe.returncode != 0, f"container {container} was left behind"
            root = getattr(session, "root", None)
            if root is not None:
                assert not Path(root).exists(), f"temp root {root} was left behind"


@pytest.fixture(params=BACKENDS)
def sandbox(request: pytest.FixtureRequest) -> RecordingSandbox:
    inner = request.getfixturevalue("docker_sandbox" if request.param == "docker" else "local_sandbox")
    return RecordingSandbox(inner)


@pytest.fixture(scope="module")
def family_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A shipped family's bundle whose oracle verifies: the base of every hostile bundle."""
    family = get_family("csv-json-merge")
    task = family.generate(0, family.knobs_for("easy"), "easy")
    return write_generated(task, tmp_path_factory.mktemp("family") / "csv-json-merge-0")


def hostile(base: Path, where: Path, files: dict[str, str], toml: dict[str, str] | None = None) -> Path:
    """A copy of `base` with `files` replaced and `toml` lines set (section -> "key = value")."""
    shutil.copytree(base, where)
    for name, text in files.items():
        (where / name).write_text(text)
    for section, line in (toml or {}).items():
        text = (where / "task.toml").read_text()
        key = line.split("=")[0].strip()
        kept = "\n".join(x for x in text.splitlines() if not x.startswith(f"{key} ="))
        header = f"[{section}]"
        text = (
            kept.replace(header, f"{header}\n{line}", 1) if header in kept else f"{kept}\n{header}\n{line}\n"
        )
        (where / "task.toml").write_text(text)
    return where


def solve(script: str) -> dict[str, str]:
    return {"solution/solve.sh": "#!/bin/bash\n" + script + "\n"}


# ---- forged passes: nothing the agent leaves may make the verifier pass ------------------------

#: probe -> (hostile solve.sh, the backends where it can plant its file: there it is `tampered`)
FORGERIES = {
    "tests-shadow-json": (f"mkdir -p /tests; {EXIT_ZERO} > /tests/json.py", {"local", "docker"}),
    "app-shadow-json": (f"{EXIT_ZERO} > /app/json.py", {"local", "docker"}),
    "usercustomize": (USER_SITE + f'{EXIT_ZERO} > "$d/usercustomize.py"', {"local", "docker"}),
    "usercustomize-backdated": (
        USER_SITE + f'{EXIT_ZERO} > "$d/usercustomize.py"; touch -d 2001-01-01 "$d/usercustomize.py"',
        {"local", "docker"},
    ),
    "usercustomize-unlistable": (
        USER_SITE + f'{EXIT_ZERO} > "$d/usercustomize.py"; chmod 311 "$d"',
        {"local", "docker"},
    ),
    "sitecustomize": (
        f"for d in /usr/lib/python3*/ /usr/lib/python3/dist-packages/; do {EXIT_ZERO} > $d/sitecustomize.py;"
        " done 2>/dev/null; true",
        {"docker"},
    ),
    "local-bin-python3": (
        "printf '#!/bin/sh\\nexit 0\\n' > /usr/local/bin/python3 && chmod +x /usr/local/bin/python3; true",
        {"docker"},
    ),
    # /logs/verifier swapped for a link to a folder that holds a reward: `find` lists nothing
    # under a link, the planted-files probe's `test -f` (which follows it, as a read does) does
    "verifier-folder-link": (
        "mkdir -p /tmp/forged && echo 1 > /tmp/forged/reward.txt && rm -rf /logs/verifier"
        " && ln -s /tmp/forged /logs/verifier",
        {"local", "docker"},
    ),
    "background-reward-writer": (
        "mkdir -p /logs/verifier; (setsid nohup bash -c 'while :; do echo 1 > /logs/verifier/reward.txt;"
        " sleep 0.01; done' </dev/null >/dev/null 2>&1 &); sleep 0.3",
        {"local", "docker"},
    ),
}


@pytest.mark.parametrize("probe", sorted(FORGERIES))
def test_a_forged_pass_is_never_a_pass(
    sandbox: RecordingSandbox, family_bundle: Path, tmp_path: Path, probe: str
) -> None:
    script, planted_on = FORGERIES[probe]
    bundle = read_bundle(hostile(family_bundle, tmp_path / probe, solve(script)))
    trial = run_trial(sandbox, bundle, "oracle", LIMITS)
    assert trial.reward != 1.0, trial.reason
    if sandbox.backend in planted_on:
        # (the agent phase's output in the message: CI once saw "ok" here, not reproduced since)
        agent = trial.agent_exec
        said = (agent.exit_code, agent.stdout[-500:], agent.stderr[-500:]) if agent else None
        assert trial.verdict == "tampered" and trial.planted, (trial.verdict, trial.reason, said)
        assert "wrote" in trial.reason or "changed what the verifier runs" in trial.reason
    else:  # the backend did not let the solution write there: the real tests fail it
        assert (trial.verdict, trial.reward) == ("ok", 0.0), trial
    sandbox.assert_nothing_left()


#: A verifier that trusts a reward already there once it has waited: only a survivor could fill it.
TRUSTS_LATE_REWARD = (
    "#!/bin/bash\nmkdir -p /logs/verifier\nsleep 1.5\n"
    "if [ -s /logs/verifier/reward.txt ]; then exit 0; fi\n"
    "python3 /tests/test_outputs.py >/dev/null 2>&1 && echo 1 > /logs/verifier/reward.txt"
    " || echo 0 > /logs/verifier/reward.txt\n"
)


def test_a_writer_that_waits_for_the_verifier_dies_before_it(
    sandbox: RecordingSandbox, family_bundle: Path, tmp_path: Path
) -> None:
    """A survivor that plants nothing before the verifier phase (it sleeps first) is killed with
    the rest of the agent's processes: the verifier sees no reward but its own."""
    writer = (
        "(setsid nohup bash -c 'sleep 0.5; while :; do echo 1 > /logs/verifier/reward.txt; sleep 0.01; done'"
        " </dev/null >/dev/null 2>&1 &)"
    )
    files = solve(writer) | {"tests/test.sh": TRUSTS_LATE_REWARD}
    bundle = read_bundle(hostile(family_bundle, tmp_path / "late-writer", files))
    trial = run_trial(sandbox, bundle, "oracle", LIMITS)
    assert (trial.verdict, trial.reward, trial.planted) == ("ok", 0.0, []), trial
    sandbox.assert_nothing_left()


def test_the_family_oracle_still_verifies(sandbox: RecordingSandbox, family_bundle: Path) -> None:
    """The guard is not a false alarm: the shipped oracle is `ok` with reward 1 on both backends."""
    trial = run_trial(sandbox, read_bundle(family_bundle), "oracle", LIMITS)
    assert (trial.verdict, trial.reward, trial.planted) == ("ok", 1.0, []), trial.reason
    sandbox.assert_nothing_left()


def test_tests_are_read_only_to_the_verifier(
    sandbox: RecordingSandbox, family_bundle: Path, tmp_path: Path
) -> None:
    """/tests is root-owned with no write bit after its fresh upload (as the verifier sees it)."""
    probe = "#!/bin/bash\nmkdir -p /logs/verifier\nstat -c '%u %A' /tests /tests/test_outputs.py\necho 0 > /logs/verifier/reward.txt\n"
    bundle = read_bundle(hostile(family_bundle, tmp_path / "ro", {"tests/test.sh": probe}))
    trial = run_trial(sandbox, bundle, "nop", LIMITS)
    assert trial.verifier_exec is not None
    assert trial.verifier_exec.stdout.split() == ["0", "dr-xr-xr-x", "0", "-r--r--r--"], trial.verifier_exec
    sandbox.assert_nothing_left()


# ---- rewards outside [0, 1] or not a plain decimal ---------------------------------------------

REWARD_WRITES = {
    "two": "echo 2 > /logs/verifier/reward.txt",
    "underscore": "echo 1_0 > /logs/verifier/reward.txt",
    "huge-json-integer": "python3 -c \"print('{\\\"reward\\\": ' + '9' * 5000 + '}')\" > /logs/verifier/reward.json",
}


@pytest.mark.parametrize("kind", sorted(REWARD_WRITES))
def test_a_reward_outside_the_rule_is_malformed(
    sandbox: RecordingSandbox, family_bundle: Path, tmp_path: Path, kind: str
) -> None:
    test_sh = f"#!/bin/bash\nmkdir -p /logs/verifier\n{REWARD_WRITES[kind]}\n"
    bundle = read_bundle(hostile(family_bundle, tmp_path / kind, {"tests/test.sh": test_sh}))
    trial = run_trial(sandbox, bundle, "nop", LIMITS)
    assert trial.verdict == "malformed_reward" and trial.reward is None, trial
    assert len(trial.reason) < 200, trial.reason
    sandbox.assert_nothing_left()


# ---- paths: a linked folder is rejected before anything is copied ------------------------------


@pytest.fixture
def host_secret(tmp_path: Path) -> Path:
    """A host folder holding a secret (stands for the operator's home folder)."""
    folder = tmp_path / "operator-home"
    folder.mkdir()
    (folder / "solve.sh").write_text(f"#!/bin/bash\necho {SECRET}\n")
    (folder / "secret.txt").write_text(SECRET + "\n")
    return folder


def _leaky(base: Path, where: Path, host_secret: Path, linked: str) -> Path:
    """A bundle whose `linked` folder is a link to the host folder, with a test echoing the secret."""
    bundle = hostile(
        base,
        where,
        {
            "tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\ncat /solution/secret.txt > /logs/verifier/reward.txt\n"
        },
    )
    if linked == "solution/escape":
        os.symlink(host_secret / "secret.txt", bundle / "solution" / "escape")
    else:
        shutil.rmtree(bundle / linked)
        os.symlink(host_secret, bundle / linked)
    return bundle


@pytest.mark.parametrize("linked", ["solution", "tests", "environment", "solution/escape"])
def test_a_linked_folder_is_invalid_before_anything_runs(
    sandbox: RecordingSandbox, family_bundle: Path, tmp_path: Path, host_secret: Path, linked: str
) -> None:
    bundle = _leaky(family_bundle, tmp_path / "leaky", host_secret, linked)
    result = verify_bundle(bundle, sandbox)
    assert result.verdict == "invalid_bundle" and result.trials == [], result
    assert linked.split("/")[0] in result.reasons[0] and "symlink" in result.reasons[0], result.reasons
    assert SECRET not in json.dumps(result.model_dump(mode="json"))
    assert sandbox.opened == [], "a session was opened for a bundle that failed the path check"


def test_the_seeds_folder_path_never_verifies_a_linked_bundle(
    local_sandbox: Sandbox, family_bundle: Path, tmp_path: Path, host_secret: Path
) -> None:
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    _leaky(family_bundle, seeds / "leaky-seed", host_secret, "solution")
    recording = RecordingSandbox(local_sandbox)
    row = materialize_seed("leaky-seed", tmp_path / "bundles", seeds)
    assert row["import_status"] == "failed" and "symlink" in row["import_error"], row
    result = verify_bundle(row["bundle_path"], recording)
    stored = verification_row("leaky-seed", result, "failed", "env")
    assert stored["verdict"] == "invalid_bundle" and recording.opened == []
    assert SECRET not in json.dumps(stored)


# ---- a verdict for every bundle ------------------------------------------------------------------

LIMIT_PROBES = {
    "cpus": {"environment": "cpus = 4096"},
    "memory": {"environment": f"memory_mb = {2**63 - 1}"},
    "verifier-timeout": {"verifier": "timeout_sec = inf"},
    "agent-timeout": {"agent": "timeout_sec = inf"},
}


@pytest.mark.parametrize("probe", sorted(LIMIT_PROBES))
def test_limits_past_the_operators_ceiling_are_clamped_and_reported(
    sandbox: RecordingSandbox, family_bundle: Path, tmp_path: Path, probe: str
) -> None:
    """A bundle cannot raise its own limits: cpus, memory and timeouts past the operator's ceiling
    run at the ceiling, and the verdict says which value was clamped."""
    if probe == "cpus" and sandbox.backend == "local":
        pytest.skip("the local backend does not pin CPUs: cpus is checked on Docker only")
    bundle = hostile(family_bundle, tmp_path / probe, {}, LIMIT_PROBES[probe])
    result = verify_bundle(bundle, sandbox, with_red_team=False)
    assert result.verdict == "verified", result.reasons
    key = {"cpus": "environment.cpus", "memory": "environment.memory_mb"}.get(
        probe, probe.replace("-", ".").replace("timeout", "timeout_sec")
    )
    assert any(r.startswith(key) and "clamped to the operator's ceiling" in r for r in result.reasons), (
        result.reasons
    )
    sandbox.assert_nothing_left()


def test_explicit_limits_the_host_cannot_give_are_limit_exceeded(
    sandbox: RecordingSandbox, family_bundle: Path
) -> None:
    """Limits a caller passes past this host open no session and give limit_exceeded."""
    trial = run_trial(sandbox, read_bundle(family_bundle), "oracle", Limits(memory_mb=2**40))
    assert trial.verdict == "limit_exceeded" and "memory_mb" in trial.reason, trial
    assert sandbox.opened == []


def test_a_reward_link_to_etc_shadow_is_malformed(
    local_sandbox: Sandbox, family_bundle: Path, tmp_path: Path
) -> None:
    test_sh = "#!/bin/bash\nmkdir -p /logs/verifier\nln -sf /etc/shadow /logs/verifier/reward.txt\n"
    recording = RecordingSandbox(local_sandbox)
    bundle = read_bundle(hostile(family_bundle, tmp_path / "shadow", {"tests/test.sh": test_sh}))
    trial = run_trial(recording, bundle, "nop", LIMITS)
    assert trial.verdict == "malformed_reward" and "cannot be read" in trial.reason, trial
    recording.assert_nothing_left()


def test_a_solution_that_locks_tests_gets_a_verdict(
    sandbox: RecordingSandbox, family_bundle: Path, tmp_path: Path
) -> None:
    script = "mkdir -p /tests /logs/verifier; chattr +i /tests 2>/dev/null; chmod 000 /tests /logs/verifier /logs; true"
    bundle = read_bundle(hostile(family_bundle, tmp_path / "lock", solve(script)))
    trial: TrialResult = run_trial(sandbox, bundle, "oracle", LIMITS)
    assert (trial.verdict, trial.reward) == ("ok", 0.0), f"{trial.reason}; verifier: {trial.verifier_exec}"
    sandbox.assert_nothing_left()


@pytest.mark.docker
def test_a_solution_that_stops_the_container_is_a_sandbox_error(
    docker_sandbox: Sandbox, family_bundle: Path, tmp_path: Path
) -> None:
    recording = RecordingSandbox(docker_sandbox)
    bundle = hostile(family_bundle, tmp_path / "kill-pid1", solve("kill -TERM 1; sleep 1"))
    result: VerificationResult = verify_bundle(bundle, recording, with_red_team=False)
    assert result.verdict == "sandbox_error" and "not running" in result.reasons[0], result.reasons
    recording.assert_nothing_left()


def test_one_bad_bundle_never_aborts_the_batch(
    local_sandbox: Sandbox, family_bundle: Path, tmp_path: Path, host_secret: Path
) -> None:
    """`bundle verify` gives every bundle its verdict, bad ones first, and exits 1 because some failed."""
    from click.testing import CliRunner

    from envpipeline.commands.terminal import bundle_group

    batch = [
        hostile(family_bundle, tmp_path / "too-much-memory", {}, LIMIT_PROBES["memory"]),
        _leaky(family_bundle, tmp_path / "leaky", host_secret, "solution"),
        hostile(
            family_bundle,
            tmp_path / "reward-two",
            {"tests/test.sh": "#!/bin/bash\necho 2 > /logs/verifier/reward.txt\n"},
        ),
        family_bundle,
    ]
    runner = CliRunner()
    done = runner.invoke(bundle_group, ["verify", "--sandbox", "local", "--json", *map(str, batch)])
    assert done.exit_code == 1, done.output
    report = json.loads(done.output[done.output.index("[") :])
    verdicts = [(Path(r["path"]).name, r["verdict"]) for r in report]
    assert verdicts == [
        ("too-much-memory", "verified"),  # run at the operator's ceiling, said in its reasons
        ("leaky", "invalid_bundle"),
        ("reward-two", "malformed_reward"),
        ("csv-json-merge-0", "verified"),
    ], verdicts
    assert SECRET not in done.output
