"""text-parsing: extract structured incident records from semi-structured text reports.

Reports are blocks in plain-text files with labelled fields, summaries and bullet lists,
surrounded by noise. Its edge cases, each present with the knob-set probability: multi-line
summaries (``first_summary_line_only``; without it every summary is one line), a report whose
actions are ``none`` (``none_as_action``; without it every report lists actions) and dates in
other notations than ISO (``iso_dates_only``; without it every date is ISO). Depth knobs add date
notations and layout noise (label spelling, aliases, field order, wrapped bullets, optional
fields); breadth knobs add reports and files. The solver is one program with textual edits per
missed edge case.
"""

from __future__ import annotations

import random
from datetime import date, timedelta
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

PEOPLE = ["Jane Doe", "Ravi Patel", "Mei Lin", "Tom Becker", "Sara Costa", "Ade Bello", "Lena Fischer"]
SYSTEMS = ["db-01", "db-02", "web-01", "web-03", "cache-2", "queue-1", "auth-svc", "lb-east", "cdn-edge"]
SEVERITIES = ["low", "medium", "high", "critical"]
SENTENCES = [
    "Database connection pool was exhausted during the nightly batch.",
    "Clients saw timeouts for about twenty minutes.",
    "A certificate expired on the load balancer.",
    "Disk usage on the primary reached ninety five percent.",
    "The deploy pipeline pushed a misconfigured feature flag.",
    "Error rates returned to normal after the rollback.",
    "Cache hit ratio dropped sharply after the restart.",
    "Several customers reported duplicate emails.",
]
ACTIONS = [
    "restarted the connection pool",
    "raised the connection limit",
    "renewed the certificate",
    "rolled back the release",
    "cleared old log files",
    "added an alert on disk usage",
    "flushed the cache",
    "paused the email worker",
    "wrote a postmortem",
]

SOLVER = r"""import glob
import json
import re
from datetime import datetime

FIELDS = {"report id": "id", "id": "id", "date": "date", "severity": "severity", "reporter": "reporter",
          "reported by": "reporter", "affected systems": "systems", "systems": "systems",
          "summary": "summary", "actions": "actions"}
FORMATS = ("%Y-%m-%d", "%d/%m/%Y", "%B %d, %Y", "%d %b %Y")
LABEL = re.compile(r"^([A-Za-z ]+?)\s*:\s*(.*)$")


def parse_date(text):
    for fmt in FORMATS:
        try:
            return datetime.strptime(text.strip(), fmt).strftime("%Y-%m-%d")
        except ValueError:
            pass
    return text.strip()


def finish(rep):
    return {"id": rep["id"], "date": parse_date(rep["date"]), "severity": rep["severity"].lower(),
            "reporter": rep["reporter"], "systems": rep["systems"], "summary": " ".join(rep["summary"]),
            "actions": rep["actions"]}


reports = []
for name in sorted(glob.glob("/app/reports/*.txt")):
    rep, section = None, None
    with open(name) as fh:
        for raw in fh:
            line = raw.rstrip("\n")
            text = " ".join(line.split())
            if text.upper() == "=== INCIDENT REPORT ===":
                rep, section = {"reporter": None, "systems": [], "summary": [], "actions": []}, None
                continue
            if text.upper() == "=== END ===":
                if rep is not None:
                    reports.append(finish(rep))
                rep = None
                continue
            if rep is None or not text:
                continue
            m = LABEL.match(line)
            if m and not line[0].isspace() and m.group(1).strip().lower() in FIELDS:
                field, value = FIELDS[m.group(1).strip().lower()], " ".join(m.group(2).split())
                section = field if field in ("summary", "actions") else None
                if field == "reporter":
                    who = re.match(r"^(.*?)\s*<([^>]+)>$", value)
                    rep["reporter"] = {"name": who.group(1), "email": who.group(2)} if who else None
                elif field == "systems":
                    rep["systems"] = [] if value.lower() == "none" else [s.strip() for s in value.split(",") if s.strip()]
                elif field == "summary":
                    rep["summary"] += [value] if value else []
                elif field == "actions":
                    if value and value.lower() != "none":
                        rep["actions"].append(value.lstrip("- ").strip())
                else:
                    rep[field] = value
            elif section == "summary":
                rep["summary"].append(text)
            elif section == "actions":
                if text.startswith("- "):
                    rep["actions"].append(text[2:].strip())
                elif rep["actions"]:
                    rep["actions"][-1] += " " + text
reports.sort(key=lambda r: r["id"])
with open("/app/incidents.json", "w") as fh:
    json.dump(reports, fh, indent=2)
"""

EDITS = {
    "first_summary_line_only": [
        (
            '            elif section == "summary":\n',
            '            elif section == "summary" and not rep["summary"]:\n',
        )
    ],
    "none_as_action": [('if value and value.lower() != "none":', "if value:")],
    "iso_dates_only": [
        ('FORMATS = ("%Y-%m-%d", "%d/%m/%Y", "%B %d, %Y", "%d %b %Y")', 'FORMATS = ("%Y-%m-%d",)')
    ],
}

