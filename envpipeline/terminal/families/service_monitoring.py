"""service-monitoring (bridge form): status files + logs -> incident report and restart plan.

No live services: ``/app/services/*.status`` describe state, ``/app/logs/*.log*`` hold timestamped
lines. The agent finds down services (enabled and not running), sliding-window error bursts, and
writes a dependency-ordered restart plan. Its edge cases, each present with the knob-set
probability: a disabled stopped service (``ignores_enabled_flag``; without it every service is
enabled), a burst that straddles a window-aligned boundary (``fixed_buckets``; without it every
burst lies inside one aligned window), ``CRITICAL`` entries inside bursts (``only_error_level``;
without it no entry is ``CRITICAL``, and with it at least one burst exists) and a down service
that depends on an alphabetically later down service (``alphabetical_restart``; without it every
down service depends only on alphabetically earlier down services, so the plan is alphabetical).
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

SERVICES = [
    "api",
    "auth",
    "billing",
    "cache",
    "db",
    "gateway",
    "mailer",
    "queue",
    "search",
    "worker",
    "scheduler",
    "storage",
    "metrics",
    "proxy",
    "ledger",
    "notifier",
]
MESSAGES = [
    "request served",
    "connection pool ok",
    "cache miss",
    "retrying upstream",
    "heartbeat",
    "config reloaded",
    "slow query",
    "timeout talking to peer",
    "disk usage high",
]


def analyze(statuses: dict, logs: dict, k: int, w: int, missed: frozenset = frozenset()) -> tuple:
    """(incident report dict, restart plan list) from status texts and log lines per service, by a
    solver that misses the edge cases in `missed`."""
    import datetime
    import heapq
    import re

    info = {}
    for svc, text in statuses.items():
        pairs = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
        info[svc] = {k_.strip(): v.strip() for k_, v in pairs.items()}
    down = sorted(
        s
        for s, d in info.items()
        if d.get("state") != "running"
        and (d.get("enabled", "yes") == "yes" or "ignores_enabled_flag" in missed)
    )
    levels = ("ERROR",) if "only_error_level" in missed else ("ERROR", "CRITICAL")
    bursts = {}
    for svc, lines in logs.items():
        times = []
        for line in lines:
            m = re.match(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:Z|[+-]\d\d:\d\d))\s+(\w+)\s", line)
            if m and m.group(2).upper() in levels:
                times.append(int(datetime.datetime.fromisoformat(m.group(1)).timestamp()))
        times.sort()
        for i, t in enumerate(times):
            if "fixed_buckets" in missed:
                group = [u for u in times if u // w == t // w]
                hit = len(group) >= k and group[0] == t
            else:
                group = [u for u in times[i:] if u < t + w]
                hit = len(group) >= k
            if hit:
                stamp = datetime.datetime.fromtimestamp(t, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
                bursts[svc] = {"start": stamp, "count": len(group)}
                break
    healthy = sorted(s for s in info if s not in down and s not in bursts)
    deps = {s: [d for d in info[s].get("depends_on", "").split(",") if d.strip() in down] for s in down}
    plan = []
    if "alphabetical_restart" in missed:
        plan = list(down)
    else:
        waiting = {s: set(d.strip() for d in deps[s]) for s in down}
        ready = [s for s in down if not waiting[s]]
        heapq.heapify(ready)
        while ready:
            s = heapq.heappop(ready)
            plan.append(s)
            for other in down:
                if s in waiting[other]:
                    waiting[other].discard(s)
                    if not waiting[other]:
                        heapq.heappush(ready, other)
    return {"down": down, "bursts": bursts, "healthy": healthy}, plan


SOLVER = (
    "import glob, json, os\n"
    + inspect.getsource(analyze)
    + r"""
statuses = {os.path.basename(p)[:-7]: open(p).read() for p in glob.glob("services/*.status")}
logs = {}
for path in glob.glob("logs/*.log*"):
    svc = os.path.basename(path).split(".log")[0]
    logs.setdefault(svc, []).extend(open(path).read().splitlines())
