"""Family-specific checks of the data/file/database/git task families (no sandbox needed).

The registry-wide contract (oracle = 1, nop = 0, partials < 1) lives in test_family_contract.py;
these tests pin what each generator must guarantee: knobs change the task, every variant differs
from the oracle, fixtures keep the edge cases the variants miss, and nothing agent-visible leaks
the expected answers.
"""

import ast
import json

import pytest

from envpipeline.terminal.families.base import DIFFICULTIES
from envpipeline.terminal.families.registry import get_family

NAMES = [
    "log-processing",
    "csv-json-merge",
    "text-parsing",
    "file-organization",
    "sqlite-query",
    "git-operations",
]


@pytest.mark.parametrize("name", NAMES)
def test_generates_every_difficulty_with_distinct_variants(name):
    family = get_family(name)
    for difficulty in DIFFICULTIES:
        task = family.generate(1, family.knobs_for(difficulty), difficulty)
        assert task.name == f"{name}-1-{difficulty}"
        assert 60 <= len(task.instruction.split()) <= 350
        assert task.environment["Dockerfile"].startswith("FROM ")
        oracle = task.solutions["oracle"]["solve.sh"]
        for variant in family.variants:
            assert task.solutions[variant]["solve.sh"] != oracle, variant
        compile(task.tests["test_outputs.py"], "test_outputs.py", "exec")


@pytest.mark.parametrize("name", NAMES)
def test_breadth_knobs_grow_the_fixtures(name):
    family = get_family(name)
    knobs = family.knobs_for("medium")
    breadth = [
        k for k, f in family.knob_model.model_fields.items() if f.json_schema_extra["axis"] == "breadth"
    ]
    small = family.generate(2, knobs, "medium")
    big_knobs = family.knob_model(
        **{**knobs.model_dump(), **{k: family.knob_model.model_fields[k].metadata[1].le for k in breadth[:1]}}
    )
    big = family.generate(2, big_knobs, "medium")
    size = lambda t: sum(len(v) for v in t.environment.values())  # noqa: E731
    assert size(big) > size(small)


def _expected(task):
    text = task.tests["test_outputs.py"]
    literal = text.split("EXPECTED = ", 1)[1].split("\n", 1)[0]
    value = ast.literal_eval(literal.removeprefix("json.loads(").removesuffix(")"))
    return json.loads(value) if isinstance(value, str) else value


@pytest.mark.parametrize("difficulty", DIFFICULTIES)
def test_fixtures_keep_the_edge_cases(difficulty):
    logs = get_family("log-processing")
    task = logs.generate(0, logs.knobs_for(difficulty), difficulty)
    text = "".join(v for k, v in task.environment.items() if "access.log" in k)
    assert "?id=" in text and "\n\n" in text or "\n   \n" in text
    merge = get_family("csv-json-merge")
    padded = lambda t: any(  # noqa: E731
        row.split(",")[0].strip().startswith("0")
        for row in t.environment["app/data/customers.csv"].splitlines()
    )
    assert padded(merge.generate(0, merge.knobs_for(difficulty), difficulty, edge_cases=merge.variants))
    assert not padded(merge.generate(0, merge.knobs_for(difficulty), difficulty, edge_cases=()))
    files = get_family("file-organization")
    task = files.generate(0, files.knobs_for(difficulty), difficulty)
    assert (
        "app/inbox/.DS_Store" in task.environment and "app/organized/documents/notes.txt" in task.environment
    )
    git = get_family("git-operations")
    task = git.generate(0, git.knobs_for(difficulty), difficulty)
    expected = _expected(task)
    assert expected["bad"] in expected["subjects"] and expected["intro"] in expected["subjects"]
    assert "make_repo.sh" in task.environment["Dockerfile"]


def test_answers_never_reach_the_environment():
    sql = get_family("sqlite-query")
    task = sql.generate(3, sql.knobs_for("hard"), "hard")
    expected = _expected(task)
    visible = "".join(task.environment.values())
    assert "RUN sqlite3 /app/shop.db" in task.environment["Dockerfile"]
    for rows in expected.values():
        money = [cell for row in rows[1:] for cell in row if "." in cell]
        assert not any(cell in visible for cell in money[:5])
