"""csv-json-merge: merge customer records from a CSV export and a JSON export by key.

The two sources overlap partly, leave fields absent or ``null`` and spell the key with whitespace
or as a string. Its edge cases, each present with the knob-set probability: a field on which a
newer JSON record disagrees with the CSV (``csv_always_wins``; without it the sources disagree only
where the CSV record is at least as new), empty or whitespace-only values (``empty_string_overrides``;
without them a missing value is always an absent key or ``null``) and zero-padded keys among ids of
several lengths (``string_keys``; without them every id has four digits and none is padded, so
string keys sort like numbers). Depth knobs add timestamp notations and key noise; breadth knobs add
records and extra fields.
"""

from __future__ import annotations

import csv
import io
import json
import random
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from envpipeline.terminal.families._script_kit import edited_program, fail_fast_script
from envpipeline.terminal.families.base import (
    STANDARD_DOCKERFILE,
    STANDARD_TEST_SH,
    Knobs,
    TaskFamily,
    TaskParts,
    knob,
)
from envpipeline.terminal.families.registry import register_family

FIRST = [
    "Ana",
    "Ben",
    "Chloe",
    "Dmitri",
    "Eva",
    "Femi",
    "Grace",
    "Hiro",
    "Ines",
    "Jon",
    "Kira",
    "Liam",
    "Mona",
]
LAST = ["Smith", "Okafor", "Tanaka", "Garcia", "Novak", "Berg", "Silva", "Khan", "Moreau", "Olsen"]
CITIES = ["Lisbon", "Oslo", "Lagos", "Osaka", "Austin", "Lyon", "Porto", "Quito", "Perth", "Graz"]
EXTRAS = {
    "segment": ["retail", "b2b", "vip"],
    "tier": ["gold", "silver", "bronze"],
    "plan": ["free", "pro"],
    "manager": ["ops", "sales", "support"],
    "region": ["north", "south", "east", "west"],
}

SOLVER = r"""import csv
import json
from datetime import datetime, timezone


def parse_ts(value):
    if isinstance(value, (int, float)):
        return datetime.fromtimestamp(value, tz=timezone.utc)
    text = str(value).strip()
    if text.isdigit():
        return datetime.fromtimestamp(int(text), tz=timezone.utc)
    text = text.replace("Z", "+00:00").replace(" ", "T")
    stamp = datetime.fromisoformat(text)
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=timezone.utc)
    return stamp.astimezone(timezone.utc)


def clean(value):
    if value is None:
        return None
    text = str(value).strip()
    return text if text != "" else None


def key(raw):
    return int(str(raw).strip())


records = {}
fields = []
with open("/app/data/customers.csv", newline="") as fh:
    reader = csv.DictReader(fh)
    fields += [f for f in reader.fieldnames if f not in ("id", "updated_at")]
    for row in reader:
        records.setdefault(key(row["id"]), {})["csv"] = row
with open("/app/data/customers.json") as fh:
    for item in json.load(fh):
        records.setdefault(key(item["id"]), {})["json"] = item
        fields += [f for f in item if f not in ("id", "updated_at") and f not in fields]
merged = []
for ident in sorted(records):
    c, j = records[ident].get("csv"), records[ident].get("json")
    tc = parse_ts(c["updated_at"]) if c else None
    tj = parse_ts(j["updated_at"]) if j else None
    out = {"id": int(ident)}
    for field in fields:
        cv = clean(c.get(field)) if c else None
        jv = clean(j.get(field)) if j else None
        if cv is not None and jv is not None:
            out[field] = jv if tj > tc else cv
        else:
            out[field] = cv if cv is not None else jv
    newest = max(t for t in (tc, tj) if t is not None)
    out["updated_at"] = newest.strftime("%Y-%m-%dT%H:%M:%SZ")
    merged.append(out)
with open("/app/merged.json", "w") as fh:
    json.dump(merged, fh, indent=2)
"""

EDITS = {
    "csv_always_wins": [("out[field] = jv if tj > tc else cv", "out[field] = cv")],
    "empty_string_overrides": [('return text if text != "" else None', "return text")],
    "string_keys": [("    return int(str(raw).strip())", "    return str(raw).strip()")],
}

TEST_BODY = r"""
try:
    with open("/app/merged.json") as fh:
        merged = json.load(fh)
except Exception as exc:
    fail(f"/app/merged.json missing or not JSON: {exc}")
if not isinstance(merged, list) or not all(isinstance(r, dict) for r in merged):
    fail("merged.json must be a JSON array of objects")
ids = [r.get("id") for r in merged]
want_ids = [r["id"] for r in EXPECTED]
if ids != want_ids:
    fail(f"ids (in order): expected {want_ids}, got {ids}")
for got, want in zip(merged, EXPECTED):
    if set(got) != set(want):
        fail(f"id {want['id']}: keys expected {sorted(want)}, got {sorted(got)}")
    for field, value in want.items():
        if got[field] != value:
            fail(f"id {want['id']}: {field} expected {value!r}, got {got[field]!r}")
"""


