"""The pure group scorer and every trainer's reward adapter agree; full completion scores highest."""

from __future__ import annotations

import inspect
import json
from itertools import product

import pytest

from envpipeline.agents.environment import ComposedEnvironment
from envpipeline.export import rewards
from envpipeline.export.rewards import (
    completion_passes,
    openrlhf_reward_func,
    score_group,
    trl_reward_fn,
    verifiers_group_reward,
    verl_batch_compute_score,
    verl_compute_score,
)
from envpipeline.export.rows import trl_rl_row, verl_rl_row
from envpipeline.export.unified import AcceptedTask, from_task_record
from envpipeline.models.task import TaskRecord
from envpipeline.rewards.cfrr import cfrr_rewards, grpo_advantages
from tests.export_fixture import composed_records


@pytest.fixture(scope="module")
def records() -> list[TaskRecord]:
    return composed_records(2)


@pytest.fixture(scope="module")
def tasks(records: list[TaskRecord]) -> list[AcceptedTask]:
    return [from_task_record(r) for r in records]


def final_state(record: TaskRecord) -> dict:
    """The joint state after running the reference solution (plain JSON)."""
    from envpipeline.agents.reference import run_reference

    env = ComposedEnvironment.from_task_environment(record.environment)
    run_reference(env, record.reference_solution, record.criteria, record.reference_output)
    return env.snapshot()


def test_score_group_modes_rank_full_completion_strictly_highest() -> None:
    matrix = [list(row) for row in product([True, False], repeat=3)]
    for mode in ("cfrr", "checklist", "binary"):
        for weights in (None, [1.0, 2.0, 0.5]):
            scores = score_group(matrix, weights, mode)
            full, partial = scores.rewards[0], scores.rewards[1:]
            assert full == 1.0 and all(r < full for r in partial), (mode, weights)
            assert scores.advantages == pytest.approx(grpo_advantages(scores.rewards))
    assert score_group(matrix).rewards == cfrr_rewards(matrix)
    assert score_group(matrix, mode="binary").rewards == [1.0] + [0.0] * 7
    assert score_group(matrix, [1.0, 1.0, 2.0], "checklist").rewards[1] == pytest.approx(0.5)  # T,T,F: 2 of 4
    scores = score_group([[True, False], [True, False]])
    assert scores.advantages == [0.0, 0.0] and scores.per_criterion_pass_rate == [1.0, 0.0]
    with pytest.raises(ValueError):
        score_group([[True], [True, False]])


def test_text_alone_checks_only_text_criteria(tasks: list[AcceptedTask], records: list[TaskRecord]) -> None:
    rubric = tasks[0].rubric()
    answer = rubric.reference_output
    passes = completion_passes(rubric, answer)
    assert passes == [c.check == "text" for c in rubric.criteria], "state criteria fail without evidence"
    full = completion_passes(rubric, answer, final_state=json.dumps(final_state(records[0])))
    assert all(full)
    untouched = ComposedEnvironment.from_task_environment(records[0].environment).snapshot()
    initial = completion_passes(rubric, answer, final_state=untouched)
    # in the untouched initial state (distractors included) only "nothing else changed" holds, besides the answer
    assert initial == [c.check == "text" or c.kind == "state_preserved" for c in rubric.criteria]
    reported = completion_passes(rubric, "nothing", criteria_passed={c.id: True for c in rubric.criteria})
    assert all(reported)


def test_verl_per_sample_agrees_with_score_group(
    tasks: list[AcceptedTask], records: list[TaskRecord]
) -> None:
    row = verl_rl_row(tasks[0], "rl", 0)
    truth, info = row["reward_model"]["ground_truth"], dict(row["extra_info"])
    rubric = tasks[0].rubric()
    text_only = verl_compute_score(
        data_source=row["data_source"],
        solution_str=rubric.reference_output,
        ground_truth=truth,
        extra_info=info,
    )
    vector = completion_passes(rubric, rubric.reference_output)
    assert text_only["score"] == pytest.approx(score_group([vector], rubric.weights()).rewards[0])
    full = verl_compute_score(
        row["data_source"],
        rubric.reference_output,
        truth,
        {**info, "final_state": json.dumps(final_state(records[0]))},
    )
    assert full["score"] == 1.0 > text_only["score"] and full["full_pass"] == 1.0
    wrong = verl_compute_score(row["data_source"], "no idea", truth, info)
    assert wrong["score"] == 0.0


