"""cron-scheduling: repair a crontab, add entries from English requests, compute next run times.

The agent comments out invalid crontab entries, appends one entry per request in ``requests.txt``
(checked semantically: any equivalent expression passes) and writes the next N run times of every
expression in ``schedules.txt`` after a reference time. Its edge cases, each present with the
knob-set probability: a schedule restricting both day-of-month and day-of-week, matched by the OR
rule (``dom_dow_and``), a schedule that matches the reference minute itself
(``includes_reference``), a day-of-week field naming Sunday as 7 (``sunday_zero_only``) and invalid
crontab entries (``keeps_invalid_lines``). An absent one is kept out: every schedule then has a
``*`` day field, never runs at the reference minute and never names day 7 (checked with the
solver model `next_runs`), and every crontab entry is valid.
"""

from __future__ import annotations

import datetime
import inspect
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


def parse_cron(expr: str, missed: frozenset = frozenset()) -> tuple:
    """(minutes, hours, doms, months, dows, dom_star, dow_star) of 5 cron fields (by a solver that misses
    the edge cases in `missed`); ValueError if invalid."""
    MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    DAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
    names = {
        **{m: i + 1 for i, m in enumerate(MONTHS)},
        **{d: i for i, d in enumerate(DAYS)},
    }
    fields = expr.split()
    if len(fields) != 5:
        raise ValueError("need 5 fields")
    limits = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 7)]
    out = []
    for text, (lo, hi) in zip(fields, limits):
        values = set()
        for part in text.split(","):
            step = 1
            if "/" in part:
                part, raw = part.split("/", 1)
                if not raw.isdigit() or int(raw) < 1 or (part != "*" and "-" not in part):
                    raise ValueError(f"bad step in {text}")
                step = int(raw)

            def conv(tok, lo=lo, hi=hi):
                value = names.get(tok.lower()) if tok.isalpha() else (int(tok) if tok.isdigit() else None)
                if value is None or not lo <= value <= hi:
                    raise ValueError(f"bad value {tok}")
                return value

            if part == "*":
                a, b = lo, hi
            elif "-" in part:
                a, b = (conv(t) for t in part.split("-", 1))
                if a > b:
                    raise ValueError(f"bad range {part}")
            else:
                a = b = conv(part)
            values.update(range(a, b + 1, step))
        out.append(values)
    dows = {0 if d == 7 else d for d in out[4]} if "sunday_zero_only" not in missed else out[4] - {7}
    return out[0], out[1], out[2], out[3], dows, fields[2].startswith("*"), fields[4].startswith("*")


def next_runs(expr: str, after: str, count: int, missed: frozenset = frozenset()) -> list[str]:
    """The next `count` times ("YYYY-MM-DD HH:MM") strictly after `after` matching `expr`."""
    import datetime

    minutes, hours, doms, months, dows, dom_star, dow_star = parse_cron(expr, missed)
    start = datetime.datetime.strptime(after, "%Y-%m-%d %H:%M")
    day, found = start.date(), []
    while len(found) < count and day.year < start.year + 40:
        dom_ok, dow_ok = day.day in doms, (day.weekday() + 1) % 7 in dows
        both = not (dom_star or dow_star) and "dom_dow_and" not in missed
        day_ok = (dom_ok or dow_ok) if both else (dom_ok and dow_ok)
        if day.month in months and day_ok:
            for h in sorted(hours):
                for m in sorted(minutes):
                    t = datetime.datetime(day.year, day.month, day.day, h, m)
                    if (t > start or ("includes_reference" in missed and t == start)) and len(found) < count:
                        found.append(t.strftime("%Y-%m-%d %H:%M"))
        day += datetime.timedelta(days=1)
    return found


def entry_status(line: str, missed: frozenset = frozenset()) -> str:
    """'entry' (valid job), 'invalid' (a job line that does not parse) or 'other' (comment/blank/env)."""
    import re

    s = line.strip()
    if not s or s.startswith("#") or re.match(r"^[A-Za-z_][A-Za-z0-9_]*\s*=", s):
        return "other"
    parts = s.split(None, 5)
    try:
        if len(parts) < 6:
            raise ValueError("no command")
        parse_cron(" ".join(parts[:5]))
    except ValueError:
        return "entry" if "keeps_invalid_lines" in missed else "invalid"
    return "entry"