TEST_BODY = r"""
try:
    with open("/app/incidents.json") as fh:
        got = json.load(fh)
except Exception as exc:
    fail(f"/app/incidents.json missing or not JSON: {exc}")
if not isinstance(got, list) or not all(isinstance(r, dict) for r in got):
    fail("incidents.json must be a JSON array of objects")
if [r.get("id") for r in got] != [r["id"] for r in EXPECTED]:
    fail(f"report ids (in order): expected {[r['id'] for r in EXPECTED]}, got {[r.get('id') for r in got]}")
for have, want in zip(got, EXPECTED):
    if set(have) != set(want):
        fail(f"{want['id']}: keys expected {sorted(want)}, got {sorted(have)}")
    for field, value in want.items():
        if have[field] != value:
            fail(f"{want['id']}: {field} expected {value!r}, got {have[field]!r}")
"""


class TextParsingKnobs(Knobs):
    """Knobs of the text-parsing family."""

    n_reports: int = knob(4, 3, 120, "breadth", "incident reports across all files")
    n_files: int = knob(1, 1, 8, "breadth", "report files in /app/reports")
    date_formats: int = knob(
        2, 2, 4, "depth", "date notations: ISO, DD/MM/YYYY, 'March 5, 2024', '5 Mar 2024'"
    )
    layout_noise: int = knob(
        0,
        0,
        2,
        "depth",
        "0 fixed layout; 1 label case/spacing/aliases; 2 + shuffled "
        "fields, wrapped bullets, missing reporter, 'none' systems",
    )


def _label(rng: Any, names: list[str], noise: int) -> str:
    name = rng.choice(names) if noise >= 1 else names[0]
    if noise >= 1:
        name = rng.choice([name, name.upper(), name.lower()])
        return name + rng.choice([":", " :", ":  "]) + " "
    return name + ": "


