"""Edge cases of archive-handling, config-editing, cron-scheduling and csv-json-merge: in the fixtures
exactly when the instance contains them.

Each edge case is read off the agent-visible fixtures by a predicate of its own (not by the
generator's bookkeeping): generated with every edge case, each predicate holds; generated without
one, its predicate fails, so the partial variant missing it has nothing to miss. A sandbox sample
then scores a solver missing the present edge case (< 1) and one missing every absent one (= 1).
"""

import ast
import csv
import datetime
import hashlib
import io
import json
import re

import pytest

from envpipeline.forge.variants import write_solution
from envpipeline.terminal.families.base import DIFFICULTIES, GeneratedTask, write_generated
from envpipeline.terminal.families.cron_scheduling import entry_status, next_runs
from envpipeline.terminal.families.registry import get_family
from envpipeline.terminal.verify import score_variant


def _expected(task: GeneratedTask):
    text = task.tests["test_outputs.py"]
    literal = text.split("EXPECTED = ", 1)[1].split("\n", 1)[0]
    value = ast.literal_eval(literal.removeprefix("json.loads(").removesuffix(")"))
    return json.loads(value) if isinstance(value, str) else value


# --- archive-handling --------------------------------------------------------------------------


def _tree(task: GeneratedTask) -> dict:
    line = next(x for x in task.environment["app/.setup/build.py"].splitlines() if x.startswith("TREE = "))
    return json.loads(ast.literal_eval(line.removeprefix("TREE = json.loads(").removesuffix(")")))


def _names(node: dict) -> list[str]:
    return [p for p, _ in node["files"]] + [n for child in node["children"] for n in _names(child)]


def _manifest(task: GeneratedTask) -> dict[str, str]:
    lines = task.environment["app/incoming/MANIFEST.sha256"].splitlines()
    return {path: digest for digest, path in (x.split("  ", 1) for x in lines if x.strip())}


def _archive(task: GeneratedTask) -> dict[str, bool]:
    files, manifest = _expected(task)["files"], _manifest(task)
    return {
        "ignores_nested": bool(_tree(task)["children"]),
        "case_sensitive_ext": any(n.endswith((".CSV", ".JSON")) for n in _names(_tree(task))),
        "no_missing_check": any(p not in files for p in manifest),
        "repacks_all": any(
            p in files and hashlib.sha256(files[p].encode()).hexdigest() != d for p, d in manifest.items()
        ),
    }


# --- config-editing ----------------------------------------------------------------------------

_RULES = {
    "port": lambda v: v.isdigit() and 1 <= int(v) <= 65535,
    "enabled": lambda v: v in ("true", "false"),
    "timeout": lambda v: v.isdigit() and int(v) > 0,
}


def _ini(text: str) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("[") and s.endswith("]"):
            current = sections.setdefault(s[1:-1], [])
        elif current is not None and "=" in s and not s.startswith(("#", ";")):
            current.append(s.split("=", 1)[0].strip())
    return sections


def _config(task: GeneratedTask) -> dict[str, bool]:
    text = task.environment["app/config/service.ini"]
    state = _ini(text)
    owners: dict[str, set[str]] = {}
    for name, keys in state.items():
        for key in keys:
            owners.setdefault(key, set()).add(name)
    shared_set = adds = invalid = False
    for raw in task.environment["app/changes.txt"].splitlines():
        verb, rest = raw.split(" ", 1)
        if verb == "delete":
            name, key = rest.split(".", 1)
            state[name].remove(key)
        elif verb == "set":
            target, value = rest.split(" = ", 1)
            name, key = target.split(".", 1)
            if key in _RULES and not _RULES[key](value):
                invalid = True
                continue
            shared_set |= bool(owners.get(key, set()) - {name})
            adds |= name in state and key not in state[name]
            state.setdefault(name, [])
            if key not in state[name]:
                state[name].append(key)
                owners.setdefault(key, set()).add(name)
    return {
        "replaces_globally": shared_set,
        "drops_comments": any(x.strip().startswith(("#", ";")) for x in text.splitlines()),
        "skips_missing_keys": adds,
        "no_validation": invalid,
    }


# --- cron-scheduling ---------------------------------------------------------------------------