class CsvJsonMergeKnobs(Knobs):
    """Knobs of the csv-json-merge family."""

    n_records: int = knob(10, 6, 400, "breadth", "distinct customer ids across both sources")
    n_extra_fields: int = knob(0, 0, 5, "breadth", "extra fields present in only one source (or both)")
    date_formats: int = knob(
        1, 1, 3, "depth", "timestamp notations: ISO Z; + space-separated; + epoch/offsets"
    )
    key_noise: int = knob(1, 1, 3, "depth", "key spellings: zero-padded; + whitespace; + JSON string ids")


class CsvJsonMergeFamily(TaskFamily[CsvJsonMergeKnobs]):
    """Merge two customer exports by key with newest-wins conflicts and missing fields."""

    name = "csv-json-merge"
    category = "data-processing"
    description = "Merge CSV and JSON records by a noisy key, resolving conflicts by recency and filling missing fields."
    skills = ["csv", "json", "validation"]
    knob_model = CsvJsonMergeKnobs
    presets = {
        "easy": {"n_records": 8, "n_extra_fields": 0, "date_formats": 1, "key_noise": 1},
        "medium": {"n_records": 30, "n_extra_fields": 2, "date_formats": 2, "key_noise": 2},
        "hard": {"n_records": 120, "n_extra_fields": 4, "date_formats": 3, "key_noise": 3},
    }
    variants = ("csv_always_wins", "empty_string_overrides", "string_keys")
    edge_case_axes = {
        "csv_always_wins": "depth",
        "empty_string_overrides": "breadth",
        "string_keys": "depth",
    }

    def _stamp(self, rng: Any, moment: datetime, formats: int, source: str) -> Any:
        form = rng.randint(1, formats)
        if form == 2:
            return moment.strftime("%Y-%m-%d %H:%M:%S")
        if form == 3:
            if source == "json" and rng.random() < 0.5:
                return int(moment.timestamp())
            return moment.astimezone(timezone(timedelta(hours=2))).isoformat()
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")

    def _key(self, rng: Any, ident: int, noise: int, source: str, force: bool, padded: bool = False) -> Any:
        """An id as one source spells it (`padded`: the CSV may zero-pad it; `force`: it does)."""
        if source == "csv":
            text = f"{ident:06d}" if force or (rng.random() < 0.3 and padded) else str(ident)
            return f" {text} " if noise >= 2 and rng.random() < 0.3 else text
        if noise >= 3 and rng.random() < 0.4:
            return rng.choice([str(ident), f" {ident}"])
        return ident

    def build(
        self, rng: random.Random, knobs: CsvJsonMergeKnobs, seed: int, edge_cases: frozenset[str]
    ) -> TaskParts:
        conflicts = "csv_always_wins" in edge_cases  # a newer JSON value differs from the CSV one
        empties = "empty_string_overrides" in edge_cases
        padded = "string_keys" in edge_cases
        extras = rng.sample(sorted(EXTRAS), min(knobs.n_extra_fields, len(EXTRAS)))
        extra_home = {name: rng.choice(["csv", "json", "both"]) for name in extras}
        csv_fields = ["name", "email", "city", *[e for e in extras if extra_home[e] != "json"]]
        json_fields = ["name", "email", "phone", *[e for e in extras if extra_home[e] != "csv"]]
        ids = rng.sample(range(1, 5000) if padded else range(1000, 10000), knobs.n_records)
        base = datetime(2023, 1, 1, tzinfo=UTC)
        csv_rows, json_items, expected = [], [], []
        for n, ident in enumerate(ids):
            first, last = rng.choice(FIRST), rng.choice(LAST)
            truth = {
                "name": f"{first} {last}" if rng.random() < 0.7 else f"{last}, {first}",
                "email": f"{first.lower()}.{last.lower()}{ident}@example.com",
                "city": rng.choice(CITIES),
                "phone": f"+1-555-{rng.randint(1000, 9999)}",
                **{e: rng.choice(EXTRAS[e]) for e in extras},
            }
            where = "both" if n < 2 else rng.choice(["both"] * 6 + ["csv", "json"])
            t_csv = base + timedelta(seconds=rng.randint(0, 40_000_000))
            t_json = t_csv + timedelta(seconds=rng.choice([-1, 1]) * rng.randint(60, 9_000_000))
            if n == 0 and conflicts:
                t_json = t_csv + timedelta(days=3)
            elif n == 1 and empties:
                t_json = t_csv - timedelta(days=3)
            elif rng.random() < 0.1:
                t_json = t_csv
            crow = {f: truth[f] for f in csv_fields}
            jrow: dict[str, str | None] = {f: truth[f] for f in json_fields}
            for field in sorted(
                set(csv_fields) & set(json_fields)
            ):  # sorted: a set's order varies by process
                roll = rng.random()
                if n == 1 and field == "email" and empties:
                    crow[field] = ""
                elif (roll < 0.2 and (conflicts or t_json <= t_csv)) or (
                    n == 0 and field == "name" and conflicts
                ):
                    jrow[field] = (
                        truth[field].replace("@", ".new@") if field == "email" else f"{truth[field]} Jr"
                    )
                elif roll < 0.3 and empties:
                    crow[field] = ""
                elif 0.3 <= roll < 0.4:
                    jrow[field] = None if rng.random() < 0.5 or not empties else ""
            for field in csv_fields:
                if field not in json_fields and rng.random() < 0.15 and empties:
                    crow[field] = rng.choice(["", "  "])
            for field in json_fields:
                if field not in csv_fields and rng.random() < 0.15:
                    del jrow[field]
            out: dict[str, Any] = {"id": ident}
            for field in sorted(set(csv_fields) | set(json_fields)):
                cv = crow.get(field) if where != "json" else None
                jv = jrow.get(field) if where != "csv" else None
                cv = cv.strip() or None if isinstance(cv, str) else cv
                jv = jv.strip() or None if isinstance(jv, str) else jv
                if cv is not None and jv is not None:
                    out[field] = jv if t_json > t_csv else cv
                else:
                    out[field] = cv if cv is not None else jv
            stamps = [t for t, src in ((t_csv, "csv"), (t_json, "json")) if where in (src, "both")]
            out["updated_at"] = max(stamps).strftime("%Y-%m-%dT%H:%M:%SZ")
            expected.append(out)
            if where != "json":
                csv_rows.append(
                    {
                        "id": self._key(rng, ident, knobs.key_noise, "csv", n == 0 and padded, padded),
                        **crow,
                        "updated_at": self._stamp(rng, t_csv, knobs.date_formats, "csv"),
                    }
                )
            if where != "csv":
                json_items.append(
                    {
                        "id": self._key(rng, ident, knobs.key_noise, "json", False),
                        **jrow,
                        "updated_at": self._stamp(rng, t_json, knobs.date_formats, "json"),
                    }
                )
        expected.sort(key=lambda r: r["id"])
        rng.shuffle(csv_rows)
        rng.shuffle(json_items)
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=["id", *csv_fields, "updated_at"], lineterminator="\n")
        writer.writeheader()
        writer.writerows(csv_rows)
        return TaskParts(
            instruction=self._instruction(knobs),
            environment={
                "Dockerfile": STANDARD_DOCKERFILE,
                "app/data/customers.csv": buffer.getvalue(),
                "app/data/customers.json": json.dumps(json_items, indent=2) + "\n",
            },
            tests={
                "test.sh": STANDARD_TEST_SH,
                "test_outputs.py": fail_fast_script(expected, TEST_BODY),
            },
            solver=edited_program(SOLVER, EDITS, self.variants),
        )

    def _instruction(self, knobs: CsvJsonMergeKnobs) -> str:
        stamps = "`updated_at` is an ISO 8601 UTC timestamp like `2024-03-05T10:20:30Z`."
        if knobs.date_formats >= 2:
            stamps = (
                "`updated_at` comes in several notations: ISO 8601 with `Z` or a UTC offset "
                "(`2024-03-05T12:20:30+02:00`), `YYYY-MM-DD HH:MM:SS` (UTC)"
                + (", or a Unix epoch number of seconds." if knobs.date_formats >= 3 else ".")
            )
        return f"""# Merge customer records

Two exports describe the same customers: `/app/data/customers.csv` (a standard CSV with a header
row; quoted fields may contain commas) and `/app/data/customers.json` (a JSON array of objects).
Every record has an `id` and an `updated_at`. {stamps}

Merge them into `/app/merged.json`: a JSON array with exactly one object per distinct customer,
sorted by `id` ascending. Rules:

1. Keys: ids are integers, but may be written with leading zeros, surrounding whitespace or as
   strings (`"0042"`, `" 42 "` and `42` are the same customer). Output `id` as a JSON integer.
2. Every output object has `id`, `updated_at` and every other field that appears in either
   source (CSV columns and JSON keys), and no other keys.
3. A value is missing when it is absent, `null`, or empty/whitespace-only. Strip surrounding
   whitespace from present string values.
4. If only one source has a present value for a field, use it; if neither has one, use `null`.
5. If both have a present value, take it from the record with the later `updated_at`; on equal
   timestamps the CSV value wins (values are kept even when they are identical).
6. Output `updated_at` as the later of the record's timestamps, formatted
   `YYYY-MM-DDTHH:MM:SSZ` in UTC.
"""


register_family(CsvJsonMergeFamily())
