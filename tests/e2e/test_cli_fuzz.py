"""CLI fuzz: every command on bad input ends with one line on stderr and exit 2, never a traceback.

In-process with click's CliRunner (the group's own error handler runs there as in the shell), so
the whole file takes seconds; the read-only folder needs a real read-only mount and so runs the
installed entry point once, inside a user namespace, when the tests run as root.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from envpipeline.cli import main
from envpipeline.commands.failures import DEBUG_ENV, describe_os_error

REPO = Path(__file__).resolve().parents[2]
#: Integer options that are seeds: any integer is a valid seed, so they have no range.
UNBOUNDED_INTEGERS = {"seed"}


@pytest.fixture
def bad(tmp_path: Path) -> dict[str, Path]:
    """Bad inputs: a binary file, a plain file to put paths under, a folder, a valid bundle."""
    binary = tmp_path / "binary.dat"
    binary.write_bytes(b"\x00\xff\xfe\x80 not text")
    plain = tmp_path / "plain.txt"
    plain.write_text("a file, not a folder\n")
    folder = tmp_path / "folder"
    folder.mkdir()
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "task.toml").write_text('version = "1.0"\n')
    (bundle / "instruction.md").write_text("Do the thing described here in enough words to count.\n")
    return {"binary": binary, "plain": plain, "folder": folder, "bundle": bundle, "root": tmp_path}


def invoke(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(main, list(args), env={DEBUG_ENV: "", **(env or {})})


def assert_one_line_exit_2(result, *expected: str) -> str:
    """Exit 2, exactly one line on stderr starting with 'error:', no traceback; returns the line."""
    lines = result.stderr.splitlines()
    assert result.exit_code == 2, (result.exit_code, result.stderr, result.exception)
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit)
    for text in expected:
        assert text in lines[0], (text, lines[0])
    return lines[0]


BINARY_FILES = [
    ("bundle check {bundle} --heldout {binary}", "held-out file is not UTF-8"),
    ("select --pass-rates {binary}", "pass-rates table is not UTF-8"),
    (
        "forge --rollouts-table {binary} --seeds-per-family 0 --out {root}/forge",
        "rollouts table is not UTF-8",
    ),
]


@pytest.mark.parametrize(("command", "message"), BINARY_FILES, ids=[c.split()[0] for c, _ in BINARY_FILES])
def test_binary_input_files_are_one_line_naming_the_file(bad, command, message):
    result = invoke(*command.format(**bad).split())
    line = assert_one_line_exit_2(result, message)
    assert str(bad["binary"]) in line


OUT_UNDER_A_FILE = [
    "compose --tasks 1 --out {plain}/out --home {root}/home",
    "compose --tasks 1 --out {root}/out --home {plain}/home",
    "forge --target 1 --out {plain}/out",
    "forge --target 1 --home {plain}/home",
    "worlds build --no-live --out {plain}/out",
    "worlds build --no-live --home {plain}/home",
    "run --home {plain}/home",
    "export --format verl --out {plain}/out --home {root}/home",
    "bundle new json-transform --out {plain}/out",
    "bundle new json-transform --home {plain}/home",
    "bundle import {bundle} --out {plain}/out",
    "bundle import {bundle} --home {plain}/home",
]


@pytest.mark.parametrize("command", OUT_UNDER_A_FILE)
def test_output_folders_under_a_file_are_refused_before_any_work(bad, command):
    started = time.perf_counter()
    result = invoke(*command.format(**bad).split())
    assert_one_line_exit_2(result, str(bad["plain"]), "not a folder")
    assert time.perf_counter() - started < 10, "refused up front, not after composing or building"
    assert bad["plain"].read_text() == "a file, not a folder\n"


OUT_OF_RANGE = [
    ("forge --skill 5", "--skill"),
    ("forge --skill nan", "--skill"),
    ("forge --skill -0.1", "--skill"),
    ("forge --rollouts 0", "--rollouts"),
    ("compose --tasks 1 --out {root}/o --walk-length 1000000", "--walk-length"),
    ("compose --tasks 0 --out {root}/o", "--tasks"),
    ("run --batches 0", "--batches"),
    ("run --batches -3", "--batches"),
    ("run --candidates-per-batch 0", "--candidates-per-batch"),
    ("run --seeds-per-family 0", "--seeds-per-family"),
    ("bundle check {bundle} --overlap-threshold 2", "--overlap-threshold"),
    ("bundle check {bundle} --overlap-threshold nan", "--overlap-threshold"),
    ("select --time-limit inf", "--time-limit"),
    ("select --time-limit 0", "--time-limit"),
    ("worlds build --personas 0", "--personas"),
    ("worlds serve alice --day -1", "--day"),
    ("worlds serve alice --day 0 --web-port 70000", "--web-port"),
    ("serve-mcp some-task --port 70000", "--port"),
    ("redteam --tasks 0", "--tasks"),
]


@pytest.mark.parametrize(("command", "option"), OUT_OF_RANGE, ids=[c for c, _ in OUT_OF_RANGE])
def test_settings_out_of_range_are_rejected_by_the_option_types(bad, command, option):
    started = time.perf_counter()
    result = invoke(*command.format(**bad).split())
    assert_one_line_exit_2(result, option, "--help")
    assert time.perf_counter() - started < 10, "rejected while parsing, before any work"


def _leaf_commands(group: click.Group, prefix: str = "") -> dict[str, click.Command]:
    leaves: dict[str, click.Command] = {}
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            leaves |= _leaf_commands(command, f"{prefix}{name} ")
        else:
            leaves[f"{prefix}{name}"] = command
    return leaves


def test_every_numeric_option_of_every_command_has_a_range():
    unbounded = [
        f"{path} --{param.name}"
        for path, command in _leaf_commands(main).items()
        for param in command.params
        if param.type in (click.INT, click.FLOAT) and param.name not in UNBOUNDED_INTEGERS
    ]
    assert unbounded == [], "give these options a click.IntRange / FiniteFloatRange"


OTHER_MISTAKES = [
    ("nosuch-command", "nosuch-command"),
    ("compose --no-such-option", "--no-such-option"),
    ("bundle check {bundle} --heldout {root}/missing.txt", "missing.txt"),
    ("select --pass-rates {folder}", "folder"),
    ("bundle new no-such-family --out {root}/b", "unknown task family"),
    ("audit no-such-task --home {root}/home", "no-such-task"),
    ("select --home {root}/empty-home", "no seed pass rates"),
    ("serve-mcp cw-missing --home {root}/empty-home", "no verified_composed_tasks"),
    ("worlds serve nobody --day 0 --home {root}/empty-home", "no world for 'nobody'"),
]


@pytest.mark.parametrize(("command", "expected"), OTHER_MISTAKES, ids=[c for c, _ in OTHER_MISTAKES])
def test_other_mistakes_are_one_line(bad, command, expected):
    assert_one_line_exit_2(invoke(*command.format(**bad).split()), expected)


def test_an_os_error_during_the_run_is_one_line_naming_the_path(bad):
    """A folder where compose writes accepted.jsonl: the failure comes after composing, mid-run."""
    out = bad["root"] / "out"
    (out / "accepted.jsonl").mkdir(parents=True)
    result = invoke(
        "compose", "--tasks", "1", "--max-attempts", "1", "--out", str(out), "--home", str(bad["root"] / "h")
    )
    assert_one_line_exit_2(result, str(out / "accepted.jsonl"), "is a folder")


def test_debug_shows_the_original_error(bad):
    for env, args in (({DEBUG_ENV: "1"}, []), ({}, ["--debug"])):
        result = invoke(*args, "select", "--pass-rates", str(bad["binary"]), env=env)
        assert result.exit_code != 0 and "error:" not in result.stderr
        assert isinstance(result.exception, Exception) and not isinstance(result.exception, SystemExit)


def test_bad_task_toml_files_are_per_bundle_verdicts_not_crashes(bad):
    """A binary, folder or 5,000-deep task.toml: `bundle check`/`import`/`verify` report the bundle
    as failed with the reason (their contract: every bundle a verdict, exit 1), never a traceback."""
    reasons = {"binary": "task.toml is not UTF-8 text", "deep": "task.toml is nested too deeply to parse"}
    folder_reason = {
        "check": "task.toml is a folder",
        "verify": "task.toml is a folder",
        "import": "neither task.toml",
    }
    for name in ("binary", "folder", "deep"):
        bundle = bad["root"] / f"toml-{name}"
        shutil.copytree(bad["bundle"], bundle)
        (bundle / "task.toml").unlink()
    (bad["root"] / "toml-binary" / "task.toml").write_bytes(b'version = "\xff\xfe"\n')
    (bad["root"] / "toml-folder" / "task.toml").mkdir()
    (bad["root"] / "toml-deep" / "task.toml").write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    bundles = [str(bad["root"] / f"toml-{name}") for name in ("binary", "folder", "deep")]
    for verb, extra in (
        ("check", []),
        ("import", ["--out", str(bad["root"] / "imported")]),
        ("verify", ["--sandbox", "local"]),
    ):
        result = invoke("bundle", verb, *bundles, *extra)
        assert result.exit_code == 1, (verb, result.stderr, result.exception)
        assert "Traceback" not in result.stdout + result.stderr
        for reason in (*reasons.values(), folder_reason[verb]):
            assert reason in result.stdout, (verb, reason, result.stdout)


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (errno.EROFS, "read-only file system"),
        (errno.EACCES, "permission denied"),
        (errno.ENOSPC, "no space left"),
        (errno.ENOTDIR, "a file where a folder is needed"),
    ],
)
def test_os_errors_name_the_path_and_the_fix(code, expected):
    line = describe_os_error(OSError(code, os.strerror(code), "/data/lake"))
    assert line.startswith("/data/lake ") and expected in line and "; " in line


def _read_only_runner(folder: Path):
    """Run the CLI with `folder` read-only: chmod for a normal user; a read-only bind mount in a
    user namespace for root (root writes through any mode bits)."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        return lambda *args: subprocess.run(
            [sys.executable, "-m", "envpipeline.cli", *args], capture_output=True, text=True, cwd=REPO
        )
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-rm", "true"]).returncode != 0:
        pytest.skip("running as root without user namespaces: no way to make a read-only folder")

    def run(*args: str) -> subprocess.CompletedProcess:
        script = (
            f'mount --bind "{folder}" "{folder}" && mount -o remount,ro,bind "{folder}" && '
            f'exec "{sys.executable}" -m envpipeline.cli "$@"'
        )
        return subprocess.run(
            ["unshare", "-rm", "sh", "-c", script, "sh", *args], capture_output=True, text=True, cwd=REPO
        )

    return run


@pytest.mark.slow
def test_read_only_output_and_home_folders_are_one_line(tmp_path):
    folder = tmp_path / "read-only"
    folder.mkdir()
    run = _read_only_runner(folder)
    for args in (
        ["compose", "--tasks", "1", "--out", f"{folder}/out", "--home", f"{tmp_path}/home"],
        ["forge", "--target", "1", "--home", f"{folder}/home"],
        ["worlds", "build", "--no-live", "--out", f"{folder}/worlds"],
        ["run", "--home", f"{folder}/home"],
    ):
        result = run(*args)
        lines = result.stderr.splitlines()
        assert result.returncode == 2 and len(lines) == 1, (args, result.stderr)
        assert str(folder) in lines[0] and ("read-only" in lines[0] or "permission denied" in lines[0])
    assert list(folder.iterdir()) == []