class TextParsingFamily(TaskFamily[TextParsingKnobs]):
    """Incident reports in free-ish text to a JSON array of records."""

    name = "text-parsing"
    category = "data-processing"
    description = "Extract structured fields from semi-structured incident reports into JSON."
    skills = ["text-parsing", "regex", "json"]
    knob_model = TextParsingKnobs
    presets = {
        "easy": {"n_reports": 4, "n_files": 1, "date_formats": 2, "layout_noise": 0},
        "medium": {"n_reports": 12, "n_files": 3, "date_formats": 3, "layout_noise": 1},
        "hard": {"n_reports": 40, "n_files": 5, "date_formats": 4, "layout_noise": 2},
    }
    variants = ("first_summary_line_only", "none_as_action", "iso_dates_only")
    edge_case_axes = {
        "first_summary_line_only": "depth",
        "none_as_action": "breadth",
        "iso_dates_only": "depth",
    }

    def _render(
        self, rng: Any, n: int, knobs: TextParsingKnobs, edge_cases: frozenset[str]
    ) -> tuple[list[str], dict[str, Any]]:
        """One report block and its record; report 0 carries the multi-line summary and a non-ISO
        date, report 1 the `none` actions, when those edge cases are present."""
        noise = knobs.layout_noise
        day = date(2023, 1, 1) + timedelta(days=rng.randint(0, 700))
        form = (2 if n == 0 else rng.randint(1, knobs.date_formats)) if "iso_dates_only" in edge_cases else 1
        shown = {
            1: day.isoformat(),
            2: day.strftime("%d/%m/%Y"),
            3: f"{day.strftime('%B')} {day.day}, {day.year}",
            4: f"{day.day} {day.strftime('%b')} {day.year}",
        }[form]
        rid = f"INC-{day.year}-{rng.randint(1, 9999):04d}"
        severity = rng.choice(SEVERITIES)
        person = rng.choice(PEOPLE)
        reporter = (
            None
            if noise >= 2 and rng.random() < 0.2
            else {"name": person, "email": person.lower().replace(" ", ".") + "@corp.example"}
        )
        systems = [] if noise >= 2 and n == 1 else rng.sample(SYSTEMS, rng.randint(1, 3))
        multi_line = "first_summary_line_only" in edge_cases
        summary = rng.sample(SENTENCES, rng.randint(2 if n == 0 else 1, 3) if multi_line else 1)
        no_actions = "none_as_action" in edge_cases and (n == 1 or rng.random() < 0.15)
        actions = [] if no_actions else rng.sample(ACTIONS, rng.randint(1, 3))
        fields: list[list[str]] = [
            [_label(rng, ["Report ID", "ID"], noise) + rid],
            [_label(rng, ["Date"], noise) + shown],
            [_label(rng, ["Severity"], noise) + rng.choice([severity, severity.upper(), severity.title()])],
        ]
        if reporter:
            fields.append(
                [
                    _label(rng, ["Reporter", "Reported By"], noise)
                    + f"{reporter['name']} <{reporter['email']}>"
                ]
            )
        sys_text = ", ".join(systems) if noise == 0 else rng.choice([",", " ,", ", "]).join(systems)
        fields.append([_label(rng, ["Affected Systems", "Systems"], noise) + (sys_text or "none")])
        fields.append([_label(rng, ["Summary"], noise).rstrip()] + [f"    {s}" for s in summary])
        block = [_label(rng, ["Actions"], noise) + ("none" if not actions else "")]
        block[0] = block[0].rstrip()
        shown_actions = []
        for action in actions:
            words = action.split()
            if noise >= 2 and len(words) > 2 and rng.random() < 0.5:
                cut = len(words) // 2
                block += [f"    - {' '.join(words[:cut])}", f"      {' '.join(words[cut:])}"]
            else:
                block.append(f"    - {action}")
            shown_actions.append(action)
        fields.append(block)
        if noise >= 2:
            rng.shuffle(fields)
        lines = ["=== INCIDENT REPORT ===", *[line for part in fields for line in part], "=== END ==="]
        record = {
            "id": rid,
            "date": day.isoformat(),
            "severity": severity,
            "reporter": reporter,
            "systems": systems,
            "summary": " ".join(summary),
            "actions": shown_actions,
        }
        return lines, record

    def build(
        self, rng: random.Random, knobs: TextParsingKnobs, seed: int, edge_cases: frozenset[str]
    ) -> TaskParts:
        files: list[list[str]] = [
            [f"Incident digest {i + 1} (generated nightly)", ""] for i in range(knobs.n_files)
        ]
        expected, seen = [], set()
        n = 0
        while len(expected) < knobs.n_reports:
            lines, record = self._render(rng, n, knobs, edge_cases)
            if record["id"] in seen:
                continue
            seen.add(record["id"])
            target = files[n % knobs.n_files]
            target += (
                lines
                + [""]
                + (
                    [rng.choice(["-- forwarded by ops --", "Notes: see wiki"]), ""]
                    if rng.random() < 0.3
                    else []
                )
            )
            expected.append(record)
            n += 1
        expected.sort(key=lambda r: r["id"])
        env = {"Dockerfile": STANDARD_DOCKERFILE}
        for i, lines in enumerate(files):
            env[f"app/reports/digest_{i + 1:02d}.txt"] = "\n".join(lines) + "\n"
        return TaskParts(
            instruction=self._instruction(knobs),
            environment=env,
            tests={
                "test.sh": STANDARD_TEST_SH,
                "test_outputs.py": fail_fast_script(expected, TEST_BODY),
            },
            solver=edited_program(SOLVER, EDITS, self.variants),
        )

    def _instruction(self, knobs: TextParsingKnobs) -> str:
        dates = ["`2024-03-05`", "`05/03/2024` (day/month/year)", "`March 5, 2024`", "`5 Mar 2024`"]
        extra = ""
        if knobs.layout_noise >= 1:
            extra = (
                "\n\nLabels are case-insensitive, may have spaces before the colon, and have aliases: "
                "`ID` = `Report ID`, `Reported By` = `Reporter`, `Systems` = `Affected Systems`."
            )
        if knobs.layout_noise >= 2:
            extra += (
                " Fields may appear in any order; the `Reporter` line may be missing (use `null`); "
                "`Affected Systems` may be `none` (use `[]`); a bullet may wrap onto a further "
                "indented line that does not start with `- ` (join it to the bullet with one space)."
            )
        return f"""# Extract incident reports

The text files in `/app/reports/` contain incident reports mixed with other text. Each report
starts with a line `=== INCIDENT REPORT ===` and ends with `=== END ===`; ignore everything
outside these blocks. Inside a block, each field is a line `Label: value` starting at column 0:
`Report ID`, `Date`, `Severity`, `Reporter` (`Full Name <email>`), `Affected Systems`
(comma-separated), `Summary` and `Actions`. The summary text is on the indented lines after
`Summary:`; actions are the indented `- ` bullet lines after `Actions:`, or the value
`none` meaning no actions.{extra}

Write `/app/incidents.json`: a JSON array with one object per report, sorted by `id`, each with
exactly these keys:

- `id`: the report id as written (e.g. `INC-2024-0042`)
- `date`: `YYYY-MM-DD`; dates appear as {", ".join(dates[: knobs.date_formats])}
- `severity`: lowercase
- `reporter`: `{{"name": ..., "email": ...}}` or `null`
- `systems`: list of system names, whitespace-trimmed, in the order written
- `summary`: all summary lines, trimmed, joined with single spaces
- `actions`: list of action texts without the `- ` marker (`[]` for `none`)
"""


register_family(TextParsingFamily())
