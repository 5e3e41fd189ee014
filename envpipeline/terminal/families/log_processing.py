"""log-processing: parse rotated web access logs into per-endpoint statistics.

Fixtures are access logs (optionally rotated, the oldest gzip-compressed at build time) with
several kinds of malformed lines. Depth knobs add latency units, malformed-line kinds and
statistics (average, p95, error rate); breadth knobs add lines, endpoints and rotated files.
Its edge cases, each present with the knob-set probability: query strings on request paths
(``keeps_query_string``; without it no path has a ``?``), blank and whitespace-only lines
(``counts_blank_lines_as_malformed``; without it every line has text) and malformed lines whose
latency is ``-`` (``accepts_dash_latency``; without it that kind of malformed line is left out).
"""

from __future__ import annotations

import math
import random
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

RESOURCES = [
    "users",
    "orders",
    "items",
    "cart",
    "login",
    "search",
    "health",
    "reports",
    "invoices",
    "profile",
]
METHODS = ["GET", "GET", "GET", "POST", "PUT", "DELETE"]
STATUSES = [200, 200, 200, 200, 201, 204, 301, 304, 400, 401, 403, 404, 500, 502, 503]
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

SOLVER = r"""import glob
import gzip
import json
import math
import re

LINE = re.compile(
    r'^(\S+) - (\S+) \[([^\]]+)\] "([A-Z]+) (\S+) (HTTP/[0-9.]+)" (\d{3}) (\d+|-) (\d+(?:\.\d+)?)(ms|s)?$'
)
LEVEL = __LEVEL__
stats = {}
total = 0
malformed = 0
for name in sorted(glob.glob("/app/logs/access.log*")):
    opener = gzip.open if name.endswith(".gz") else open
    with opener(name, "rt") as fh:
        for raw in fh:
            line = raw.strip()
            if not line:
                continue
            m = LINE.match(line)
            if not m:
                malformed += 1
                continue
            value, unit = m.group(9), m.group(10)
            ms = float(value) * 1000 if unit == "s" else float(value)
            path = m.group(5).split("?")[0]
            entry = stats.setdefault(path, {"count": 0, "status_counts": {}, "lat": []})
            entry["count"] += 1
            status = m.group(7)
            entry["status_counts"][status] = entry["status_counts"].get(status, 0) + 1
            entry["lat"].append(ms)
            total += 1
endpoints = {}
for path, entry in sorted(stats.items()):
    out = {"count": entry["count"], "status_counts": entry["status_counts"]}
    lat = sorted(entry["lat"])
    if LEVEL >= 2:
        out["avg_latency_ms"] = round(sum(lat) / len(lat), 2)
    if LEVEL >= 3:
        out["p95_latency_ms"] = round(lat[math.ceil(0.95 * len(lat)) - 1], 2)
        errors = sum(n for s, n in entry["status_counts"].items() if s.startswith("5"))
        out["error_rate"] = round(errors / entry["count"], 4)
    endpoints[path] = out
report = {"total_requests": total, "malformed_lines": malformed, "endpoints": endpoints}
with open("/app/report.json", "w") as fh:
    json.dump(report, fh, indent=2)
"""

EDITS = {
    "keeps_query_string": [('path = m.group(5).split("?")[0]', "path = m.group(5)")],
    "counts_blank_lines_as_malformed": [("            if not line:\n                continue\n", "")],
    "accepts_dash_latency": [
        (r"(\d+(?:\.\d+)?)(ms|s)?$'", r"(\d+(?:\.\d+)?|-)(ms|s)?$'"),
        (
            'ms = float(value) * 1000 if unit == "s" else float(value)',
            'ms = 0.0 if value == "-" else (float(value) * 1000 if unit == "s" else float(value))',
        ),
    ],
}

TEST_BODY = r"""
try:
    with open("/app/report.json") as fh:
        report = json.load(fh)
except Exception as exc:
    fail(f"/app/report.json missing or not JSON: {exc}")
if not isinstance(report, dict):
    fail("report must be a JSON object")
for key in ("total_requests", "malformed_lines"):
    if report.get(key) != EXPECTED[key]:
        fail(f"{key}: expected {EXPECTED[key]}, got {report.get(key)}")
endpoints = report.get("endpoints")
if not isinstance(endpoints, dict) or set(endpoints) != set(EXPECTED["endpoints"]):
    got = sorted(endpoints) if isinstance(endpoints, dict) else endpoints
    fail(f"endpoint keys: expected {sorted(EXPECTED['endpoints'])}, got {got}")
for path, want in EXPECTED["endpoints"].items():
    got = endpoints[path]
    if not isinstance(got, dict):
        fail(f"{path}: not an object")
    if got.get("count") != want["count"]:
        fail(f"{path}: count expected {want['count']}, got {got.get('count')}")
    if got.get("status_counts") != want["status_counts"]:
        fail(f"{path}: status_counts expected {want['status_counts']}, got {got.get('status_counts')}")
    for key in ("avg_latency_ms", "p95_latency_ms", "error_rate"):
        if key in want:
            value = got.get(key)
            if not isinstance(value, (int, float)) or abs(value - want[key]) > 0.011:
                fail(f"{path}: {key} expected {want[key]}, got {value}")
"""