conf = dict(line.split("=", 1) for line in open("monitor.conf").read().split() if "=" in line)
report, plan = analyze(statuses, logs, int(conf["burst_count"]), int(conf["burst_window"]), MISSED)
json.dump(report, open("incident_report.json", "w"), indent=2)
open("restart_plan.txt", "w").write("".join(s + "\n" for s in plan))
"""
)

TEST_BODY = r"""
report = json.loads(read("/app/incident_report.json"))
check("report keys", sorted(report) == ["bursts", "down", "healthy"])
check("down services", report.get("down") == EXPECTED["report"]["down"])
check("healthy services", report.get("healthy") == EXPECTED["report"]["healthy"])
check("burst services", sorted(report.get("bursts", {})) == sorted(EXPECTED["report"]["bursts"]))
check("burst starts and counts", report.get("bursts") == EXPECTED["report"]["bursts"])
plan = [l.strip() for l in read("/app/restart_plan.txt").splitlines() if l.strip()]
check("restart plan order", plan == EXPECTED["plan"])
"""


class ServiceMonitoringKnobs(Knobs):
    services: int = knob(5, 5, 16, "breadth", "services with status files and logs")
    lines: int = knob(30, 20, 300, "breadth", "log lines per service")
    depth: int = knob(
        1,
        1,
        3,
        "depth",
        "1: one log each; 2: + stack traces, mixed-case levels; 3: + rotated logs, tz offsets",
    )


def _stamp(t: int, rng, depth: int) -> str:
    """An ISO timestamp; depth 3 writes random UTC offsets."""
    off = rng.choice([0, 2, -5, 9]) if depth >= 3 else 0
    dt = datetime.datetime.fromtimestamp(t, datetime.timezone(datetime.timedelta(hours=off)))
    text = dt.strftime("%Y-%m-%dT%H:%M:%S")
    return text + ("Z" if off == 0 else dt.strftime("%z")[:3] + ":" + dt.strftime("%z")[3:])


class ServiceMonitoringFamily(TaskFamily[ServiceMonitoringKnobs]):
    """Detect down services and error bursts from files; plan restarts in dependency order."""

    name = "service-monitoring"
    category = "system-administration"
    description = "From service status files and logs, find down services and error bursts; write an incident report and a restart plan."
    skills = ["monitoring", "text-parsing", "json", "aggregation"]
    knob_model = ServiceMonitoringKnobs
    presets = {
        "easy": {"services": 5, "lines": 25, "depth": 1},
        "medium": {"services": 8, "lines": 60, "depth": 2},
        "hard": {"services": 12, "lines": 120, "depth": 3},
    }
    variants = ("ignores_enabled_flag", "fixed_buckets", "only_error_level", "alphabetical_restart")
    edge_case_axes = {
        "ignores_enabled_flag": "breadth",
        "fixed_buckets": "depth",
        "only_error_level": "depth",
        "alphabetical_restart": "depth",
    }

    def build(
        self, rng: random.Random, knobs: ServiceMonitoringKnobs, seed: int, edge_cases: frozenset[str]
    ) -> TaskParts:
        k, w = rng.randint(3, 5), rng.choice([60, 120, 300])
        names = rng.sample(SERVICES, knobs.services)
        first, second = sorted(rng.sample(names, 2))  # both down; first depends on `second` if planted
        rest = [n for n in names if n not in (first, second)]
        # rest[0]: the disabled stopped service; rest[1]: the straddling (or CRITICAL) burst.
        disabled = rest[0] if "ignores_enabled_flag" in edge_cases else None
        straddle = rest[1] if "fixed_buckets" in edge_cases else None
        critical = "only_error_level" in edge_cases
        must_burst = rest[1] if critical and straddle is None else None
        down = {first, second} | set(rng.sample(rest[2:], min(len(rest) - 2, rng.randint(0, 2))))
        order = [second, *[n for n in names if n != second]]  # deps only point to earlier services
        t0 = int(
            datetime.datetime(
                2024, rng.randint(1, 12), rng.randint(1, 28), 8, tzinfo=datetime.UTC
            ).timestamp()
        )
        error_levels = ["ERROR", "CRITICAL"] if critical else ["ERROR"]
        statuses, logs = {}, {}
        for idx, svc in enumerate(order):
            state = rng.choice(["stopped", "failed"]) if svc in down or svc == disabled else "running"
            deps = rng.sample(order[:idx], min(idx, rng.randint(0, 2))) if idx else []
            if "alphabetical_restart" in edge_cases:
                if svc == first and second not in deps:
                    deps.append(second)
            elif svc in down:  # the edge case stays out: no dependency on a later down service
                deps = [d for d in deps if d not in down or d < svc]
            statuses[svc] = (
                f"state={state}\nenabled={'no' if svc == disabled else 'yes'}\npid={rng.randint(100, 9999)}\n"
                f"depends_on={','.join(deps)}\n"
            )
            # Timeline: noise lines, error lines at most one per 2w, then maybe a burst in a quiet stretch.
            span = knobs.lines * 20
            times = sorted(rng.sample(range(t0, t0 + span), knobs.lines))
            burst_at = None
            if svc in (straddle, must_burst) or rng.random() < 0.3:
                boundary = (t0 + span // 2) // w * w
                # Any other burst starts in the first half of an aligned window, so it fits inside it.
                inside = (t0 + rng.randint(span // 4, span // 2)) // w * w + rng.randrange(w // 2)
                burst_at = boundary if svc == straddle else inside
            events, last_err = [], -(10**9)
            for t in times:
                near = burst_at is not None and abs(t - burst_at) < 3 * w
                if not near and t - last_err > 2 * w and rng.random() < 0.25:
                    events.append((t, rng.choice(error_levels), "unhandled exception"))
                    last_err = t
                else:
                    events.append((t, rng.choice(["INFO", "INFO", "DEBUG", "WARN"]), rng.choice(MESSAGES)))
            if burst_at is not None:
                if svc == straddle:
                    before = (k + 1) // 2
                    offs = [-(i + 1) * (w // (2 * k)) - 1 for i in range(before)] + [
                        i * (w // (2 * k)) for i in range(k - before)
                    ]
                else:
                    offs = sorted(rng.sample(range(0, w // 2), k + rng.randint(0, 1)))
                lv = ["ERROR"] * len(offs)
                if critical:
                    lv[rng.randrange(len(offs))] = "CRITICAL"
                events += [(burst_at + o, lvl, "upstream failure") for o, lvl in zip(offs, lv)]
            events.sort(key=lambda e: e[0])
            lines = []
            for t, level, msg in events:
                if knobs.depth >= 2 and rng.random() < 0.3:
                    level = rng.choice([level.lower(), level.capitalize(), level])
                lines.append(f"{_stamp(t, rng, knobs.depth)} {level} {svc}: {msg}")
                if knobs.depth >= 2 and level.upper() == "ERROR" and rng.random() < 0.5:
                    lines += [
                        "Traceback (most recent call last):",
                        '  File "main.py", line 42, in run',
                        "    raise ERROR_UPSTREAM  # CRITICAL path",
                    ]
            logs[svc] = lines
        report, plan = analyze(statuses, logs, k, w)
        env = {"Dockerfile": STANDARD_DOCKERFILE, "app/monitor.conf": f"burst_count={k}\nburst_window={w}\n"}
        for svc in names:
            env[f"app/services/{svc}.status"] = statuses[svc]
            lines = logs[svc]
            if knobs.depth >= 3:
                cut = len(lines) // 2
                while cut < len(lines) and not lines[cut][:1].isdigit():
                    cut += 1
                env[f"app/logs/{svc}.log.1"] = "\n".join(lines[:cut]) + "\n"
                lines = lines[cut:]
            env[f"app/logs/{svc}.log"] = "\n".join(lines) + "\n"
        rotated = (
            " Older lines may be in a rotated file `<service>.log.1`; read both." if knobs.depth >= 3 else ""
        )
        instruction = f"""# Incident report from service status files and logs

