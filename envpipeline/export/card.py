"""The dataset card (Markdown): counts, difficulty, skills, interfaces, gates, provenance, splits.

The card opens with Hugging Face YAML front matter whose ``configs:`` name one config per written
format (and ``accepted_tasks``), each with its files per split, so ``datasets.load_dataset(<dir>,
"verl")`` loads the verl rows with their ``rl`` / ``eval`` splits. Its "Token lengths" section gives
estimated token lengths per format and the trainer settings they call for (see `token_lengths`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence

from envpipeline.export import token_lengths
from envpipeline.export.formats import STAGE_SPLITS, export_formats
from envpipeline.export.rows import prompt_messages
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


def front_matter(files: Mapping[str, Sequence[str]]) -> list[str]:
    """YAML front matter with one ``configs:`` entry per format: its files by split (file stem)."""
    lines = ["---", "configs:"]
    for name, paths in files.items():
        if not paths:
            continue
        lines += [f"- config_name: {name}", "  data_files:"]
        for path in paths:
            split = "train" if name == "accepted_tasks" else path.rsplit("/", 1)[-1].split(".", 1)[0]
            lines += [f"  - split: {split}", f"    path: {path}"]
    return [*lines, "---", ""]


def _stage_tasks(fmt: str, tasks: Sequence[AcceptedTask], split: SplitResult) -> list[AcceptedTask]:
    spec = export_formats()[fmt]
    chosen = [t for t in tasks if split.assignments.get(t.task_id) in STAGE_SPLITS[spec.stage]]
    return [t for t in chosen if t.reference_messages is not None] if spec.stage == "sft" else chosen


def _length_row(fmt: str, measured: str, estimates: list[int], setting: str) -> tuple[object, ...]:
    if not estimates:
        return (fmt, 0, measured, "-", "-", "-", f"{setting}: no rows")
    p50, p95 = token_lengths.percentile(estimates, 0.5), token_lengths.percentile(estimates, 0.95)
    limit = token_lengths.length_setting(estimates)
    return (fmt, len(estimates), measured, p50, p95, max(estimates), f"`{setting}` >= {limit}")


def _token_rows(formats: Sequence[str], tasks: Sequence[AcceptedTask], split: SplitResult) -> list[tuple]:
    rows = []
    estimate, chat = token_lengths.estimate_tokens, token_lengths.chat_text
    for fmt in formats:
        spec = export_formats()[fmt]
        chosen = _stage_tasks(fmt, tasks, split)
        if spec.stage == "sft":
            sft_rows = [spec.row(t, "sft", 0) for t in chosen]
            full = [estimate(chat(r["messages"], r["tools"])) for r in sft_rows]
            rows.append(_length_row(fmt, "whole conversation + tools", full, "max_length"))
            continue
        prompts = [estimate(chat(prompt_messages(t), t.tool_schemas())) for t in chosen]
        rows.append(_length_row(fmt, "prompt + tools", prompts, "max_prompt_length"))
        responses = [estimate(chat((t.messages() or [])[2:])) for t in chosen if t.reference_messages]
        rows.append(
            _length_row(fmt, "reference trajectory after the prompt", responses, "max_response_length")
        )
    return rows


def dataset_card(
    tasks: Sequence[AcceptedTask],
    split: SplitResult,
    title: str = "envpipeline training datasets",
    files: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """The Markdown card of an export: every count is computed from `tasks` and `split`.

    With `files` (format -> paths relative to the card), the card starts with the YAML ``configs:``
    front matter and gives token lengths for those formats; without, for every registered format.
    """
    lines = front_matter(files) if files else []
    lines += [
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
    formats = [f for f in (files or export_formats()) if f in export_formats()]
    lines += [
        "## Loading",
        "",
        '- `datasets.load_dataset("<this folder>", "<format>")`: one config per format (front matter above).',
        "- SFT formats: `messages`, `tools` and `tool_names` are JSON columns (`datasets` `Json()`): every",
        "  message and tool schema loads back exactly (no null-padded keys), tool-call `arguments` are",
        "  dicts, encoded once. TRL's `SFTTrainer` takes the rows as they are; verl's multi-turn SFT",
        "  reads them with `data.custom_cls.path=pkg://envpipeline.export.verl_sft`",
        "  `data.custom_cls.name=EnvpipelineSFTDataset`; plain pyarrow/pandas: `json.loads` each value.",
        "- Tool names obey `^[a-zA-Z0-9_-]{1,64}$` (`cli.exec` -> `cli__exec`, routes get a hashed",
        "  suffix); each SFT row's `tool_names` maps safe -> original names.",
        "",
        "## Token lengths",
        "",
        "Estimated tokens per row (no tokenizer is downloaded: max(GPT-2-style pre-tokenization pieces,",
        "characters / 3) over ChatML-rendered text, see `envpipeline.export.token_lengths`); the setting",
        "is the largest estimate + 10%, rounded up to 512. verl: `data.max_length` (SFT),",
        "`data.max_prompt_length` / `data.max_response_length` (RL; verl's default `max_length` 1024 is",
        "too small for these trajectories); TRL: `SFTConfig.max_length`, GRPO `max_completion_length`.",
        "Confirm once with your model's tokenizer.",
        "",
    ] + _table(["format", "rows", "measured", "p50", "p95", "max", "set"], _token_rows(formats, tasks, split))
    if files:
        lines += ["## Files", ""] + _table(
            ["format", "files"], [(k, ", ".join(v)) for k, v in sorted(files.items())]
        )
    return "\n".join(lines).rstrip() + "\n"
