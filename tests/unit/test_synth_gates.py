"""The LLM synthesizer's acceptance gates, over real HTTP to the scripted server (issue 14).

Each gate gets a hostile reply built to fail it (rejected with its reason, then repaired or
left unaccepted) and an honest reply that passes. Also: the repair prompt after a gold failure
carries the verifier's output, and cached answers count as cached tokens, not spent ones.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from envpipeline.forge.loop import ForgeBudget, gold_validator, run_forge
from envpipeline.forge.passrates import seed_skills
from envpipeline.llm import LLMClient, LLMConfig
from envpipeline.synth.gates import AcceptanceLedger, hidden_literal_failures, hidden_literals
from envpipeline.synth.llm import LLMSynthesizer
from envpipeline.terminal.families.base import DIFFICULTIES
from envpipeline.terminal.families.registry import all_families
from tests.llm_server import Reply, ScriptedLLMServer, llm_server_fixture  # noqa: F401 - the fixture
from tests.unit.test_llm_synth import DECISION, SEED_FILES, artifact, fenced, user_prompt

pytestmark = pytest.mark.llm


def make_seed(root: Path, name: str) -> Path:
    folder = root / "seeds" / name
    for relative, text in SEED_FILES.items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_text(text)
    return folder


def synthesizer(server: ScriptedLLMServer, max_repairs: int = 0, cache: Path | None = None) -> LLMSynthesizer:
    config = LLMConfig(
        model="openai/forge-test", api_base=server.api_base, num_retries=0, timeout_sec=5, cache_dir=cache
    )
    return LLMSynthesizer(LLMClient(config), model=config.model, max_repairs=max_repairs)


def other_task(word: str = "words") -> dict:
    """An honest, distinct bundle: count the words of a file."""
    data = artifact(
        instruction=f"Count the {word} of /app/text.txt (separated by whitespace) and write the number "
        "to /app/count.txt.",
        **{
            "environment/app/text.txt": "one two three\nfour\n",
            "solution/solve.sh": "#!/bin/bash\nwc -w < /app/text.txt | tr -d ' ' > /app/count.txt\n",
            "tests/test.sh": '#!/bin/bash\nif [ "$(cat /app/count.txt)" = 4 ]; then echo 1 > '
            "/logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n",
        },
    )
    del data["files"]["environment/app/data.txt"]
    return data


# ------------------------------------------------------------------------------------------ skills


def test_a_rewrite_dropping_required_skill_nodes_is_rejected_and_repaired(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    hostile = artifact()
    hostile["metadata"]["skill_nodes"] = ["text_processing", "word_counting"]
    llm_server.push(fenced(hostile), fenced(artifact()))
    seed = make_seed(tmp_path, "count-lines")
    result = synthesizer(llm_server, max_repairs=1).synthesize(seed, DECISION, out_dir=tmp_path / "b")
    assert result.accepted
    first = result.attempts[0]
    assert first.failure_stage == "gate" and len(first.failures) == 1
    assert first.failures[0].startswith("skills:missing_nodes:")
    assert "['file_io', 'edge_case_handling']" in first.failures[0]  # the activated node counts too
    assert "file_io" in user_prompt(llm_server.requests[1]).split("## Failure summary", 1)[1][:600]
    assert "metadata.skill_nodes" in user_prompt(llm_server.requests[0])
    # the declared nodes become the bundle's skills when it is used as a seed again
    assert seed_skills(tmp_path / "b") == (["edge_case_handling", "file_io", "text_processing"], [])


def test_removable_nodes_may_go_and_task_toml_tags_count(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    reduce = DECISION.model_copy(
        update={
            "projection": "reduce_complexity",
            "action_variant": "reduce_complexity/in_depth",
            "optional_skills": ["file_io"],
            "removable_skills": ["file_io"],
            "selected_optional_skills": [],
            "required_skills": ["text_processing"],
        }
    )
    honest = artifact(**{"task.toml": 'version = "1.0"\n\n[metadata]\ntags = ["Text-Processing"]\n'})
    honest["metadata"].pop("skill_nodes")
    llm_server.push(fenced(honest))
    seed = make_seed(tmp_path, "count-lines")
    result = synthesizer(llm_server).synthesize(seed, reduce, out_dir=tmp_path / "b")
    assert result.accepted, result.attempts
    assert seed_skills(tmp_path / "b") == (["Text-Processing"], [])


def test_a_node_counted_toward_coverage_is_not_removable(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    """Portfolio mode: the solver activated file_io on this reduce (counted toward coverage), so the
    same reply that may drop an uncounted removable node is rejected for dropping it."""
    counted = DECISION.model_copy(
        update={
            "projection": "reduce_complexity",
            "action_variant": "reduce_complexity/in_depth",
            "optional_skills": ["file_io"],
            "removable_skills": ["file_io"],
            "selected_optional_skills": ["file_io"],
            "required_skills": ["text_processing"],
        }
    )
    honest = artifact(**{"task.toml": 'version = "1.0"\n\n[metadata]\ntags = ["Text-Processing"]\n'})
    honest["metadata"].pop("skill_nodes")
    llm_server.push(fenced(honest))
    result = synthesizer(llm_server).synthesize(
        make_seed(tmp_path, "count-lines"), counted, out_dir=tmp_path / "b"
    )
    assert not result.accepted
    [failure] = result.attempts[0].failures
    assert failure.startswith("skills:missing_nodes:") and "file_io" in failure
    assert '"allowed_removed_nodes": []' in user_prompt(llm_server.requests[0])


# --------------------------------------------------------------------------------------- duplicates


def test_one_unrelated_answer_is_accepted_once_not_for_every_seed(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    """The issue's case: a server answering one word-count task to every seed."""
    synth = synthesizer(llm_server)
    llm_server.push(*[fenced(other_task())] * 3)
    results = [
        synth.synthesize(
            make_seed(tmp_path, f"seed-{i}"),
            DECISION.model_copy(update={"seed_id": f"seed-{i}"}),
            out_dir=tmp_path / "out" / f"seed-{i}",
        )
        for i in range(3)
    ]
    assert [r.accepted for r in results] == [True, False, False]
    for rejected in results[1:]:
        assert rejected.attempts[0].failure_stage == "gate"
        assert rejected.attempts[0].failures == [
            "duplicate:content_hash: the bundle's files are identical to accepted bundle 'seed-0'"
        ]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["seed-0"]


