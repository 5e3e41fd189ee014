"""Scoring a rollout: the criteria verifier V, checklist credit, a state-diff judge and an LLM judge.

- `evaluate(task, initial_dir, final_dir)`: per-criterion booleans (`criteria.check`), the verdict
  V = product of the criteria (1 only when all pass) and the checklist credit (`checklist_credit`:
  weighted share of checklist items whose criteria all pass, of the items a rollout must bring
  about: ``state_preserved``, which W0 itself meets, is a condition, not credit).
- `diff_judge(task, initial_dir, final_dir)`: an independent judge that never runs the criteria
  code. It computes `envpipeline.worlds.state.diff` and looks, for each of the task's
  expectations, for an added or changed row (or an added/changed file) whose text contains every
  token; ``{new:app/table.column}`` tokens are resolved from the rows the diff shows as added.
- `llm_judge(llm, task, ...)`: the task, the diff summary and the changed files go to an
  `LLM`; answers ``{"success": bool}``; None when no client is configured or it fails.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envpipeline.llm import LLM
from envpipeline.models.world_task import WorldCriterion, WorldTask
from envpipeline.rewards.held_at_start import held_checklist
from envpipeline.worlds.allowance import called_through
from envpipeline.worlds.criteria import check_all
from envpipeline.worlds.state import diff

_NEW = re.compile(r"\{new:([a-z]+)/([a-z_]+)\.([a-z_]+)\}")
_FIELD = re.compile(r"\{([a-z_]+)=(.*)\}", re.S)


@dataclass
class Evaluation:
    """The verifier's view of one final state."""

    criteria: dict[str, bool]
    verdict: int
    checklist: float
    failed: list[str] = field(default_factory=list)


def evaluate(
    task: WorldTask,
    initial_dir: Path | str,
    final_dir: Path | str,
    trajectory: list[dict[str, Any]] | None = None,
) -> Evaluation:
    """Per-criterion booleans, V = product, and weighted checklist credit.

    ``calls_through`` criteria are checked on `trajectory`; without one (a state alone) they pass.
    """
    results = check_all([c.model_dump(mode="json") for c in task.criteria], initial_dir, final_dir)
    if trajectory is not None:
        for criterion in task.criteria:
            if criterion.kind == "calls_through":
                results[criterion.id] = called_through(criterion, trajectory)
    verdict = int(all(results.values()) and bool(results))
    return Evaluation(
        criteria=results,
        verdict=verdict,
        checklist=checklist_credit(task, results),
        failed=[cid for cid, ok in results.items() if not ok],
    )


#: Criterion kinds every W0 meets (the state against itself): a rollout that does nothing passes
#: them, so they earn no checklist credit and void it when broken (`rewards.held_at_start`).
HELD_AT_START_KINDS = frozenset({"state_preserved"})


def held_at_start(criteria: Sequence[WorldCriterion]) -> list[str]:
    """The ids of `criteria` that every initial state meets (`HELD_AT_START_KINDS`)."""
    return [c.id for c in criteria if c.kind in HELD_AT_START_KINDS]


def checklist_credit(task: WorldTask, results: Mapping[str, bool]) -> float:
    """Weighted share of the checklist items whose criteria all pass, counting only items a rollout
    must bring about; 0.0 when a criterion W0 meets fails (`rewards.held_at_start.held_checklist`)."""
    items = [(item.weight, item.criteria) for item in task.checklist]
    return held_checklist(items, results, held_at_start(task.criteria))


def _row_text(row: dict[str, Any]) -> str:
    """The row's values (not its column names) as one searchable text."""
    return "\n".join(str(v) for v in row.values() if v is not None)


def _file_text(day_dir: Path, path: str) -> str | None:
    target = Path(day_dir) / "home" / path
    return target.read_text(encoding="utf-8", errors="replace") if target.is_file() else None


def _token_options(token: str, state_diff: dict[str, Any]) -> list[str]:
    """A literal token, or every value of the new rows a ``{new:...}`` token stands for."""
    match = _NEW.fullmatch(token)
    if not match:
        return [token]
    app, table, column = match.groups()
    added = state_diff.get(f"{app}/{table}", {}).get("added", [])
    return [str(row[column]) for row in added if row.get(column)]


def _all_tokens(
    text: str, tokens: list[str], state_diff: dict[str, Any], row: dict[str, Any] | None = None
) -> bool:
    """Every token occurs in `text`; a ``{column=value}`` token must equal the row's column."""
    for token in tokens:
        field = _FIELD.fullmatch(token)
        if field and row is not None:
            if str(row.get(field.group(1))) != field.group(2):
                return False
            continue
        options = _token_options(token, state_diff)
        if not any(option in text for option in options):
            return False
    return True


def diff_judge(
    task: WorldTask, initial_dir: Path | str, final_dir: Path | str
) -> tuple[bool, dict[str, Any]]:
    """(success, evidence): every expectation is met by the state diff."""
    state_diff = diff(initial_dir, final_dir)
    met: dict[str, bool] = {}
    for i, exp in enumerate(task.expectations):
        key = f"e{i + 1}:{exp.app}/{exp.table or exp.path}"
        if exp.app == "files":
            files = state_diff["files"]
            touched = exp.path in files["added"] or exp.path in files["changed"]
            text = _file_text(Path(final_dir), exp.path or "") if touched else None
            met[key] = text is not None and _all_tokens(text, exp.tokens, state_diff)
            continue
        entry = state_diff.get(f"{exp.app}/{exp.table}", {})
        rows = list(entry.get("added", [])) + [c["after"] for c in entry.get("changed", [])]
        met[key] = any(_all_tokens(_row_text(row), exp.tokens, state_diff, row) for row in rows)
    changed = sorted(k for k in state_diff if k != "files")
    return bool(met) and all(met.values()), {
        "expectations": met,
        "changed_tables": changed,
        "files": state_diff["files"],
    }


def _diff_summary(state_diff: dict[str, Any], final_dir: Path, limit: int = 6000) -> str:
    parts = []
    for key, entry in state_diff.items():
        if key == "files":
            for path in entry["added"] + entry["changed"]:
                parts.append(f"file {path}:\n{(_file_text(final_dir, path) or '')[:600]}")
            continue
        for row in entry["added"]:
            parts.append(f"{key} added {_row_text(row)[:400]}")
        for change in entry["changed"]:
            parts.append(f"{key} changed {change['fields']} -> {_row_text(change['after'])[:400]}")
    return "\n".join(parts)[:limit]


def llm_judge(
    llm: LLM | None, task: WorldTask, initial_dir: Path | str, final_dir: Path | str
) -> bool | None:
    """An LLM's verdict on the state change, or None (no client, an error, or no parseable answer)."""
    if llm is None:
        return None
    summary = _diff_summary(diff(initial_dir, final_dir), Path(final_dir))
    prompt = (
        "You judge whether a computer-use agent completed a task. Judge only from the state change.\n"
        f"Task: {task.instruction}\nSub-tasks:\n"
        + "\n".join(f"- [{s.interface}] {s.description}" for s in task.subtasks)
        + f"\nState change (final vs initial):\n{summary or '(nothing changed)'}\n"
        'Answer with JSON only: {"success": true|false, "reason": "..."}'
    )
    try:
        response = llm.complete([{"role": "user", "content": prompt}])
        text = (response.content or "").strip()
        verdict = json.loads(text[text.index("{") : text.rindex("}") + 1])
        return bool(verdict.get("success"))
    except Exception:  # an unavailable or confused judge abstains; the recorded gates say so
        return None
