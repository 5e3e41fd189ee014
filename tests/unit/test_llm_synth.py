"""LLMSynthesizer end to end: real litellm, real HTTP to a scripted server, real bundle on disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envpipeline.llm import LLMClient, LLMConfig
from envpipeline.models.selection import Decision
from envpipeline.synth.artifact import parse_output, static_check_failures
from envpipeline.synth.base import Synthesizer
from envpipeline.synth.llm import LLMSynthesizer
from envpipeline.terminal.bundle import read_bundle
from tests.llm_server import Reply, ScriptedLLMServer, llm_server_fixture  # noqa: F401 - the fixture

pytestmark = pytest.mark.llm

SEED_FILES = {
    "instruction.md": "Count the lines of /app/data.txt and write the number to /app/out.txt.\n",
    "task.toml": 'version = "1.0"\n\n[metadata]\ndifficulty = "easy"\n',
    "environment/Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\nCOPY app/ /app/\n",
    "environment/app/data.txt": "a\nb\nc\n",
    "solution/solve.sh": "#!/bin/bash\nwc -l < /app/data.txt > /app/out.txt\n",
    "tests/test.sh": '#!/bin/bash\n[ "$(cat /app/out.txt)" = 3 ] && echo 1 > /logs/verifier/reward.txt '
    "|| echo 0 > /logs/verifier/reward.txt\n",
}

DECISION = Decision(
    seed_id="count-lines",
    projection="increase_complexity",
    direction="in_depth",
    action_variant="increase_complexity/in_depth",
    pass_rate=0.747,
    reward_band="high",
    projected_pass_rate=0.497,
    frontier_score=0.9999,
    backend="scip",
    required_skills=["file_io", "text_processing"],
    selected_optional_skills=["edge_case_handling"],
)

INSTRUCTION = (
    "Count the non-empty lines of /app/data.txt, ignoring lines made only of spaces, and write the "
    "number followed by a newline to /app/out.txt."
)


def artifact(instruction: str = INSTRUCTION, **extra_files: str) -> dict:
    files = {
        "environment/Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\nCOPY app/ /app/\n",
        "environment/app/data.txt": "a\n\nb\n   \nc\n",
        "solution/solve.sh": "#!/bin/bash\ngrep -c '[^ ]' /app/data.txt > /app/out.txt\n",
        "tests/test.sh": '#!/bin/bash\nif [ "$(cat /app/out.txt)" = 3 ]; then echo 1 > /logs/verifier/reward.txt; '
        "else echo 0 > /logs/verifier/reward.txt; fi\n",
        **extra_files,
    }
    return {
        "task_name": "count-nonblank-lines",
        "instruction_md": instruction,
        "files": files,
        "metadata": {
            "projection_summary": "blank lines are now an edge case",
            "skill_nodes": ["file_io", "text_processing", "edge_case_handling"],
        },
    }


def fenced(data: dict) -> str:
    return "Here is the task:\n```json\n" + json.dumps(data, indent=1) + "\n```\n"


@pytest.fixture
def seed_dir(tmp_path: Path) -> Path:
    root = tmp_path / "seeds" / "count-lines"
    for relative, text in SEED_FILES.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    return root


def synthesizer(server: ScriptedLLMServer, max_repairs: int = 2) -> LLMSynthesizer:
    config = LLMConfig(model="openai/forge-test", api_base=server.api_base, num_retries=0, timeout_sec=5)
    return LLMSynthesizer(LLMClient(config), model=config.model, max_repairs=max_repairs)


def user_prompt(request: dict) -> str:
    return next(m["content"] for m in request["messages"] if m["role"] == "user")


def test_valid_answer_becomes_a_bundle_that_passes_validation(
    llm_server: ScriptedLLMServer, seed_dir: Path, tmp_path: Path
) -> None:
    llm_server.push(Reply(content=fenced(artifact()), prompt_tokens=1500, completion_tokens=600))
    seen: list[Path] = []

    def validate(bundle: Path) -> list[str]:
        seen.append(bundle)
        return static_check_failures(bundle)

    out = tmp_path / "out" / "count-lines--s0"
    synth: Synthesizer = synthesizer(llm_server)
    result = synth.synthesize(seed_dir, DECISION, out_dir=out, sample_index=0, validate=validate)
    assert result.accepted and result.bundle_dir == out
    assert [a.passed for a in result.attempts] == [True]
    assert (result.prompt_tokens, result.completion_tokens) == (1500, 600)
    assert seen and seen[0].name == out.name  # validated under its final name
    bundle = read_bundle(out)
    assert bundle.instruction.strip() == INSTRUCTION
    assert (out / "environment/app/data.txt").read_text() == "a\n\nb\n   \nc\n"
    assert (out / "solution/solve.sh").stat().st_mode & 0o111
    provenance = bundle.config.metadata.envpipeline
    assert provenance["action_variant"] == "increase_complexity/in_depth"
    assert provenance["solver_payload"]["projected_pass_rate"] == 0.497
    assert bundle.config.metadata.difficulty == "medium"
    assert result.output is not None and result.output.metadata["target_difficulty"] == "medium"
    assert sorted(p.name for p in out.parent.iterdir()) == [out.name]  # no staging left behind


def test_prompt_carries_the_solver_contract(
    llm_server: ScriptedLLMServer, seed_dir: Path, tmp_path: Path
) -> None:
    llm_server.push(fenced(artifact()))
    synthesizer(llm_server).synthesize(seed_dir, DECISION, out_dir=tmp_path / "b", sample_index=3)
    request = llm_server.requests[0]
    system = request["messages"][0]["content"]
    user = user_prompt(request)
    assert "task_name, instruction_md, files, and metadata" in system
    assert "learning frontier" in system
    assert request["response_format"] == {"type": "json_object"}
    payload = json.loads(user.split("## Solver payload\n", 1)[1].split("\n## ", 1)[0])
    assert payload["projection"] == "increase_complexity" and payload["evolution_direction"] == "in_depth"
    assert payload["seed_pass_rate"] == 0.747 and payload["frontier_score"] == 0.9999
    assert payload["target_difficulty"] == "medium" and payload["reward_band"] == "high"
    assert "The seed appears easy." in user
    assert "Strengthen constraints and edge cases" in user
    mask = json.loads(user.split("## Artifact edit mask\n", 1)[1].split("\n## ", 1)[0])
    assert mask["required_artifacts"] == ["Inst", "Data", "Sol", "Test"]
    assert mask["optional_artifacts"] == ["Env", "Help"]
    skills = json.loads(user.split("## Skill subgraph\n", 1)[1].split("\n## ", 1)[0])
    assert skills == {
        "preserve_nodes": ["file_io", "text_processing", "edge_case_handling"],  # activated: counted
        "allowed_added_nodes": ["edge_case_handling"],
        "allowed_removed_nodes": [],
    }
    assert '"sample_index": 3' in user
    # the seed files follow the action sections, instruction first
    assert (
        user.index("## Skill subgraph") < user.index("### instruction.md") < user.index("### tests/test.sh")
    )
    assert "wc -l < /app/data.txt" in user


def test_reduce_mask_requires_the_environment(
    llm_server: ScriptedLLMServer, seed_dir: Path, tmp_path: Path
) -> None:
    llm_server.push(fenced(artifact()))
    reduce = DECISION.model_copy(
        update={
            "projection": "reduce_complexity",
            "action_variant": "reduce_complexity/in_depth",
            "selected_optional_skills": [],  # not counted toward coverage: removable
            "optional_skills": ["edge_case_handling"],
            "removable_skills": ["edge_case_handling"],
        }
    )
    synthesizer(llm_server).synthesize(seed_dir, reduce, out_dir=tmp_path / "b")
    user = user_prompt(llm_server.requests[0])
    mask = json.loads(user.split("## Artifact edit mask\n", 1)[1].split("\n## ", 1)[0])
    assert mask["required_artifacts"] == ["Inst", "Data", "Sol", "Test", "Env"]
    assert "The seed appears beyond the current agent." in user
    assert '"allowed_removed_nodes": [\n    "edge_case_handling"' in user


def test_invalid_json_is_repaired_with_its_failure_summary(
    llm_server: ScriptedLLMServer, seed_dir: Path, tmp_path: Path
) -> None:
    llm_server.push(
        Reply(content='{"task_name": "x", "instruction_md": ', prompt_tokens=100), fenced(artifact())
    )
    result = synthesizer(llm_server).synthesize(seed_dir, DECISION, out_dir=tmp_path / "b")
    assert result.accepted
    assert [(a.kind, a.failure_stage) for a in result.attempts] == [("initial", "parse"), ("repair", None)]
    repair = llm_server.requests[1]
    assert "Repair a failed generated Terminal-Bench-style task directory" in repair["messages"][0]["content"]
    user = user_prompt(repair)
    assert "## Repair index\n1" in user
    assert "invalid JSON" in user and result.attempts[0].failures[0] in user
    assert '{"task_name": "x", "instruction_md": ' in user  # the previous artifact
    assert "## Skill subgraph" in user and "### solution/solve.sh" in user


def test_failed_validation_is_repaired(llm_server: ScriptedLLMServer, seed_dir: Path, tmp_path: Path) -> None:
    first = artifact()
    del first["files"]["tests/test.sh"]
    llm_server.push(fenced(first), fenced(artifact()))

    def validate(bundle: Path) -> list[str]:
        failures = static_check_failures(bundle)
        if not failures and "non-empty" not in (bundle / "instruction.md").read_text():
            failures.append("gold verification: oracle reward 0")
        return failures

    result = synthesizer(llm_server).synthesize(seed_dir, DECISION, out_dir=tmp_path / "b", validate=validate)
    assert result.accepted
    assert result.attempts[0].failure_stage == "validate"
    assert any("tests/test.sh" in f for f in result.attempts[0].failures)
    assert "tests/test.sh" in user_prompt(llm_server.requests[1]).split("## Failure summary", 1)[1][:400]
    assert (tmp_path / "b" / "tests/test.sh").exists()


def test_repairs_are_bounded(llm_server: ScriptedLLMServer, seed_dir: Path, tmp_path: Path) -> None:
    unsafe = artifact(**{"../escape.sh": "echo pwned\n"})
    bad_schema = {"task_name": "bad name with spaces", "instruction_md": "x", "files": {}}
    llm_server.push(fenced(unsafe), json.dumps(bad_schema), "not json at all", fenced(artifact()))
    out = tmp_path / "out" / "b"
    out.parent.mkdir()
    result = synthesizer(llm_server, max_repairs=2).synthesize(seed_dir, DECISION, out_dir=out)
    assert result.bundle_dir is None and not result.accepted
    assert [a.failure_stage for a in result.attempts] == ["materialize", "contract", "parse"]
    assert [a.index for a in result.attempts] == [0, 1, 2]
    assert len(llm_server.requests) == 3  # the fourth scripted answer was never requested
    assert result.prompt_tokens == 3 * 11
    assert not out.exists() and not (tmp_path / "escape.sh").exists()
    assert not list((tmp_path / "out").iterdir())
    assert "task_name" in result.attempts[1].failures[0]


def test_existing_output_is_replaced_only_on_acceptance(
    llm_server: ScriptedLLMServer, seed_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "b"
    out.mkdir()
    (out / "old.txt").write_text("old")
    llm_server.push("nope")
    assert not synthesizer(llm_server, max_repairs=0).synthesize(seed_dir, DECISION, out_dir=out).accepted
    assert (out / "old.txt").exists()
    llm_server.push(fenced(artifact()))
    assert synthesizer(llm_server, max_repairs=0).synthesize(seed_dir, DECISION, out_dir=out).accepted
    assert not (out / "old.txt").exists() and (out / "instruction.md").exists()


def test_model_task_toml_keeps_its_fields_and_gains_provenance(
    llm_server: ScriptedLLMServer, seed_dir: Path, tmp_path: Path
) -> None:
    toml = 'version = "1.0"\n\n[metadata]\ndifficulty = "hard"\ncategory = "text"\n'
    llm_server.push(fenced(artifact(**{"task.toml": toml})))
    result = synthesizer(llm_server).synthesize(seed_dir, DECISION, out_dir=tmp_path / "b")
    config = read_bundle(tmp_path / "b").config
    assert result.accepted and config.metadata.category == "text" and config.metadata.difficulty == "hard"
    assert config.metadata.envpipeline["seed_id"] == "count-lines"


@pytest.mark.parametrize(
    ("text", "stage"),
    [
        ("", "parse"),
        ("[1, 2]", "contract"),
        ('{"task_name": "a", "instruction_md": "b"}', "contract"),
        ('{"task_name": "a", "instruction_md": "b", "files": {}, "extra": 1}', "contract"),
    ],
)
def test_parse_failures_name_their_stage(text: str, stage: str) -> None:
    output, got, failures = parse_output(text)
    assert output is None and got == stage and failures


def test_parse_tolerates_fences_and_inner_backticks() -> None:
    data = artifact(instruction="Run:\n```bash\nwc -l data.txt\n```\nthen write the count.")
    output, _, failures = parse_output("```json\n" + json.dumps(data) + "\n```")
    assert failures == [] and output is not None and "```bash" in output.instruction_md


def test_seed_files_are_shortened_textual_and_never_followed(seed_dir: Path, tmp_path: Path) -> None:
    from envpipeline.synth.prompts import PRIMARY_CHARS, shortened_seed_files

    (seed_dir / "environment/app/big.log").write_text("x" * 100_000)
    (seed_dir / "environment/app/rows.csv").write_text("a,b\n" * 2000)
    (seed_dir / "environment/app/blob.bin").write_bytes(b"\x00\x01\x02")
    (tmp_path / "secret.txt").write_text("outside the seed")
    (seed_dir / "environment/app/link.txt").symlink_to(tmp_path / "secret.txt")
    (seed_dir / "tests/test.sh").write_text("echo 1 > /logs/verifier/reward.txt\n" * 500)
    shown = shortened_seed_files(seed_dir)
    assert list(shown)[:5] == [
        "instruction.md",
        "task.toml",
        "environment/Dockerfile",
        "solution/solve.sh",
        "tests/test.sh",
    ]
    assert "truncated" in shown["tests/test.sh"] and len(shown["tests/test.sh"]) < PRIMARY_CHARS + 100
    assert "environment/app/data.txt" in shown
    assert shown["environment/app/rows.csv"].endswith("[truncated 6500 characters]")
    assert not {"environment/app/big.log", "environment/app/blob.bin", "environment/app/link.txt"} & set(
        shown
    )