class LogProcessingKnobs(Knobs):
    """Knobs of the log-processing family."""

    n_lines: int = knob(60, 20, 3000, "breadth", "valid request lines across all log files")
    n_endpoints: int = knob(4, 2, 10, "breadth", "distinct endpoint paths")
    n_files: int = knob(1, 1, 4, "breadth", "rotated log files; from 3 on, the oldest is gzip-compressed")
    malformed_kinds: int = knob(2, 2, 5, "depth", "kinds of malformed lines mixed into the logs")
    latency_formats: int = knob(1, 1, 3, "depth", "latency notations: bare ms, '<n>ms', '<n>s' seconds")
    stats_level: int = knob(1, 1, 3, "depth", "1 counts, 2 + average latency, 3 + p95 and error rate")


class LogProcessingFamily(TaskFamily[LogProcessingKnobs]):
    """Per-endpoint statistics from access logs with malformed and blank lines."""

    name = "log-processing"
    category = "data-processing"
    description = "Parse rotated web access logs and aggregate status codes and latencies per endpoint."
    skills = ["regex", "aggregation", "text-parsing", "json"]
    knob_model = LogProcessingKnobs
    presets = {
        "easy": {
            "n_lines": 40,
            "n_endpoints": 3,
            "n_files": 1,
            "malformed_kinds": 2,
            "latency_formats": 1,
            "stats_level": 1,
        },
        "medium": {
            "n_lines": 150,
            "n_endpoints": 5,
            "n_files": 2,
            "malformed_kinds": 3,
            "latency_formats": 2,
            "stats_level": 2,
        },
        "hard": {
            "n_lines": 600,
            "n_endpoints": 8,
            "n_files": 3,
            "malformed_kinds": 5,
            "latency_formats": 3,
            "stats_level": 3,
        },
    }
    variants = ("keeps_query_string", "counts_blank_lines_as_malformed", "accepts_dash_latency")
    edge_case_axes = {
        "keeps_query_string": "depth",
        "counts_blank_lines_as_malformed": "breadth",
        "accepts_dash_latency": "depth",
    }

    def build(
        self, rng: random.Random, knobs: LogProcessingKnobs, seed: int, edge_cases: frozenset[str]
    ) -> TaskParts:
        paths = [f"/api/{r}" for r in rng.sample(RESOURCES, knobs.n_endpoints)]
        minute = rng.randint(0, 500)
        day = rng.randint(1, 28)
        month = rng.choice(MONTHS)
        lines: list[str] = []
        stats: dict[str, dict[str, Any]] = {}
        for i in range(knobs.n_lines):
            minute += rng.randint(0, 3)
            stamp = f"{day:02d}/{month}/2024:{(minute // 60) % 24:02d}:{minute % 60:02d}:{rng.randint(0, 59):02d} +0000"
            path = rng.choice(paths)
            queried = "keeps_query_string" in edge_cases and (i == 0 or rng.random() < 0.3)
            query = f"?id={rng.randint(1, 999)}" if queried else ""
            status = rng.choice(STATUSES)
            ms = rng.randint(2, 900)
            form = rng.randint(1, knobs.latency_formats)
            latency = {1: str(ms), 2: f"{ms}ms", 3: f"{ms / 1000:.3f}s"}[form]
            size = "-" if status in (204, 304) else str(rng.randint(100, 9000))
            ip = f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
            user = rng.choice(["-", "-", "alice", "bob"])
            method = rng.choice(METHODS)
            lines.append(
                f'{ip} - {user} [{stamp}] "{method} {path}{query} HTTP/1.1" {status} {size} {latency}'
            )
            entry = stats.setdefault(path, {"count": 0, "status_counts": {}, "lat": []})
            entry["count"] += 1
            entry["status_counts"][str(status)] = entry["status_counts"].get(str(status), 0) + 1
            entry["lat"].append(float(latency[:-1]) * 1000 if form == 3 else float(ms))
        makers = [
            lambda: f"10.0.0.{rng.randint(1, 9)} - - [{day:02d}/{month}/2024:10:00:0",  # truncated
            lambda: (
                f"10.0.0.{rng.randint(1, 9)} - - [{day:02d}/{month}/2024:10:00:01 +0000] "
                f'"GET {rng.choice(paths)} HTTP/1.1" 200 512 -'
            ),  # dash latency
            lambda: (
                f"10.0.0.{rng.randint(1, 9)} - - [{day:02d}/{month}/2024:10:00:02 +0000] "
                f'"GET {rng.choice(paths)} HTTP/1.1" 2x0 512 40'
            ),  # bad status
            lambda: f'10.0.0.{rng.randint(1, 9)} - - [{day:02d}/{month}/2024:10:00:03 +0000] "-" 400 0 1',
            lambda: rng.choice(["<<binary garbage>>", "upstream timed out", "#### log rotated ####"]),
        ][: knobs.malformed_kinds]
        if "accepts_dash_latency" not in edge_cases:
            del makers[1]  # the dash-latency kind
        n_bad = max(len(makers), knobs.n_lines // 25)
        bad = [makers[i % len(makers)]() for i in range(n_bad)]
        for text in bad:
            lines.insert(rng.randint(0, len(lines)), text)
        if "counts_blank_lines_as_malformed" in edge_cases:
            for blank in ["", "   ", ""][: 1 + knobs.n_lines // 200 % 3]:
                lines.insert(rng.randint(1, len(lines)), blank)
        chunk = math.ceil(len(lines) / knobs.n_files)
        env = {"Dockerfile": STANDARD_DOCKERFILE}
        names = ["access.log"] + [f"access.log.{i}" for i in range(1, knobs.n_files)]
        for index, name in enumerate(reversed(names)):
            part = lines[index * chunk : (index + 1) * chunk]
            env[f"app/logs/{name}"] = "\n".join(part) + "\n" if part else ""  # no stray blank line
        if knobs.n_files >= 3:
            env["Dockerfile"] += f"RUN gzip -n /app/logs/{names[-1]}\n"
        env["app/logs/error.log"] = "".join(
            f"2024-01-{day:02d} 10:{i:02d}:00 [error] worker {rng.randint(1, 9)} crashed\n" for i in range(5)
        )
        endpoints = {}
        for path, entry in sorted(stats.items()):
            out: dict[str, Any] = {"count": entry["count"], "status_counts": entry["status_counts"]}
            lat = sorted(entry["lat"])
            if knobs.stats_level >= 2:
                out["avg_latency_ms"] = round(sum(lat) / len(lat), 2)
            if knobs.stats_level >= 3:
                out["p95_latency_ms"] = round(lat[math.ceil(0.95 * len(lat)) - 1], 2)
                errors = sum(n for s, n in entry["status_counts"].items() if s.startswith("5"))
                out["error_rate"] = round(errors / entry["count"], 4)
            endpoints[path] = out
        expected = {"total_requests": knobs.n_lines, "malformed_lines": n_bad, "endpoints": endpoints}
        solver = SOLVER.replace("__LEVEL__", str(knobs.stats_level))
        return TaskParts(
            instruction=self._instruction(knobs),
            environment=env,
            tests={
                "test.sh": STANDARD_TEST_SH,
                "test_outputs.py": fail_fast_script(expected, TEST_BODY),
            },
            solver=edited_program(solver, EDITS, self.variants),
        )

    def _instruction(self, knobs: LogProcessingKnobs) -> str:
        files = "`/app/logs/access.log`"
        if knobs.n_files > 1:
            files = "every file in `/app/logs/` whose name starts with `access.log` (rotated logs; names ending in `.gz` are gzip-compressed)"
        units = "the last field is the response time in milliseconds (e.g. `87`)"
        if knobs.latency_formats == 2:
            units = (
                "the last field is the response time in milliseconds, either bare (`87`) or suffixed (`87ms`)"
            )
        elif knobs.latency_formats == 3:
            units = (
                "the last field is the response time: bare numbers and `ms`-suffixed values are milliseconds "
                "(`87`, `87ms`), `s`-suffixed values are seconds (`0.087s`)"
            )
        fields = [
            '`"count"` (number of valid requests)',
            '`"status_counts"` (object mapping each status code, as a string like `"404"`, to its count)',
        ]
        if knobs.stats_level >= 2:
            fields.append('`"avg_latency_ms"` (mean response time in milliseconds, rounded to 2 decimals)')
        if knobs.stats_level >= 3:
            fields.append(
                '`"p95_latency_ms"` (nearest-rank 95th percentile: sort the endpoint\'s latencies ascending '
                "and take the value at 1-based rank ceil(0.95 * n))"
            )
            fields.append('`"error_rate"` (share of requests with a 5xx status, rounded to 4 decimals)')
        return f"""# Summarize web access logs

Parse {files}. Do not read any other log file (for example `error.log`).

A valid line looks like:

    10.1.2.3 - alice [12/Mar/2024:10:15:32 +0000] "GET /api/users?id=4 HTTP/1.1" 200 512 87

that is: client IP, `-`, user (or `-`), `[timestamp]`, a quoted request `"METHOD PATH PROTOCOL"`,
a 3-digit status code, the response size in bytes (digits or `-`), and the latency; {units}.
Surrounding whitespace on a line is ignored.

- A line that is empty or contains only whitespace is ignored completely.
- Any other line that does not follow this format exactly (truncated lines, a non-numeric latency
  such as `-`, a status that is not 3 digits, a request that is not `"METHOD PATH PROTOCOL"`,
  free text) is **malformed**: count it and otherwise skip it.
- The endpoint of a request is its path **without** the query string (`/api/users?id=4` counts
  as `/api/users`).

Write `/app/report.json` as a JSON object with:
`"total_requests"` (number of valid lines), `"malformed_lines"` (number of malformed lines) and
`"endpoints"`: an object keyed by endpoint path whose values are objects with {", ".join(fields)}.
"""


register_family(LogProcessingFamily())