_FUNCS = (
    inspect.getsource(parse_cron)
    + "\n\n"
    + inspect.getsource(next_runs)
    + "\n\n"
    + inspect.getsource(entry_status)
)

SOLVER = (
    _FUNCS
    + r"""

lines = open("crontab.txt").read().splitlines()
out = [f"# INVALID: {l}" if entry_status(l, MISSED) == "invalid" else l for l in lines]
out += [f"{expr} {cmd}" for cmd, expr in DATA["requests"]]
open("crontab.txt", "w").write("\n".join(out) + "\n")
exprs = [l.strip() for l in open("schedules.txt") if l.strip()]
result = {e: next_runs(e, DATA["reference"], DATA["count"], MISSED) for e in exprs}
json.dump(result, open("next_runs.json", "w"), indent=2)
"""
)

TEST_BODY = (
    _FUNCS
    + r"""

lines = read("/app/crontab.txt").splitlines()
commands = {cmd for cmd, _ in EXPECTED["requests"]}
added, kept = {}, []
for line in lines:
    parts = line.split(None, 5)
    if not line.lstrip().startswith("#") and len(parts) == 6 and parts[5].strip() in commands:
        added.setdefault(parts[5].strip(), []).append(" ".join(parts[:5]))
    else:
        kept.append(line)
kept = [l for l in kept if l.strip()]
check("original lines kept, invalid entries commented with '# INVALID: '", kept == EXPECTED["kept"])


def norm(expr):
    mi, ho, dom, mon, dow, _, _ = parse_cron(expr)
    return sorted(mi), sorted(ho), sorted(dom), sorted(mon), sorted(dow)


for cmd, expr in EXPECTED["requests"]:
    got = added.get(cmd, [])
    ok = len(got) == 1
    if ok:
        try:
            ok = norm(got[0]) == norm(expr)
        except ValueError:
            ok = False
    check(f"one equivalent entry for {cmd}", ok)
check("next_runs.json", json.loads(read("/app/next_runs.json")) == EXPECTED["next_runs"])
"""
)


class CronSchedulingKnobs(Knobs):
    requests: int = knob(3, 2, 10, "breadth", "English schedule requests to turn into entries")
    schedules: int = knob(4, 4, 12, "breadth", "expressions whose next runs are computed")
    depth: int = knob(
        1,
        1,
        3,
        "depth",
        "1: simple; 2: + names, ranges with steps, combined fields; 3: + leap days, odd steps",
    )


def _requests(rng, depth: int) -> list[tuple[str, str]]:
    """(english, expression) request templates available at a depth."""
    h, m, d, n = (
        rng.randint(0, 23),
        rng.choice([0, 5, 15, 30, 45]),
        rng.randint(1, 28),
        rng.choice([5, 10, 15, 20, 30]),
    )
    h1, h2 = rng.randint(6, 9), rng.randint(16, 19)
    hm = f"{h:02d}:{m:02d}"
    out = [
        (f"every {n} minutes", f"*/{n} * * * *"),
        (f"every day at {hm}", f"{m} {h} * * *"),
        (f"every weekday (Monday to Friday) at {hm}", f"{m} {h} * * 1-5"),
        (f"every Sunday at {hm}", f"{m} {h} * * 0"),
        (f"on day {d} of every month at {hm}", f"{m} {h} {d} * *"),
    ]
    if depth >= 2:
        out += [
            (f"every {n} minutes from {h1:02d}:00 to {h2:02d}:59 on weekdays", f"*/{n} {h1}-{h2} * * 1-5"),
            (f"at {hm} on the 1st and 15th of January, April, July and October", f"{m} {h} 1,15 1,4,7,10 *"),
        ]
    if depth >= 3:
        out += [
            ("every 2 hours on the hour from 08:00 to 20:00 on Saturdays and Sundays", "0 8-20/2 * * 0,6"),
            (f"at minute {m} past every third hour starting at 01:{m:02d}", f"{m} 1-23/3 * * *"),
        ]
    return out