def _cron(task: GeneratedTask) -> dict[str, bool]:
    found = re.search(r"strictly after\s+`([^`]+)`", task.instruction)
    assert found
    reference = found.group(1)
    before = datetime.datetime.strptime(reference, "%Y-%m-%d %H:%M") - datetime.timedelta(minutes=1)
    schedules = [x.split() for x in task.environment["app/schedules.txt"].splitlines() if x.strip()]
    crontab = task.environment["app/crontab.txt"].splitlines()
    return {
        "dom_dow_and": any(not f[2].startswith("*") and not f[4].startswith("*") for f in schedules),
        "includes_reference": any(
            next_runs(" ".join(f), before.strftime("%Y-%m-%d %H:%M"), 1) == [reference] for f in schedules
        ),
        "sunday_zero_only": any("7" in f[4] for f in schedules),
        "keeps_invalid_lines": any(entry_status(line) == "invalid" for line in crontab),
    }


# --- csv-json-merge ----------------------------------------------------------------------------


def _stamp(value) -> datetime.datetime:
    if isinstance(value, int) or str(value).strip().isdigit():
        return datetime.datetime.fromtimestamp(int(value), tz=datetime.UTC)
    stamp = datetime.datetime.fromisoformat(str(value).strip().replace("Z", "+00:00").replace(" ", "T"))
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=datetime.UTC)


def _present(value) -> bool:
    return value is not None and str(value).strip() != ""


def _merge(task: GeneratedTask) -> dict[str, bool]:
    rows = list(csv.DictReader(io.StringIO(task.environment["app/data/customers.csv"])))
    items = json.loads(task.environment["app/data/customers.json"])
    by_id = {int(str(item["id"]).strip()): item for item in items}
    conflict = False
    for row in rows:
        item = by_id.get(int(row["id"].strip()))
        if item is not None and _stamp(item["updated_at"]) > _stamp(row["updated_at"]):
            conflict |= any(
                _present(row[f]) and _present(item.get(f)) and row[f].strip() != str(item[f]).strip()
                for f in row
                if f not in ("id", "updated_at")
            )
    keys = [row["id"].strip() for row in rows] + [str(item["id"]).strip() for item in items]
    return {
        "csv_always_wins": conflict,
        "empty_string_overrides": any(v is not None and not v.strip() for row in rows for v in row.values())
        or any(isinstance(v, str) and not v.strip() for item in items for v in item.values()),
        "string_keys": any(k.startswith("0") for k in keys) or len({len(k) for k in keys}) > 1,
    }


PREDICATES = {
    "archive-handling": _archive,
    "config-editing": _config,
    "cron-scheduling": _cron,
    "csv-json-merge": _merge,
}


@pytest.mark.parametrize("difficulty", DIFFICULTIES)
@pytest.mark.parametrize("name", sorted(PREDICATES))
def test_fixtures_hold_exactly_the_present_edge_cases(name, difficulty):
    family = get_family(name)
    knobs = family.knobs_for(difficulty)
    assert set(family.edge_case_axes) == set(family.variants)
    for seed in range(3):
        every = PREDICATES[name](family.generate(seed, knobs, difficulty, edge_cases=family.variants))
        assert every == dict.fromkeys(family.variants, True), (seed, every)
        for edge in family.variants:
            without = set(family.variants) - {edge}
            found = PREDICATES[name](family.generate(seed, knobs, difficulty, edge_cases=without))
            assert found == {v: v != edge for v in family.variants}, (seed, edge, found)
        none = PREDICATES[name](family.generate(seed, knobs, difficulty, edge_cases=()))
        assert not any(none.values()), (seed, none)


@pytest.mark.parametrize("name", sorted(PREDICATES))
def test_a_solver_fails_only_on_the_edge_cases_it_misses(name, tmp_path, local_sandbox):
    family = get_family(name)
    present = family.variants[0]
    task = family.generate(5, family.knobs_for("medium"), "medium", edge_cases={present})
    root = write_generated(task, tmp_path / "bundle")
    absent = set(family.variants) - {present}
    for missed, want_one in (({present}, False), (absent, True)):
        folder = write_solution(task.solution_missing(missed), tmp_path / "-".join(sorted(missed)))
        trial = score_variant(root, local_sandbox, folder)
        assert trial.verdict == "ok", (missed, trial.reason)
        assert (trial.reward == 1.0) is want_one, (missed, trial.reward)
