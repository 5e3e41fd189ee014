"""data-validation: validate CSV records against a JSON schema, report violations, write clean rows.

``/app/data/records.csv`` is checked against ``/app/schema.json`` (types, required, ranges, enums,
patterns, uniqueness, dates and a cross-field order rule by depth). The agent writes the violations
(first per field), the cleaned file of valid rows and a summary. Its edge cases, each present with the
knob-set probability: padded values (``no_trim``; without it no value has surrounding whitespace), a
duplicate id (``ignores_duplicates``; without it every id is distinct), a value exactly at a maximum
(``exclusive_max``; without it every bounded value stays below its maximum) and an empty optional
numeric or date field (``empty_optional_checked``; without it optional `age` and `end_date` are always
filled).
"""

from __future__ import annotations

import csv
import inspect
import io
import json
import random

from envpipeline.terminal.families._script_kit import python_program, test_script
from envpipeline.terminal.families.base import (
    STANDARD_DOCKERFILE,
    STANDARD_TEST_SH,
    Knobs,
    TaskFamily,
    TaskParts,
    knob,
)
from envpipeline.terminal.families.registry import register_family

NAMES = ["Ada", "Bo", "Cyd", "Dana", "Eli", "Fern", "Gus", "Hal", "Ivy", "Jo", "Kai", "Lu", "Mo", "Nia"]
SURNAMES = ["Smith", "Ng", "Okafor", "Silva", "Kim", "Berg", "Rossi"]


def validate(
    schema: dict, header: list[str], rows: list[list[str]], missed: frozenset = frozenset()
) -> tuple:
    """Violations (row, field, reason) and the cleaned valid rows, by a solver that misses the edge
    cases in `missed`."""
    import datetime
    import re

    def typed(kind: str, value: str):
        if kind == "int":
            return int(value) if re.fullmatch(r"[+-]?\d+", value) else None
        if kind == "float":
            return float(value) if re.fullmatch(r"[+-]?\d+(\.\d+)?", value) else None
        if kind == "date":
            try:
                return (
                    datetime.date.fromisoformat(value) if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value) else None
                )
            except ValueError:
                return None
        return value

    fields = schema["fields"]
    seen: dict[str, set] = {f["name"]: set() for f in fields}
    errors, clean = [], []
    for number, raw in enumerate(rows, start=1):
        values = dict(zip(header, raw))
        if "no_trim" not in missed:
            values = {k: v.strip() for k, v in values.items()}
        row_errors, parsed = {}, {}
        for f in fields:
            name, value = f["name"], values.get(f["name"], "")
            reason = None
            if value == "":
                if f.get("required"):
                    reason = "missing"
                elif "empty_optional_checked" in missed and f["type"] in ("int", "float", "date"):
                    reason = "type"
            else:
                parsed[name] = v = typed(f["type"], value)
                if v is None and f["type"] != "enum":
                    reason = "type"
                elif ("min" in f and v < f["min"]) or (
                    "max" in f and (v >= f["max"] if "exclusive_max" in missed else v > f["max"])
                ):
                    reason = "range"
                elif f["type"] == "enum" and value not in f["values"]:
                    reason = "enum"
                elif "pattern" in f and not re.fullmatch(f["pattern"], value):
                    reason = "pattern"
                elif f.get("unique") and value in seen[name] and "ignores_duplicates" not in missed:
                    reason = "duplicate"
                if f.get("unique"):
                    seen[name].add(value)
            if reason:
                row_errors[name] = reason
        for rule in schema.get("rules", []):
            a, b = parsed.get(rule["before"]), parsed.get(rule["after"])
            clean_pair = rule["after"] not in row_errors and rule["before"] not in row_errors
            if a is not None and b is not None and clean_pair and b < a:
                row_errors[rule["after"]] = "order"
        for f in fields:
            if f["name"] in row_errors:
                errors.append([number, f["name"], row_errors[f["name"]]])
        if not row_errors:
            clean.append([values[h] for h in header])
    return errors, clean


SOLVER = (
    "import csv, json, os\n"
    + inspect.getsource(validate)
    + r"""
schema = json.load(open("schema.json"))
with open("data/records.csv", newline="") as fh:
    reader = csv.reader(fh)
    header = next(reader)
    rows = list(reader)
errors, clean = validate(schema, header, rows, MISSED)
os.makedirs("out", exist_ok=True)
with open("out/errors.csv", "w", newline="") as fh:
    w = csv.writer(fh, lineterminator="\n")
    w.writerow(["row", "field", "reason"])
    w.writerows(errors)
with open("out/clean.csv", "w", newline="") as fh:
    w = csv.writer(fh, lineterminator="\n")
    w.writerow(header)
    w.writerows(clean)
by_reason = {}
for _, _, reason in errors:
    by_reason[reason] = by_reason.get(reason, 0) + 1
bad_rows = len({e[0] for e in errors})
json.dump({"total": len(rows), "valid": len(rows) - bad_rows, "invalid": bad_rows, "by_reason": by_reason},
          open("out/summary.json", "w"), indent=2)
"""
)