def test_verl_batch_regroups_by_task_id(tasks: list[AcceptedTask], records: list[TaskRecord]) -> None:
    rows = [verl_rl_row(t, "rl", i) for i, t in enumerate(tasks)]
    states = [json.dumps(final_state(r)) for r in records]
    # interleaved rollouts of two tasks: full, text-only, nothing, for each
    plan = [(0, "full"), (1, "text"), (0, "text"), (1, "full"), (0, "none"), (1, "none")]
    texts, truths, infos = [], [], []
    for task_index, kind in plan:
        rubric = tasks[task_index].rubric()
        info = dict(rows[task_index]["extra_info"])
        if kind == "full":
            info["final_state"] = states[task_index]
        texts.append(rubric.reference_output if kind != "none" else "")
        truths.append(rows[task_index]["reward_model"]["ground_truth"])
        infos.append(info)
    scores = verl_batch_compute_score(
        data_sources=[r["data_source"] for r in rows for _ in range(3)],
        solution_strs=texts,
        ground_truths=truths,
        extra_infos=infos,
    )
    assert len(scores) == len(plan)
    for task_index in (0, 1):
        members = [i for i, (t, _) in enumerate(plan) if t == task_index]
        rubric = tasks[task_index].rubric()
        matrix = [completion_passes(rubric, texts[i], infos[i].get("final_state")) for i in members]
        expected = score_group(matrix, rubric.weights())
        assert [scores[i]["score"] for i in members] == pytest.approx(expected.rewards)
        assert [scores[i]["advantage"] for i in members] == pytest.approx(expected.advantages)
    assert scores[0]["score"] == 1.0 > scores[2]["score"] > scores[4]["score"] == 0.0
    assert len({tuple(sorted(s)) for s in scores}) == 1, "same keys on every sample (verl logs them)"


def test_trl_verifiers_and_openrlhf_agree_with_score_group(
    tasks: list[AcceptedTask], records: list[TaskRecord]
) -> None:
    row = trl_rl_row(tasks[0], "rl", 0)
    rubric = tasks[0].rubric()
    completions = [
        [{"role": "assistant", "content": rubric.reference_output}],
        [{"role": "assistant", "content": "I give up."}],
    ]
    state = json.dumps(final_state(records[0]))
    columns = {
        k: [row[k]] * 2 + [None] for k in ("answer", "info", "task_id", "family", "split", "data_source")
    }
    got = trl_reward_fn(
        prompts=[row["prompt"]] * 3,
        completions=[*completions, "foreign row"],
        completion_ids=[[1], [2], [3]],
        trainer_state=None,
        final_state=[state, None, None],
        **columns,
    )
    matrix = [
        completion_passes(rubric, rubric.reference_output, state),
        completion_passes(rubric, "I give up."),
    ]
    expected = score_group(matrix, rubric.weights()).rewards
    assert got[:2] == pytest.approx(expected) and got[2] is None
    assert got[0] == 1.0
    infos = [json.loads(row["info"])] * 2
    group = verifiers_group_reward(
        completions=completions, infos=infos, answers=None, states=[{"final_state": state}, {}]
    )
    assert group == pytest.approx(expected)
    prompt = "<|user|>task<|assistant|>"
    result = openrlhf_reward_func(
        queries=[prompt + rubric.reference_output, prompt + "no"],
        prompts=[prompt] * 2,
        labels=[row["answer"]] * 2,
    )
    text_matrix = [completion_passes(rubric, rubric.reference_output), completion_passes(rubric, "no")]
    # per sample (OpenRLHF sends samples one by one): each gets its checklist score, and says so
    assert list(map(float, result["rewards"])) == pytest.approx(
        [score_group([row], rubric.weights(), "checklist").rewards[0] for row in text_matrix]
    )
    assert 0.0 < float(result["rewards"][0]) < 1.0, "text alone cannot pass the state criteria"
    assert list(map(float, result["extra_logs"]["per_sample"])) == [1.0, 1.0]
    assert set(result) == {"rewards", "scores", "extra_logs"}


def test_world_and_terminal_need_reported_criteria(tmp_path) -> None:
    from envpipeline.export.unified import Rubric, RubricCriterion

    rubric = Rubric(
        task_id="w",
        family="world",
        criteria=[
            RubricCriterion(id="c1", description="a", kind="row_added", check="state", weight=1.0),
            RubricCriterion(id="c2", description="b", kind="file_added", check="state", weight=2.0),
        ],
    )
    truth = rubric.model_dump_json()
    assert verl_compute_score("envpipeline/world", "done", truth)["score"] == 0.0
    both = verl_compute_score(
        "envpipeline/world", "done", truth, {"criteria_passed": {"c1": True, "c2": True}}
    )
    half = verl_compute_score("envpipeline/world", "done", truth, {"criteria_passed": {"c1": True}})
    assert both["score"] == 1.0 > half["score"] > 0.0


def test_signatures_match_each_trainer() -> None:
    def names(fn) -> list[str]:
        return [p.name for p in inspect.signature(fn).parameters.values()]

    assert names(verl_compute_score)[:4] == ["data_source", "solution_str", "ground_truth", "extra_info"]
    assert inspect.signature(verl_compute_score).parameters["extra_info"].default is None
    assert names(verl_batch_compute_score)[:4] == [
        "data_sources",
        "solution_strs",
        "ground_truths",
        "extra_infos",
    ]
    assert names(trl_reward_fn)[:3] == ["prompts", "completions", "completion_ids"]
    assert names(verifiers_group_reward)[0] == "completions" and "infos" in names(verifiers_group_reward)
    assert names(openrlhf_reward_func) == ["queries", "prompts", "labels"]
    for fn in (verl_compute_score, verl_batch_compute_score, trl_reward_fn, verifiers_group_reward):
        assert any(p.kind is inspect.Parameter.VAR_KEYWORD for p in inspect.signature(fn).parameters.values())
    assert rewards.compute_score is verl_compute_score and rewards.reward_func is openrlhf_reward_func
    assert rewards.reward_fn is trl_reward_fn and rewards.compute_score_batch is verl_batch_compute_score
