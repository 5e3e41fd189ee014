"""Static bundle checks: a good bundle from write_generated passes; purpose-built bad ones fail."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from envpipeline.commands.terminal import bundle_group
from envpipeline.terminal.checks import CheckReport, check_bundle, check_many
from envpipeline.terminal.families.base import (
    STANDARD_DOCKERFILE,
    STANDARD_TEST_SH,
    GeneratedTask,
    write_generated,
)
from envpipeline.terminal.tokenizer import count_tokens, pretokenize

INSTRUCTION = (
    "The file /app/words.txt holds one word per line. Write the number of distinct words, "
    "ignoring case, to /app/count.txt as a single integer followed by a newline.\n"
)
SOLVE = "#!/bin/bash\ntr 'A-Z' 'a-z' < /app/words.txt | sort -u | wc -l | tr -d ' ' > /app/count.txt\n"
TEST_OUTPUTS = """from pathlib import Path

words = {w.lower() for w in Path("/app/words.txt").read_text().split()}
assert Path("/app/count.txt").read_text() == f"{len(words)}\\n"
"""
CHECKS = [
    "schema",
    "path_safety",
    "required_files",
    "reward_file",
    "instruction_length",
    "leak",
    "images",
    "overlap",
]


def tiny_task() -> GeneratedTask:
    return GeneratedTask(
        family="tiny",
        name="tiny-distinct-words",
        seed=7,
        difficulty="easy",
        knobs={"words": 4},
        skills=["text-processing"],
        category="text-processing",
        instruction=INSTRUCTION,
        environment={"Dockerfile": STANDARD_DOCKERFILE, "app/words.txt": "Apple\napple\npear\nPlum\n"},
        tests={"test.sh": STANDARD_TEST_SH, "test_outputs.py": TEST_OUTPUTS},
        solutions={"oracle": {"solve.sh": SOLVE}},
    )


@pytest.fixture()
def good(tmp_path: Path) -> Path:
    return write_generated(tiny_task(), tmp_path / "bundle")


def result(report: CheckReport, name: str):
    (found,) = [c for c in report.checks if c.name == name]
    return found


def test_good_bundle_passes(good: Path) -> None:
    report = check_bundle(good, heldout=["Reverse every line of /app/input.txt and save it to /app/out.txt."])
    assert report.passed, report.failed()
    assert [c.name for c in report.checks] == CHECKS
    assert result(report, "schema").reason == "task.toml valid (schema 1.0)"
    assert "closest is held-out #0" in result(report, "overlap").reason


# --- purpose-built bad bundles: (mutation, failing check, expected words in the reason) ----------


def _symlink_abs(b: Path) -> None:
    os.symlink("/etc/passwd", b / "environment/app/passwd")


def _symlink_dotdot(b: Path) -> None:
    os.symlink("../../../outside.txt", b / "environment/app/escape")


def _environment_linked_inside(b: Path) -> None:
    """environment/ is a link to a folder of the same bundle (never leaves it, still refused)."""
    (b / "environment").rename(b / "environment-real")
    os.symlink("environment-real", b / "environment")


def _fifo(b: Path) -> None:
    os.mkfifo(b / "environment/app/pipe")


def _no_solution(b: Path) -> None:
    (b / "solution/solve.sh").unlink()


def _no_dockerfile(b: Path) -> None:
    (b / "environment/Dockerfile").unlink()


def _no_reward(b: Path) -> None:
    (b / "tests/test.sh").write_text("#!/bin/bash\npython3 /tests/test_outputs.py\n")


def _long_instruction(b: Path) -> None:
    (b / "instruction.md").write_text("Count the words carefully. " * 600)


def _short_instruction(b: Path) -> None:
    (b / "instruction.md").write_text("Count words.\n")


def _leaked_solve(b: Path) -> None:
    shutil.copy(b / "solution/solve.sh", b / "environment/app/solve.sh")


def _leaked_renamed_copy(b: Path) -> None:
    shutil.copy(b / "tests/test_outputs.py", b / "environment/app/checker.py")


def _leaked_test_name(b: Path) -> None:
    (b / "environment/app/test_outputs.py").write_text("# different content, same name\n")


def _dockerfile_copies_solution(b: Path) -> None:
    with (b / "environment/Dockerfile").open("a") as f:
        f.write("COPY ../solution/solve.sh /opt/solve.sh\n")


def _bad_toml(b: Path) -> None:
    (b / "task.toml").write_text('version = "1.0"\n[metadata\n')


def _bad_mcp_server(b: Path) -> None:
    with (b / "task.toml").open("a") as f:
        f.write('\n[[environment.mcp_servers]]\nname = "docs"\ntransport = "sse"\n')


BAD: list[tuple[Callable[[Path], None], str, list[str]]] = [
    (_symlink_abs, "path_safety", ["environment/app/passwd", "symlink to absolute path /etc/passwd"]),
    (
        _symlink_dotdot,
        "path_safety",
        ["environment/app/escape", "../../../outside.txt", "points outside the bundle"],
    ),
    (
        _environment_linked_inside,
        "path_safety",
        ["environment/ is itself a symlink (-> environment-real)", "real folder"],
    ),
    (_fifo, "path_safety", ["environment/app/pipe", "FIFO"]),
    (_no_solution, "required_files", ["solution/solve.sh missing"]),
    (_no_dockerfile, "required_files", ["environment/Dockerfile or environment/docker-compose.yaml missing"]),
    (
        _no_reward,
        "reward_file",
        ["tests/test.sh never writes /logs/verifier/reward.txt", "tests/test_outputs.py"],
    ),
    (_long_instruction, "instruction_length", ["instruction.md has ~", "more than the maximum 2000"]),
    (_short_instruction, "instruction_length", ["instruction.md has ~", "fewer than the minimum 10"]),
    (_leaked_solve, "leak", ["environment/app/solve.sh is a byte-identical copy of solution/solve.sh"]),
    (
        _leaked_renamed_copy,
        "leak",
        ["environment/app/checker.py is a byte-identical copy of tests/test_outputs.py"],
    ),
    (
        _leaked_test_name,
        "leak",
        ["environment/app/test_outputs.py has the same name as tests/test_outputs.py"],
    ),
    (_dockerfile_copies_solution, "leak", ["environment/Dockerfile:4: COPY ../solution/solve.sh"]),
    (_bad_toml, "schema", ["task.toml: invalid TOML"]),
    (_bad_mcp_server, "schema", ["task.toml: environment.mcp_servers.0", "'url' is required"]),
]


@pytest.mark.parametrize(("mutate", "check", "words"), BAD, ids=[m.__name__.strip("_") for m, _, _ in BAD])
def test_bad_bundle_fails_with_precise_reason(
    good: Path, mutate: Callable[[Path], None], check: str, words: list[str]
) -> None:
    mutate(good)
    report = check_bundle(good)
    assert not report.passed
    assert [c.name for c in report.failed()] == [check], report.failed()
    reason = result(report, check).reason
    for w in words:
        assert w in reason, reason


def test_heldout_duplicate_fails_overlap(good: Path) -> None:
    heldout = ["Print the current date.", INSTRUCTION.upper(), "Sort /app/numbers.txt numerically."]
    report = check_bundle(good, heldout=heldout)
    check = result(report, "overlap")
    assert not check.passed
    assert check.reason == "instruction.md overlaps held-out #1 with 3-gram Jaccard 1.00 >= threshold 0.50"
    # a lenient threshold lets a near-duplicate through; n-gram size is configurable
    near = INSTRUCTION.replace("distinct words", "unique words").replace("single integer", "plain integer")
    assert result(check_bundle(good, heldout=[near], overlap_threshold=0.9), "overlap").passed
    assert not result(check_bundle(good, heldout=[near], ngram=1), "overlap").passed


def test_reward_written_by_called_script(good: Path) -> None:
    (good / "tests/test.sh").write_text("#!/bin/bash\npython3 $TEST_DIR/grade.py\n")
    (good / "tests/grade.py").write_text(
        "from pathlib import Path\nPath('/logs/verifier').mkdir(parents=True, exist_ok=True)\n"
        "(Path('/logs/verifier') / 'reward.json').write_text('{\"reward\": 1}')\n"
    )
    check = result(check_bundle(good), "reward_file")
    assert check.passed and check.reason == "tests/test.sh writes the reward file via tests/grade.py"


def test_schema_11_bundle_and_symlink_inside(good: Path) -> None:
    (good / "task.toml").write_text('schema_version = "1.1"\n[task]\nname = "acme/tiny"\n')
    os.symlink("words.txt", good / "environment/app/alias.txt")  # stays inside: fine
    report = check_bundle(good)
    assert report.passed, report.failed()
    assert result(report, "schema").reason == "task.toml valid (schema 1.1)"


def test_not_a_directory_and_check_many(good: Path, tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    reports = check_many([good, missing], max_instruction_tokens=5)
    assert [r.passed for r in reports] == [False, False]
    assert [c.name for c in reports[0].failed()] == ["instruction_length"]
    assert reports[1].checks[0].reason.endswith("not a directory")


def test_bundle_check_json_names_each_check_with_its_verdict_and_reason(good: Path, tmp_path: Path) -> None:
    bad = write_generated(tiny_task(), tmp_path / "bad")
    (bad / "instruction.md").unlink()
    result = CliRunner().invoke(bundle_group, ["check", "--json", str(good), str(bad)])
    assert result.exit_code == 1, result.output
    reports = json.loads(result.output)
    assert [r["passed"] for r in reports] == [True, False]
    for report in reports:
        assert [c["name"] for c in report["checks"]] == CHECKS
        assert all({"name", "passed", "reason"} <= set(c) for c in report["checks"])
    failed = {c["name"]: c["reason"] for c in reports[1]["checks"] if not c["passed"]}
    assert failed["required_files"] == "instruction.md missing"


def test_tokenizer_approximates_bpe() -> None:
    assert count_tokens("") == 0
    assert pretokenize("1234567") == ["123", "456", "7"]
    assert pretokenize("Hello, world!") == ["Hello", ",", " world", "!"]
    assert pretokenize("it's  ok\n\n") == ["it", "'s", " ", " ok", "\n\n"]
    assert count_tokens("a" * 40) == 8  # long letter runs split like BPE would
    assert 15 <= count_tokens(INSTRUCTION) <= 60
