"""Probes the gates trust survive a lost exec output: Docker's exec stream can drop a short
command's stdout under load (exit 0, empty output), and a lost listing must not wave a planted
file through, nor a lost clock switch the runtime guard off."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from envpipeline.errors import SandboxError
from envpipeline.models.bundle import Bundle
from envpipeline.sandbox.base import ExecResult, Limits, Sandbox, SandboxSession
from envpipeline.sandbox.checked import OUTPUT_TRIES, checked_exec
from envpipeline.terminal.bundle import read_bundle
from envpipeline.terminal.families.base import write_generated
from envpipeline.terminal.families.registry import get_family
from envpipeline.terminal.runtime_guard import session_clock
from envpipeline.terminal.trial import run_trial


class BashSession(SandboxSession):
    """Runs commands with the host's bash; the first `lose` commands matching `losing` come back
    with exit 0 and no output, as a dropped Docker exec stream does."""

    def __init__(self, lose: int, losing: str = "") -> None:
        self.lose, self.losing = lose, losing
        self.commands: list[str] = []

    def exec(self, command: str, timeout_sec: float, workdir: str = "/app") -> ExecResult:
        self.commands.append(command)
        ran = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=timeout_sec)
        if self.lose > 0 and self.losing in command:
            self.lose -= 1
            return ExecResult(exit_code=ran.returncode)
        return ExecResult(exit_code=ran.returncode, stdout=ran.stdout, stderr=ran.stderr)

    def upload(self, source: Path, destination: str) -> None:  # pragma: no cover - unused
        raise NotImplementedError

    def read_file(self, path: str) -> bytes | None:  # pragma: no cover - unused
        raise NotImplementedError

    def kill_all(self) -> None:  # pragma: no cover - unused
        raise NotImplementedError

    def clear(self, path: str) -> None:  # pragma: no cover - unused
        raise NotImplementedError

    def make_read_only(self, path: str) -> None:  # pragma: no cover - unused
        raise NotImplementedError

    def close(self) -> None:
        pass


def test_the_output_and_status_come_back_without_the_marker() -> None:
    session = BashSession(lose=0)
    result = checked_exec(session, "printf 'a\\nb'; exit 7  # a trailing comment", timeout_sec=10)
    assert (result.stdout, result.exit_code) == ("a\nb", 7)
    assert len(session.commands) == 1


def test_a_lost_output_is_read_again() -> None:
    session = BashSession(lose=OUTPUT_TRIES - 1)
    assert checked_exec(session, "echo /tests/planted.py", timeout_sec=10).stdout == "/tests/planted.py\n"
    assert len(session.commands) == OUTPUT_TRIES


def test_an_output_lost_every_time_is_an_error_not_an_empty_listing() -> None:
    session = BashSession(lose=OUTPUT_TRIES)
    with pytest.raises(SandboxError, match="lost 3 times"):
        checked_exec(session, "echo /tests/planted.py", timeout_sec=10)


def test_a_lost_clock_reading_is_read_again() -> None:
    """An empty clock switched the runtime guard off (`changed_runtime_files` skips a bad `since`)."""
    reading = session_clock(BashSession(lose=1))
    assert reading.replace(".", "", 1).isdigit(), reading


class LosingSandbox(Sandbox):
    """A real backend whose sessions lose the output of the `nth` command naming `losing`."""

    def __init__(self, inner: Sandbox, losing: str, nth: int) -> None:
        self.inner, self.losing, self.nth = inner, losing, nth
        self.backend = inner.backend  # type: ignore[misc]

    def open(self, bundle: Bundle, limits: Limits) -> SandboxSession:
        session = self.inner.open(bundle, limits)
        real_exec, seen = session.exec, [0]

        def exec(command: str, timeout_sec: float, workdir: str = "/app") -> ExecResult:
            result = real_exec(command, timeout_sec, workdir)
            seen[0] += self.losing in command
            if self.losing in command and seen[0] == self.nth:
                return result.model_copy(update={"stdout": ""})
            return result

        session.exec = exec  # type: ignore[method-assign]
        return session

    @classmethod
    def available(cls) -> bool:
        return True


def test_a_planted_test_file_is_caught_when_the_listing_is_lost_once(
    local_sandbox: Sandbox, tmp_path: Path
) -> None:
    """The agent plants a file under /tests; the listing after the agent phase (the second one:
    the first is taken before it) loses its output once."""
    family = get_family("csv-json-merge")
    task = family.generate(0, family.knobs_for("easy"), "easy")
    folder = write_generated(task, tmp_path / "bundle")
    (folder / "solution" / "solve.sh").write_text(
        "#!/bin/bash\nmkdir -p /tests; echo x > /tests/planted.py\n"
    )
    sandbox = LosingSandbox(local_sandbox, losing="find /tests", nth=2)
    trial = run_trial(sandbox, read_bundle(folder), "oracle", Limits(memory_mb=512, pids=128))
    assert trial.verdict == "tampered" and "/tests/planted.py" in trial.planted, (trial.verdict, trial.reason)