TEST_BODY = r"""
import csv
with open("/app/out/errors.csv", newline="") as fh:
    got = list(csv.reader(fh))
check("errors.csv header", got[:1] == [["row", "field", "reason"]])
check("errors.csv violations (row, field, reason) in order", got[1:] == EXPECTED["errors"])
with open("/app/out/clean.csv", newline="") as fh:
    clean = list(csv.reader(fh))
check("clean.csv header", clean[:1] == [EXPECTED["header"]])
check("clean.csv valid rows, trimmed, in order", clean[1:] == EXPECTED["clean"])
check("summary.json", json.loads(read("/app/out/summary.json")) == EXPECTED["summary"])
"""


class DataValidationKnobs(Knobs):
    rows: int = knob(15, 10, 200, "breadth", "records in the CSV")
    columns: int = knob(0, 0, 4, "breadth", "extra columns (city, qty, tier, note) with their own rules")
    rules: int = knob(
        1,
        1,
        3,
        "depth",
        "1: types/required/range/unique; 2: + enum, pattern, quoted commas; 3: + dates, order rule",
    )


class DataValidationFamily(TaskFamily[DataValidationKnobs]):
    """Schema validation of CSV records with an error report and a cleaned output."""

    name = "data-validation"
    category = "data-processing"
    description = (
        "Validate CSV records against a JSON schema, report violations with reasons, write the clean rows."
    )
    skills = ["validation", "csv", "json", "regex"]
    knob_model = DataValidationKnobs
    presets = {
        "easy": {"rows": 12, "columns": 0, "rules": 1},
        "medium": {"rows": 30, "columns": 2, "rules": 2},
        "hard": {"rows": 60, "columns": 4, "rules": 3},
    }
    variants = ("no_trim", "ignores_duplicates", "exclusive_max", "empty_optional_checked")
    edge_case_axes = {
        "no_trim": "depth",
        "ignores_duplicates": "breadth",
        "exclusive_max": "depth",
        "empty_optional_checked": "breadth",
    }

    def build(
        self, rng: random.Random, knobs: DataValidationKnobs, seed: int, edge_cases: frozenset[str]
    ) -> TaskParts:
        max_age = rng.choice([65, 70, 99])
        fields: list[dict] = [
            {"name": "id", "type": "int", "required": True, "unique": True},
            {"name": "name", "type": "str", "required": True},
            {"name": "age", "type": "int", "required": False, "min": 18, "max": max_age},
            {"name": "score", "type": "float", "required": True, "min": 0, "max": 100},
        ]
        if knobs.rules >= 2:
            fields += [
                {
                    "name": "email",
                    "type": "str",
                    "required": True,
                    "pattern": r"[a-z0-9._]+@[a-z0-9-]+\.[a-z]{2,}",
                },
                {"name": "plan", "type": "enum", "required": False, "values": ["free", "pro", "team"]},
            ]
        if knobs.rules >= 3:
            fields += [
                {"name": "start_date", "type": "date", "required": True},
                {"name": "end_date", "type": "date", "required": False},
            ]
        extra = [
            {"name": "city", "type": "str", "required": True},
            {"name": "qty", "type": "int", "required": True, "min": 0, "max": 500},
            {"name": "tier", "type": "enum", "required": True, "values": ["gold", "silver", "bronze"]},
            {"name": "note", "type": "str", "required": False},
        ]
        fields += extra[: knobs.columns]
        schema = {
            "fields": fields,
            "rules": [{"before": "start_date", "after": "end_date"}] if knobs.rules >= 3 else [],
        }
        header = [f["name"] for f in fields]
        ids = rng.sample(range(1000, 9999), knobs.rows)
        # Without the edge case, random values stay below every maximum and optional fields filled.
        below = 0 if "exclusive_max" in edge_cases else 1
        filled = "empty_optional_checked" not in edge_cases

        def good(i: int) -> dict:
            first = rng.choice(NAMES)
            name = f"{rng.choice(SURNAMES)}, {first}" if knobs.rules >= 2 and rng.random() < 0.2 else first
            start = f"2023-{rng.randint(1, 6):02d}-{rng.randint(1, 28):02d}"
            end = f"2023-{rng.randint(7, 12):02d}-{rng.randint(1, 28):02d}"
            return {
                "id": str(ids[i]),
                "name": name,
                "age": str(rng.randint(18, max_age - below)),
                "score": f"{rng.randint(0, 99)}.{rng.randint(0, 9)}",
                "email": f"{first.lower()}{i}@example.com",
                "plan": rng.choice(["free", "pro", "team", ""]),
                "start_date": start,
                "end_date": end if filled else rng.choice(["", end]),
                "city": rng.choice(["Oslo", "Lima", "Pune"]),
                "qty": str(rng.randint(0, 500 - below)),
                "tier": rng.choice(["gold", "silver", "bronze"]),
                "note": rng.choice(["", "vip", "late payer"]),
            }

        breakers = {
            "id": ["x12", "12.0"],
            "name": [""],
            "age": ["17", str(max_age + 1), "abc", "30.5"],
            "score": ["", "100.5", "-1", "n/a"],
            "email": ["", "bob@", "ann at mail.com", "Cy@Example.com"],
            "plan": ["Pro", "enterprise"],
            "start_date": ["", "2023-02-30", "2023/01/05"],
            "end_date": ["2022-12-31", "2023-13-01"],
            "city": [""],
            "qty": ["-3", "501", "many"],
            "tier": ["Gold", "platinum", ""],
        }
        records = [good(i) for i in range(knobs.rows)]
        # The present edge cases on distinct rows (never row 0), the rest randomly broken.
        picks = rng.sample(range(1, knobs.rows), 4)
        for i, rec in enumerate(records):
            if i and i not in picks and rng.random() < 0.35:
                for field in rng.sample([f for f in header if f in breakers], rng.randint(1, 2)):
                    rec[field] = rng.choice(breakers[field])
        if "no_trim" in edge_cases:
            first = records[picks[0]]
            first["age"], first["name"] = f"  {first['age']} ", f" {first['name']}"
        if "ignores_duplicates" in edge_cases:
            sources = [r["id"] for r in records[: picks[1]] if r["id"].isdigit()]
            records[picks[1]]["id"] = rng.choice(sources)
        if "exclusive_max" in edge_cases:
            records[picks[2]]["age"] = str(max_age)
        if "empty_optional_checked" in edge_cases:
            records[picks[3]]["age"] = ""
        rows = [[rec[h] for h in header] for rec in records]
        errors, clean = validate(schema, header, rows)
        by_reason: dict[str, int] = {}
        for _, _, reason in errors:
            by_reason[reason] = by_reason.get(reason, 0) + 1
        bad_rows = len({e[0] for e in errors})
        summary = {
            "total": len(rows),
            "valid": len(rows) - bad_rows,
            "invalid": bad_rows,
            "by_reason": by_reason,
        }
        expected = {
            "errors": [[str(c) for c in e] for e in errors],
            "clean": clean,
            "header": header,
            "summary": summary,
        }
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerows([header, *rows])
        env = {
            "Dockerfile": STANDARD_DOCKERFILE,
            "app/data/records.csv": buf.getvalue(),
            "app/schema.json": json.dumps(schema, indent=2) + "\n",
        }
        order_rule = (
            "\n- Rule `{before, after}` in `rules`: when both dates are present and valid (no violation on either), "
            "`after` earlier than `before` is reason `order` on the `after` field."
            if schema["rules"]
            else ""
        )
        instruction = f"""# Validate records against a schema

Validate every data row of `/app/data/records.csv` (CSV with a header) against `/app/schema.json`.
Rows are numbered from 1 (the first row after the header). Before validating, strip leading and
trailing whitespace from every value. For each field, in this order, report only the **first**
failing check:

- empty value: reason `missing` if `required` is true; an empty optional field is valid and gets no
  further checks.
- type: `int` = optional sign and digits only; `float` = optional sign, digits, optional `.digits`;
  `date` = a real calendar date written `YYYY-MM-DD`; `str`/`enum` accept any text. Failure: `type`.
- `min`/`max` (inclusive bounds, compared numerically): `range`.
- `enum` values (exact, case-sensitive): `enum`. `pattern` (full match, Python `re`): `pattern`.
- `unique`: a value already seen in an earlier row (valid or not) is `duplicate`.{order_rule}

Write:
1. `/app/out/errors.csv` with header `row,field,reason` and one line per violation, sorted by row,
   then by the field's position in the schema.
2. `/app/out/clean.csv`: the header plus every row without violations, in input order, with the
   stripped values (standard CSV quoting).
3. `/app/out/summary.json`: `{{"total": <rows>, "valid": <rows without violations>, "invalid": <rows
   with violations>, "by_reason": {{<reason>: <violation count>}}}}` (only reasons that occur).
"""
        return TaskParts(
            instruction=instruction,
            environment=env,
            tests={"test.sh": STANDARD_TEST_SH, "test_outputs.py": test_script(expected, TEST_BODY)},
            solver=python_program(SOLVER),
        )


register_family(DataValidationFamily())