class CronSchedulingFamily(TaskFamily[CronSchedulingKnobs]):
    """Crontab repair and authoring plus next-run computation."""

    name = "cron-scheduling"
    category = "system-administration"
    description = (
        "Repair a crontab, add entries from English requests, compute next run times of cron schedules."
    )
    skills = ["scheduling", "text-parsing", "validation", "json"]
    knob_model = CronSchedulingKnobs
    presets = {
        "easy": {"requests": 2, "schedules": 4, "depth": 1},
        "medium": {"requests": 4, "schedules": 6, "depth": 2},
        "hard": {"requests": 6, "schedules": 9, "depth": 3},
    }
    variants = ("dom_dow_and", "includes_reference", "sunday_zero_only", "keeps_invalid_lines")
    edge_case_axes = {
        "dom_dow_and": "depth",
        "includes_reference": "breadth",
        "sunday_zero_only": "depth",
        "keeps_invalid_lines": "breadth",
    }

    def build(
        self, rng: random.Random, knobs: CronSchedulingKnobs, seed: int, edge_cases: frozenset[str]
    ) -> TaskParts:
        ref = datetime.datetime(
            rng.choice([2024, 2025]),
            rng.randint(1, 12),
            rng.randint(1, 28),
            rng.randint(0, 23),
            rng.randint(0, 59),
        )
        reference = ref.strftime("%Y-%m-%d %H:%M")
        count = 3 + knobs.depth
        # Existing crontab: env, comments, valid and invalid entries.
        valid = [
            "0 2 * * * /usr/local/bin/backup.sh",
            "*/10 * * * * /opt/app/poll --quiet",
            "30 6 * * 1-5 /opt/reports/daily.sh > /tmp/daily.log 2>&1",
            "15 3 1 * * /usr/bin/rotate-logs",
            "0 */4 * * * /opt/app/sync",
            "45 23 * * 0 /opt/app/weekly-cleanup",
        ]
        invalid = [
            "60 1 * * * /opt/app/late-job",
            "0 24 * * * /opt/app/midnight",
            "0 3 * * /usr/bin/broken",
            "*/0 * * * * /opt/app/spin",
            "0 0 32 * * /opt/app/month-end",
            "0 12 * 13 * /opt/app/yearly",
            "5 5 * * 8 /opt/app/weekday",
            "0 9 * Jna * /opt/app/january",
            "10-5 * * * * /opt/app/backwards",
        ]
        body = rng.sample(valid, rng.randint(2, 4))
        if "keeps_invalid_lines" in edge_cases:
            body += rng.sample(invalid, 1 + knobs.depth)
        rng.shuffle(body)
        lines = ["SHELL=/bin/bash", f"MAILTO=ops{rng.randint(1, 9)}@example.com", "# m h dom mon dow command"]
        for entry in body:
            if rng.random() < 0.3:
                tool = next(t for t in entry.split() if t.startswith("/")).rsplit("/", 1)[-1]
                lines.append(f"# {tool} job")
            lines.append(entry)
        kept = [f"# INVALID: {x}" if entry_status(x) == "invalid" else x for x in lines]
        pool = _requests(rng, knobs.depth)
        chosen = rng.sample(pool, min(knobs.requests, len(pool)))
        requests = [
            (f"/opt/jobs/{word}-{i}.sh", expr)
            for i, ((_, expr), word) in enumerate(
                zip(
                    chosen,
                    rng.sample(
                        [
                            "sync",
                            "report",
                            "purge",
                            "index",
                            "mail",
                            "audit",
                            "export",
                            "ping",
                            "vacuum",
                            "rebuild",
                        ],
                        len(chosen),
                    ),
                )
            )
        ]
        english = [f"{cmd} | {text}" for (cmd, _), (text, _) in zip(requests, chosen)]
        # Schedules: the present edge cases first, then random ones that no absent edge case affects.
        absent = frozenset(self.variants) - edge_cases
        misses = [absent, *(frozenset({e}) for e in sorted(absent))]

        def neutral(expr: str) -> bool:
            """No solver missing absent edge cases computes other runs for `expr`."""
            runs = next_runs(expr, reference, count)
            return all(next_runs(expr, reference, count, missed) == runs for missed in misses)

        makers = {
            "includes_reference": lambda: f"{ref.minute} {ref.hour} * * *",
            "dom_dow_and": lambda: f"0 {rng.randint(8, 18)} {rng.randint(1, 28)} * {rng.randint(1, 5)}",
            "sunday_zero_only": lambda: (
                f"{rng.choice([0, 30])} {rng.randint(0, 23)} * * {rng.choice(['7', '5-7', '6,7'])}"
            ),
        }
        scheds: list[str] = []
        for edge, make in makers.items():
            if edge in edge_cases:
                expr = make()
                while not neutral(expr) or expr in scheds:  # e.g. it runs at the reference minute
                    expr = make()
                scheds.append(expr)
        extra = [
            "*/15 * * * *",
            f"{rng.randint(0, 59)} {rng.randint(0, 23)} * * 1-5",
            f"0 0 1 {rng.randint(1, 12)} *",
            f"{rng.randint(0, 59)} */6 * * *",
        ]
        if knobs.depth >= 2:
            extra += [
                "30 9 * jan,jul mon",
                f"0 {rng.randint(9, 12)}-{rng.randint(13, 17)}/2 * * Tue-Thu",
                "0 12 1-7 * sat",
                f"5-59/20 {rng.randint(0, 23)} * * *",
            ]
        if knobs.depth >= 3:
            extra += ["0 0 29 2 *", "0 6 31 * *", f"7 {rng.randint(0, 3)} 28-31 feb,apr sun", "59 23 31 12 *"]
        extra = [e for e in extra if neutral(e) and e not in scheds]
        scheds += rng.sample(extra, min(knobs.schedules - len(scheds), len(extra)))
        rng.shuffle(scheds)
        nexts = {e: next_runs(e, reference, count) for e in scheds}
        expected = {"kept": kept, "requests": requests, "next_runs": nexts}
        env = {
            "Dockerfile": STANDARD_DOCKERFILE,
            "app/crontab.txt": "\n".join(lines) + "\n",
            "app/requests.txt": "\n".join(english) + "\n",
            "app/schedules.txt": "\n".join(scheds) + "\n",
        }
        instruction = f"""# Repair a crontab and compute schedules

Standard 5-field cron syntax (minute hour day-of-month month day-of-week): values, `*`, lists `a,b`,
ranges `a-b` (a <= b), steps `/n` (n >= 1) on `*` or a range. Ranges: minute 0-59, hour 0-23,
day-of-month 1-31, month 1-12 or `jan`-`dec`, day-of-week 0-7 or `sun`-`sat` (0 and 7 are Sunday;
names are case-insensitive). If both day-of-month and day-of-week are restricted (neither starts with
`*`), a day matches when **either** matches; otherwise both must match.

1. Edit `/app/crontab.txt` in place. A job line has five time fields then a command. Every job line
   that is not valid under the rules above (wrong field count, out-of-range value, bad range, step or
   name) must be replaced by `# INVALID: ` followed by the original line. Leave comments, blank lines,
   variable assignments (`NAME=value`) and valid entries unchanged and in order.
2. `/app/requests.txt` has lines `<command> | <schedule in English>`. Append one crontab entry per
   request at the end of `/app/crontab.txt`: five fields, a space, then the command exactly as given.
   Any expression with the same meaning is accepted.
3. For every expression in `/app/schedules.txt`, compute the next {count} run times strictly after
   `{reference}` (a time equal to it does not count; naive local time, no DST) and write
   `/app/next_runs.json`: an object mapping each expression (the line, trimmed) to a list of
   `"YYYY-MM-DD HH:MM"` strings in increasing order.
"""
        return TaskParts(
            instruction=instruction,
            environment=env,
            tests={"test.sh": STANDARD_TEST_SH, "test_outputs.py": test_script(expected, TEST_BODY)},
            solver=python_program(
                "import json\n" + SOLVER,
                data={"requests": requests, "reference": reference, "count": count},
            ),
        )


register_family(CronSchedulingFamily())
