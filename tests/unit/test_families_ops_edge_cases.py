"""Per-instance edge cases of the data-validation, file-organization, git-operations and
log-processing families (no sandbox needed).

Each edge case has a predicate on the generated fixtures: an instance generated with a set of
edge cases shows exactly those (present ones planted, absent ones kept out of the random content),
so the partial variant missing an absent edge case cannot be caught by the fixtures. Whether the
variants then score 1 / below 1 is checked by execution in test_family_contract.py and the
sandbox sample of the issue-14 report.
"""

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


PREDICATES: dict[str, dict[str, Callable[[GeneratedTask], bool]]] = {
    "log-processing": {
        "keeps_query_string": lambda t: any("?" in line for line in _access_lines(t)),
        "counts_blank_lines_as_malformed": lambda t: any(not line.strip() for line in _access_lines(t)),
        "accepts_dash_latency": lambda t: any(line.endswith(" -") for line in _access_lines(t)),
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
