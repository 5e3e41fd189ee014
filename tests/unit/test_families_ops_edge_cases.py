"""Per-instance edge cases of the data-validation, file-organization, git-operations and
log-processing families (no sandbox needed).

Each edge case has a predicate on the generated fixtures: an instance generated with a set of
edge cases shows exactly those (present ones planted, absent ones kept out of the random content),
so the partial variant missing an absent edge case cannot be caught by the fixtures. Whether the
variants then score 1 / below 1 is checked by execution in test_family_contract.py and the
sandbox sample of the issue-14 report.
"""

import ast
import csv
import io
import json
from collections.abc import Callable

import pytest

from envpipeline.terminal.families.base import DIFFICULTIES, GeneratedTask
from envpipeline.terminal.families.registry import get_family


def _access_lines(task: GeneratedTask) -> list[str]:
    return [
        line
        for path, text in sorted(task.environment.items())
        if "/access.log" in path
        for line in text.split("\n")[:-1]
    ]


def _expected(task: GeneratedTask) -> dict:
    text = task.tests["test_outputs.py"]
    literal = text.split("EXPECTED = ", 1)[1].split("\n", 1)[0]
    value = ast.literal_eval(literal.removeprefix("json.loads(").removesuffix(")"))
    return json.loads(value) if isinstance(value, str) else value


def _inbox(task: GeneratedTask, hidden: bool) -> list[str]:
    """Paths under the inbox (relative to it), the hidden ones or the visible ones."""
    paths = [k.removeprefix("app/inbox/") for k in task.environment if k.startswith("app/inbox/")]
    return [p for p in paths if any(part.startswith(".") for part in p.split("/")) == hidden]


def _upper_extension(task: GeneratedTask) -> bool:
    for path in _inbox(task, hidden=False):
        stem, dot, ext = path.rsplit("/", 1)[-1].rpartition(".")
        if dot and stem and ext != ext.lower():
            return True
    return False


def _name_collision(task: GeneratedTask) -> bool:
    names = [p.rsplit("/", 1)[-1] for p in _inbox(task, hidden=False)]
    organized = {k.rsplit("/", 1)[-1] for k in task.environment if k.startswith("app/organized/")}
    return len(set(names)) < len(names) or bool(organized & set(names))


def _git_flag_mentions(task: GeneratedTask) -> tuple[str, list[str]]:
    expected = _expected(task)
    flag = expected["intro"].split()[1]
    return flag, [s for s in expected["subjects"] if flag in s and s != expected["intro"]]


def _records(task: GeneratedTask) -> tuple[dict, list[dict[str, str]]]:
    schema = json.loads(task.environment["app/schema.json"])
    return schema, list(csv.DictReader(io.StringIO(task.environment["app/data/records.csv"])))


def _at_a_maximum(task: GeneratedTask) -> bool:
    schema, rows = _records(task)
    bounded = [f["name"] for f in schema["fields"] if "max" in f]
    maxima = {f["name"]: f["max"] for f in schema["fields"] if "max" in f}
    return any(
        row[name].strip().lstrip("+").replace(".", "", 1).isdigit() and float(row[name]) == maxima[name]
        for row in rows
        for name in bounded
    )


def _empty_optional(task: GeneratedTask) -> bool:
    schema, rows = _records(task)
    optional = [
        f["name"] for f in schema["fields"] if not f["required"] and f["type"] in ("int", "float", "date")
    ]
    return any(row[name].strip() == "" for row in rows for name in optional)


def _duplicate_id(task: GeneratedTask) -> bool:
    ids = [row["id"].strip() for row in _records(task)[1] if row["id"].strip().isdigit()]
    return len(set(ids)) < len(ids)


PREDICATES: dict[str, dict[str, Callable[[GeneratedTask], bool]]] = {
    "log-processing": {
        "keeps_query_string": lambda t: any("?" in line for line in _access_lines(t)),
        "counts_blank_lines_as_malformed": lambda t: any(not line.strip() for line in _access_lines(t)),
        "accepts_dash_latency": lambda t: any(line.endswith(" -") for line in _access_lines(t)),
    },
    "file-organization": {
        "case_sensitive_extensions": _upper_extension,
        "overwrites_collisions": _name_collision,
        "moves_hidden_files": lambda t: bool(_inbox(t, hidden=True)),
    },
    "git-operations": {
        # the flag removed and re-added by commits that name it
        "latest_introduction": lambda t: any(s.startswith("Restore ") for s in _git_flag_mentions(t)[1]),
        # messages naming the flag in commits that neither add nor remove it
        "greps_commit_messages": lambda t: any(
            not s.startswith(("Remove ", "Restore ")) for s in _git_flag_mentions(t)[1]
        ),
        "rewrites_history": lambda t: _expected(t)["subjects"][-1] != _expected(t)["bad"],
    },
    "data-validation": {
        "no_trim": lambda t: any(v != v.strip() for row in _records(t)[1] for v in row.values()),
        "ignores_duplicates": _duplicate_id,
        "exclusive_max": _at_a_maximum,
        "empty_optional_checked": _empty_optional,
    },
}

CASES = [(name, d) for name in PREDICATES for d in DIFFICULTIES]


@pytest.mark.parametrize(("name", "difficulty"), CASES)
def test_fixtures_show_exactly_the_instance_edge_cases(name, difficulty):
    family = get_family(name)
    predicates = PREDICATES[name]
    assert set(predicates) == set(family.variants)
    assert set(family.edge_case_axes) == set(family.variants)
    knobs = family.knobs_for(difficulty)
    for seed in (0, 1):
        sets = [frozenset(), frozenset(family.variants), *(frozenset({v}) for v in family.variants)]
        for edge_cases in sets:
            task = family.generate(seed, knobs, difficulty, edge_cases=edge_cases)
            assert task.edge_cases == sorted(edge_cases)
            shown = {v for v, shows in predicates.items() if shows(task)}
            assert shown == edge_cases, (seed, sorted(edge_cases), sorted(shown))


@pytest.mark.parametrize("name", sorted(PREDICATES))
def test_drawn_edge_cases_follow_the_knobs(name):
    family = get_family(name)
    easy = [family.generate(s, family.knobs_for("easy"), "easy") for s in range(20)]
    hard = [family.generate(s, family.knobs_for("hard"), "hard") for s in range(20)]
    for task in easy + hard:
        shown = {v for v, shows in PREDICATES[name].items() if shows(task)}
        assert shown == set(task.edge_cases)
    assert sum(len(t.edge_cases) for t in easy) < sum(len(t.edge_cases) for t in hard)