def test_a_near_duplicate_instruction_is_rejected_a_distinct_task_accepted(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    synth = synthesizer(llm_server)
    near = other_task()
    near["instruction_md"] = near["instruction_md"].replace("Count the", "Tally the")
    near["files"]["environment/app/text.txt"] = "alpha beta\ngamma delta\n"  # other files, same task
    llm_server.push(fenced(other_task()), fenced(near), fenced(artifact()))
    seed = make_seed(tmp_path, "count-lines")
    outcomes = [
        synth.synthesize(seed, DECISION, out_dir=tmp_path / f"b{i}", sample_index=i) for i in range(3)
    ]
    assert [r.accepted for r in outcomes] == [True, False, True]
    reason = outcomes[1].attempts[0].failures[0]
    assert reason.startswith("duplicate:near_instruction:") and "'b0'" in reason and "Jaccard" in reason


def test_lake_bundles_seed_the_ledger(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    seed = make_seed(tmp_path, "count-lines")
    llm_server.push(fenced(artifact()))
    assert synthesizer(llm_server).synthesize(seed, DECISION, out_dir=tmp_path / "lake" / "old").accepted
    ledger = AcceptanceLedger()
    ledger.add_bundles([tmp_path / "lake" / "old"])
    config = LLMConfig(model="openai/forge-test", api_base=llm_server.api_base, num_retries=0, timeout_sec=5)
    fresh = LLMSynthesizer(LLMClient(config), model=config.model, max_repairs=0, ledger=ledger)
    llm_server.push(fenced(artifact()))
    result = fresh.synthesize(seed, DECISION, out_dir=tmp_path / "new", sample_index=7)
    assert not result.accepted and "identical to accepted bundle 'old'" in result.attempts[0].failures[0]


# ----------------------------------------------------------------------------------- hidden literals

HIDDEN_THRESHOLD_TEST = "lines = open('/app/data.txt').read().splitlines()\nassert lines.count('a') <= 37\n"


def test_tests_checking_unstated_literals_are_rejected(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    hidden_path = artifact(
        **{
            "tests/test.sh": '#!/bin/bash\nif [ "$(cat /app/.expected_total)" = 3 ]; then echo 1 > '
            "/logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n"
        }
    )
    hidden_threshold = artifact(**{"tests/test_report.py": HIDDEN_THRESHOLD_TEST})
    stated = artifact(
        instruction=artifact()["instruction_md"] + " The fixture must keep at most 37 lines reading 'a'.",
        **{"tests/test_report.py": HIDDEN_THRESHOLD_TEST},
    )
    llm_server.push(fenced(hidden_path), fenced(hidden_threshold), fenced(stated))
    seed = make_seed(tmp_path, "count-lines")
    result = synthesizer(llm_server, max_repairs=2).synthesize(seed, DECISION, out_dir=tmp_path / "b")
    assert result.accepted and [a.failure_stage for a in result.attempts] == ["gate", "gate", None]
    assert result.attempts[0].failures[0].startswith("hidden_literal:path:")
    assert "/app/.expected_total" in result.attempts[0].failures[0]
    assert result.attempts[1].failures == [
        "hidden_literal:threshold: the tests check ['37'] but neither instruction.md nor the environment "
        "files state them; state every tested filename and threshold in the instruction"
    ]


def test_computed_answers_tolerances_and_shell_redirects_are_not_flagged() -> None:
    files = {
        "instruction.md": "Write the mean latency to /app/out/mean.txt.",
        "environment/app/x.log": "1 2 3\n",
        "tests/test.sh": "python3 /tests/t.py 2>/dev/null && echo 1 > /logs/verifier/reward.txt\n"
        '[ "$(wc -l < /app/out/mean.txt)" -le 1 ]\n',
        "tests/t.py": "v = float(open('/app/out/mean.txt').read())\nassert abs(v - 2.0) < 0.011\n"
        "assert v == 2.0 and len(str(v)) < 6\n",
    }
    assert hidden_literals(files) == {}
    files["tests/t.py"] += "assert v > 1.5\n"
    files["tests/test.sh"] += "[ $(stat -c %s /app/summary.bin) -gt 40 ]\n"
    assert hidden_literals(files) == {"path": ["/app/summary.bin"], "threshold": ["1.5", "40"]}


@pytest.mark.parametrize("name", sorted(all_families()))
def test_every_shipped_family_passes_the_hidden_literal_gate(name: str) -> None:
    family = all_families()[name]
    for difficulty in DIFFICULTIES:
        for seed in range(3):
            task = family.generate(seed, family.knobs_for(difficulty), difficulty)
            files = {
                "instruction.md": task.instruction,
                **{f"environment/{k}": v for k, v in task.environment.items()},
                **{f"tests/{k}": v for k, v in task.tests.items()},
            }
            assert hidden_literal_failures(files) == [], (difficulty, seed)


def test_a_family_bundle_with_a_planted_threshold_is_rejected() -> None:
    family = all_families()["log-processing"]
    task = family.generate(0, family.knobs_for("medium"), "medium")
    files = {"instruction.md": task.instruction, **{f"tests/{k}": v for k, v in task.tests.items()}}
    name = next(k for k in files if k.endswith(".py"))
    files[name] = copy.copy(files[name]) + "\nassert len_total_seen >= 9137\n"
    assert hidden_literals(files) == {"threshold": ["9137"]}


# ------------------------------------------------------------------------------- gold-failure repair


def test_repair_after_a_gold_failure_shows_the_verifier_output(
    llm_server: ScriptedLLMServer, tmp_path: Path, local_sandbox
) -> None:
    broken = artifact(
        **{
            "tests/test.sh": '#!/bin/bash\ngot="$(cat /app/out.txt)"\n'
            'echo "CHECK out.txt: want 4, got $got" >&2\n'
            'if [ "$got" = 4 ]; then echo 1 > /logs/verifier/reward.txt; '
            "else echo 0 > /logs/verifier/reward.txt; fi\n"
        }
    )
    llm_server.push(fenced(broken), fenced(artifact()))
    seed = make_seed(tmp_path, "count-lines")
    result = synthesizer(llm_server, max_repairs=1).synthesize(
        seed, DECISION, out_dir=tmp_path / "b", validate=gold_validator(local_sandbox)
    )
    assert result.attempts[0].failure_stage == "validate"
    summary = user_prompt(llm_server.requests[1]).split("## Failure summary", 1)[1].split("\n## ", 1)[0]
    assert "gold:oracle_failed" in summary
    assert "verifier output" in summary and "CHECK out.txt: want 4, got 3" in summary
    assert len(summary) < 4000
    assert result.accepted


# ------------------------------------------------------------------------------------------- cache


def test_cached_answers_are_accounted_as_cached_not_spent(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    seed = make_seed(tmp_path, "count-lines")
    cache = tmp_path / "cache"
    llm_server.push(Reply(content=fenced(artifact()), prompt_tokens=1500, completion_tokens=600))
    first = synthesizer(llm_server, cache=cache).synthesize(seed, DECISION, out_dir=tmp_path / "a")
    assert (first.prompt_tokens, first.completion_tokens, first.cached_tokens) == (1500, 600, 0)
    again = synthesizer(llm_server, cache=cache)
    report = run_forge(
        [DECISION], {DECISION.seed_id: seed}, again, lambda _: [], target=1, out_dir=tmp_path / "run"
    )
    assert len(llm_server.requests) == 1  # the second run was served from the cache
    assert len(report.accepted) == 1
    assert (report.prompt_tokens, report.completion_tokens, report.cached_tokens) == (0, 0, 2100)
    assert report.summary()["cached_tokens"] == 2100 and report.accepted[0].tokens == 0
    usage = again.client.usage()
    assert (usage.calls, usage.cached_calls, usage.prompt_tokens) == (1, 1, 0)


def test_the_loop_fed_one_unrelated_answer_exports_it_once_and_counts_the_rejections(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    """The issue's scenario through `run_forge`: every request answered with one word-count task."""
    llm_server.default = fenced(other_task())
    decisions = [DECISION.model_copy(update={"seed_id": f"seed-{i}"}) for i in range(3)]
    seeds = {d.seed_id: make_seed(tmp_path, d.seed_id) for d in decisions}
    report = run_forge(
        decisions,
        seeds,
        synthesizer(llm_server, max_repairs=1),
        lambda _: [],
        target=3,
        out_dir=tmp_path / "run",
        budget=ForgeBudget(max_attempts=6),
    )
    assert [a.seed_id for a in report.accepted] == ["seed-0"]
    assert report.budget_exhausted and report.attempts == 7  # 1 accepted + 3 records x 2 rejected
    assert report.rejection_reasons == {"gate:duplicate:content_hash": 6}
