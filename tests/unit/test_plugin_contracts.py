"""Contract tests of the reward-mode and export-format registries: every registered plug-in keeps its contract."""

from __future__ import annotations

import pytest

from envpipeline.errors import ConfigError
from envpipeline.export.formats import STAGE_SPLITS, export_formats, get_format
from envpipeline.export.rewards import score_group
from envpipeline.export.splits import assign_splits
from envpipeline.models.dataset import AcceptedTask
from envpipeline.rewards.modes import check_reward_mode, register_reward_mode, reward_modes
from tests.export_fixture import build_tasks


@pytest.mark.parametrize("name", sorted(reward_modes()))
def test_every_reward_mode_scores_full_passes_one_partial_below_and_nothing_zero(name):
    assert check_reward_mode(reward_modes()[name]) == []


def test_the_reward_contract_rejects_a_mode_that_pays_for_nothing():
    def everyone_wins(pass_matrix, weights, floor, partial_scale):
        return [1.0 for _ in pass_matrix]

    problems = check_reward_mode(everyone_wins)
    assert any("nothing passed scores 1.0" in p for p in problems)
    assert any("not below 1.0" in p for p in problems)


def test_a_reward_mode_name_cannot_be_taken_twice_and_unknown_modes_are_refused():
    with pytest.raises(ConfigError, match="registered twice"):
        register_reward_mode("cfrr", lambda m, w, f, p: [0.0] * len(m))
    with pytest.raises(ValueError, match="unknown mode"):
        score_group([[True]], mode="lenient")  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> list[AcceptedTask]:
    return build_tasks(tmp_path_factory.mktemp("contract-data"))


@pytest.mark.parametrize("name", list(export_formats()))
def test_every_export_format_writes_one_row_per_task_of_its_splits_with_its_task_id(name, tasks):
    fmt = export_formats()[name]
    split = assign_splits(tasks)
    by_id = {t.task_id: t for t in tasks}
    for split_name in STAGE_SPLITS[fmt.stage]:
        chosen = [by_id[i] for i in split.of(split_name)]
        if fmt.stage == "sft":
            chosen = [t for t in chosen if t.reference_messages is not None]
        for index, task in enumerate(chosen):
            row = fmt.row(task, split_name, index)
            assert task.task_id in repr(row), f"{name} row does not name its task"
            assert ("messages" in row) == (fmt.stage == "sft")


def test_an_unknown_export_format_is_refused_with_the_known_ones():
    with pytest.raises(ConfigError, match="known: .*verl"):
        get_format("csv")
