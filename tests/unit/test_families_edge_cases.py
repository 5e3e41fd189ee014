"""Edge cases drawn per instance, checked in-process for service-monitoring, sqlite-query and
text-parsing (no sandbox): a solution missing a set of edge cases reproduces the expected answer
exactly when the set misses none the instance contains.

Each family's own model computes the answers: `analyze` (service-monitoring), `variant_sql` run
on the built database (sqlite-query), and the solver program itself, run on the fixtures in a
temporary folder (text-parsing). Every missed set is tried on instances with the drawn edge
cases, with none and with all, at every preset and at the knob extremes; a few seeds by default,
fifty with `make test-full`. The sandbox runs of the same contract are in test_family_contract.py.
"""

import ast
import contextlib
import itertools
import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest

from envpipeline.models.bundle import Difficulty
from envpipeline.terminal.families import service_monitoring, sqlite_query
from envpipeline.terminal.families.base import DIFFICULTIES, Knobs
from envpipeline.terminal.families.registry import get_family


def _embedded(task):
    """The EXPECTED value of the task's test_outputs.py."""
    line = task.tests["test_outputs.py"].split("EXPECTED = ", 1)[1].split("\n", 1)[0]
    if line.startswith("json.loads("):
        return json.loads(ast.literal_eval(line.removeprefix("json.loads(").removesuffix(")")))
    return ast.literal_eval(line)


def _service_monitoring(task, missed, tmp_path):
    env = task.environment
    statuses = {
        k.rsplit("/", 1)[1].removesuffix(".status"): v for k, v in env.items() if k.endswith(".status")
    }
    logs: dict[str, list[str]] = {}
    for key in sorted(k for k in env if k.startswith("app/logs/")):  # `analyze` sorts the times
        logs.setdefault(key.rsplit("/", 1)[1].split(".log")[0], []).extend(env[key].splitlines())
    conf = dict(line.split("=", 1) for line in env["app/monitor.conf"].split())
    report, plan = service_monitoring.analyze(
        statuses, logs, int(conf["burst_count"]), int(conf["burst_window"]), frozenset(missed)
    )
    return {"report": report, "plan": plan}


def _norm(cell):
    try:
        return round(float(cell), 2)
    except ValueError:
        return cell.strip()


def _sqlite_query(task, missed, tmp_path):
    db = sqlite3.connect(":memory:")
    db.executescript(task.environment["app/.setup/shop.sql"])
    answers = {}
    for file, sql in task.solver.data["questions"]:
        cursor = db.execute(sqlite_query.variant_sql(sql, frozenset(missed)))
        rows = [[d[0] for d in cursor.description], *[[str(v) for v in row] for row in cursor.fetchall()]]
        answers[file] = [[_norm(c) for c in row] for row in rows]
    db.close()
    return answers


def _text_parsing(task, missed, tmp_path):
    shutil.rmtree(tmp_path / "app", ignore_errors=True)  # no report file of an earlier instance
    for relative, content in task.environment.items():
        if relative.startswith("app/"):
            (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / relative).write_text(content)
    script = task.solution_missing(set(missed))["solve.sh"]
    source = script.split("<<'PY'\n", 1)[1].rsplit("PY\n", 1)[0]
    with contextlib.chdir(tmp_path):  # relative paths: a tmp_path may hold glob characters
        exec(source.replace("/app/", "app/"), {"__name__": "solver"})  # noqa: S102
    return json.loads((tmp_path / "app/incidents.json").read_text())


def _expected(name, task):
    expected = _embedded(task)
    if name == "sqlite-query":
        return {file: [[_norm(c) for c in row] for row in rows] for file, rows in expected.items()}
    return expected


MODELS = {
    "service-monitoring": _service_monitoring,
    "sqlite-query": _sqlite_query,
    "text-parsing": _text_parsing,
}


def _knob_settings(family) -> list[tuple[Difficulty, Knobs]]:
    """Every preset, then every knob at its minimum (as "easy") and at its maximum (as "hard")."""
    properties = family.knob_model.model_json_schema()["properties"]
    extremes: list[tuple[Difficulty, Knobs]] = [
        ("easy", family.knob_model(**{k: p["minimum"] for k, p in properties.items()})),
        ("hard", family.knob_model(**{k: p["maximum"] for k, p in properties.items()})),
    ]
    presets: list[tuple[Difficulty, Knobs]] = [(d, family.knobs_for(d)) for d in DIFFICULTIES]
    return presets + extremes


def _assert_exact(name: str, seeds: range, tmp_path: Path) -> None:
    family = get_family(name)
    model = MODELS[name]
    subsets = [
        set(s) for r in range(len(family.variants) + 1) for s in itertools.combinations(family.variants, r)
    ]
    planted = {v: 0 for v in family.variants}
    for seed in seeds:
        for difficulty, knobs in _knob_settings(family):
            for edge_cases in (None, (), family.variants):
                task = family.generate(seed, knobs, difficulty, edge_cases)
                present = set(task.edge_cases)
                for v in present:
                    planted[v] += 1
                expected = _expected(name, task)
                for missed in subsets:
                    passes = model(task, missed, tmp_path) == expected
                    assert passes == (not missed & present), (
                        seed,
                        difficulty,
                        sorted(present),
                        sorted(missed),
                    )
    assert all(planted.values()), planted


@pytest.mark.parametrize("name", sorted(MODELS))
def test_a_solution_passes_exactly_when_it_misses_no_present_edge_case(name, tmp_path):
    _assert_exact(name, range(2), tmp_path)


@pytest.mark.full_matrix
@pytest.mark.parametrize("name", sorted(MODELS))
def test_a_solution_passes_exactly_when_it_misses_no_present_edge_case_over_fifty_seeds(name, tmp_path):
    _assert_exact(name, range(2, 52), tmp_path)


def test_absent_edge_cases_stay_out_of_the_fixtures():
    """The fixtures of an instance without edge cases show none of them; with all, each one."""
    monitoring = get_family("service-monitoring")
    for edge_cases, shown in (((), False), (monitoring.variants, True)):
        task = monitoring.generate(4, monitoring.knobs_for("hard"), "hard", edge_cases=edge_cases)
        visible = "".join(task.environment.values())
        assert ("enabled=no" in visible) == shown
        assert bool(re.search(r"(?m)^\S+ critical ", visible, re.IGNORECASE)) == shown
    shop = get_family("sqlite-query")
    for edge_cases, shown in (((), False), (["includes_refunded"], True)):
        task = shop.generate(4, shop.knobs_for("hard"), "hard", edge_cases=edge_cases)
        assert ("refunded" in task.environment["app/.setup/shop.sql"].lower()) == shown
    text = get_family("text-parsing")
    for edge_cases, shown in (((), False), (text.variants, True)):
        task = text.generate(4, text.knobs_for("hard"), "hard", edge_cases=edge_cases)
        reports = "".join(v for k, v in task.environment.items() if k.startswith("app/reports/"))
        dates = re.findall(r"(?im)^date\s*:\s*(.*?)\s*$", reports)
        assert dates and any(not re.fullmatch(r"\d{4}-\d\d-\d\d", d) for d in dates) == shown
        assert bool(re.search(r"(?im)^actions\s*:\s*none\s*$", reports)) == shown
        assert any(r["summary"].count(".") > 1 for r in _embedded(task)) == shown