Each service has `/app/services/<service>.status` (`key=value` lines: `state`, `enabled`, `pid`,
`depends_on` = comma-separated service names, possibly empty) and a log `/app/logs/<service>.log`.{rotated}
`/app/monitor.conf` sets `burst_count` (K) and `burst_window` (W seconds).

A log entry line starts with an ISO-8601 timestamp (with `Z` or a `+HH:MM`/`-HH:MM` offset), a space
and a level; the level is case-insensitive. Lines that do not start with a timestamp (stack traces)
are not entries. Error entries are those with level `ERROR` or `CRITICAL`.

- A service is **down** if its `state` is not `running` and it is `enabled=yes` (disabled services
  are never down).
- A service has an **error burst** if for some error entry at time t, the error entries with time in
  `[t, t + W)` number at least K. Report the earliest such t as `start` (UTC, `YYYY-MM-DDTHH:MM:SSZ`)
  and that window's error count as `count`.
- **healthy**: neither down nor bursting.

Write `/app/incident_report.json`:
`{{"down": [sorted names], "bursts": {{"<service>": {{"start": "...", "count": n}}}}, "healthy": [sorted names]}}`.

Write `/app/restart_plan.txt`: every down service, one per line, ordered so that each service comes
after the down services listed in its `depends_on` (dependencies that are not down are ignored);
when several are possible, take the alphabetically smallest first.
"""
        return TaskParts(
            instruction=instruction,
            environment=env,
            tests={
                "test.sh": STANDARD_TEST_SH,
                "test_outputs.py": test_script({"report": report, "plan": plan}, TEST_BODY),
            },
            solver=python_program(SOLVER),
        )


register_family(ServiceMonitoringFamily())
