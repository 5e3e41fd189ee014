"""The dataset card (Markdown): counts, difficulty, skills, interfaces, gates, provenance, splits."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence

from envpipeline.export.splits import SplitResult
from envpipeline.models.dataset import AcceptedTask


def _table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return lines + [""]


def _counter_rows(counter: Counter) -> list[tuple[object, int]]:
    return sorted(counter.items(), key=lambda kv: (-kv[1], str(kv[0])))


def _gate_rows(tasks: Sequence[AcceptedTask]) -> list[tuple[str, str, int, int]]:
    seen: dict[tuple[str, str], list[bool]] = {}
    for task in tasks:
        for gate, passed in json.loads(task.gate_stats).get("gates", {}).items():
            seen.setdefault((task.family, gate), []).append(bool(passed))
    return [(family, gate, sum(v), len(v)) for (family, gate), v in sorted(seen.items())]


def _red_team_rows(tasks: Sequence[AcceptedTask]) -> list[tuple[str, str, int, int, str]]:
    """Per family and red-team policy: tasks attacked, full rewards it earned (must be 0), mean credit."""
    seen: dict[tuple[str, str], list[dict]] = {}
    for task in tasks:
        for policy, outcome in json.loads(task.gate_stats).get("red_team", {}).items():
            seen.setdefault((task.family, policy), []).append(outcome)
    return [
        (
            family,
            policy,
            len(outcomes),
            sum(o["binary"] == 1.0 and not o["moot"] for o in outcomes),
            f"{sum(o['checklist'] for o in outcomes) / len(outcomes):.2f}",
        )
        for (family, policy), outcomes in sorted(seen.items())
    ]


def _provenance_rows(tasks: Sequence[AcceptedTask]) -> list[tuple[str, str, str, int, str]]:
    seen: dict[tuple[str, str, str], list[str]] = {}
    for task in tasks:
        p = json.loads(task.provenance)
        key = (task.family, str(p.get("generator", "")), str(p.get("generator_version", "")))
        seen.setdefault(key, []).append(task.seed_key)
    rows = []
    for (family, generator, version), seeds in sorted(seen.items()):
        unique = sorted(set(seeds))
        shown = ", ".join(unique[:8]) + (f", … (+{len(unique) - 8})" if len(unique) > 8 else "")
        rows.append((family, generator, version, len(seeds), shown))
    return rows


def dataset_card(
    tasks: Sequence[AcceptedTask],
    split: SplitResult,
    title: str = "envpipeline training datasets",
    files: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """The Markdown card of an export: every count is computed from `tasks` and `split`."""
    lines = [
        f"# {title}",
        "",
        f"{len(tasks)} accepted tasks across {len({t.family for t in tasks})} families.",
        "",
    ]
    lines += ["## Families", ""] + _table(
        ["family", "tasks", "with SFT trajectory"],
        [
            (f, n, sum(t.reference_messages is not None for t in tasks if t.family == f))
            for f, n in sorted(Counter(t.family for t in tasks).items())
        ],
    )
    difficulty = Counter((t.family, t.difficulty) for t in tasks)
    lines += ["## Difficulty", ""] + _table(
        ["family", "difficulty", "tasks"], [(f, d, n) for (f, d), n in sorted(difficulty.items())]
    )
    lines += ["## Skills", ""] + _table(
        ["skill", "tasks"], _counter_rows(Counter(s for t in tasks for s in t.skills))
    )
    lines += ["## Interfaces", ""] + _table(
        ["interface", "tasks"], _counter_rows(Counter(i for t in tasks for i in t.interfaces))
    )
    lines += ["## Gate statistics", ""] + _table(["family", "gate", "passed", "checked"], _gate_rows(tasks))
    red_team = _red_team_rows(tasks)
    if red_team:
        lines += [
            "## Red team",
            "",
            "Adversary policies that try to earn reward without doing the task; an accepted task gives",
            "each of them full reward on no attempt (the hack-pass column must read 0).",
            "",
        ] + _table(["family", "policy", "tasks attacked", "hack passes", "mean checklist credit"], red_team)
    lines += ["## Provenance", ""] + _table(
        ["family", "generator", "version", "tasks", "seeds"], _provenance_rows(tasks)
    )
    report = split.report
    sizes = Counter((split.assignments[t.task_id], t.family) for t in tasks)
    lines += ["## Splits", ""] + _table(
        ["split", "tasks", "by family"],
        [
            (
                s,
                report.split_sizes.get(s, 0),
                ", ".join(f"{f}: {n}" for (sp, f), n in sorted(sizes.items()) if sp == s),
            )
            for s in ("sft", "rl", "eval")
        ],
    )
    lines += [
        "## Leakage report",
        "",
        f"- groups (same seed or near-duplicate instructions): {report.n_groups}",
        f"- near-duplicate threshold (word 3-gram Jaccard): {report.threshold}",
        f"- near-duplicate pairs in the set: {report.near_duplicate_pairs}",
        f"- seeds found in more than one split: {len(report.seeds_across_splits)}",
        f"- near-duplicate pairs split apart: {len(report.near_duplicates_across_splits)}",
        f"- verdict: {'no leakage' if report.clean else 'LEAKAGE'}",
        "",
    ]
    if files:
        lines += ["## Files", ""] + _table(
            ["format", "files"], [(k, ", ".join(v)) for k, v in sorted(files.items())]
        )
    return "\n".join(lines).rstrip() + "\n"
