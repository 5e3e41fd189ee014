"""The LLM world judge: the paper's "independent reviewer inspection" of every built world day.

`judge_world_day` asks the model for a strict verdict ``{"verdict": "pass"|"fail", "issues":
[{"app", "problem"}]}`` (the whole answer must be that object; unknown fields, a missing verdict or
a "fail" without issues are errors fed back for repair). A verdict that stays invalid after the
repairs fails the day's ``llm_world_judge`` check with the reasons; it is never read as a pass.
`judge_world` adds the check to every day of a `WorldBuild` (it runs after the rule-based checks,
which keep deciding on their own).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from envpipeline.errors import LLMError
from envpipeline.llm.protocol import LLM
from envpipeline.models.gates import GateResult
from envpipeline.models.world import Persona, WorldBuild
from envpipeline.worlds.llm.prompts import schema_text, world_judge_messages
from envpipeline.worlds.llm.structured import ask_structured
from envpipeline.worlds.schema import ALL_APPS
from envpipeline.worlds.state import day_path

CHECK_NAME = "llm_world_judge"


class Issue(BaseModel):
    """One problem the reviewer found."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    app: Annotated[str, Field(description="the app (or 'files') the problem is in")]
    problem: Annotated[str, Field(min_length=3)]


class WorldVerdict(BaseModel):
    """The reviewer's verdict on one world day."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    verdict: Literal["pass", "fail"]
    issues: list[Issue] = []


def verdict_problems(verdict: WorldVerdict) -> list[str]:
    """A "fail" must name its issues, a "pass" must have none, and every issue names a real app."""
    problems = []
    if verdict.verdict == "fail" and not verdict.issues:
        problems.append("issues: a 'fail' verdict must list at least one issue")
    if verdict.verdict == "pass" and verdict.issues:
        problems.append("issues: a 'pass' verdict must not list issues (answer 'fail' if they matter)")
    for i, issue in enumerate(verdict.issues):
        if issue.app not in ALL_APPS:
            problems.append(f"issues.{i}.app: {issue.app!r} is not one of {list(ALL_APPS)}")
    return problems


def judge_world_day(llm: LLM, persona: Persona, day_dir: Path, max_repairs: int = 2) -> GateResult:
    """The ``llm_world_judge`` check of one materialized day (day 00 is reviewed from its counts)."""
    day_dir = Path(day_dir)
    delta_file = day_dir / "delta.json"
    delta = json.loads(delta_file.read_text(encoding="utf-8")) if delta_file.is_file() else {}
    manifest = json.loads((day_dir / "manifest.json").read_text(encoding="utf-8"))
    ops: list[Any] = [{k: v for k, v in op.items() if v not in (None, {}, [])} for op in delta.get("ops", [])]
    card = {"name": persona.name, "occupation": persona.occupation, "city": persona.city}
    messages = world_judge_messages(
        schema_text(WorldVerdict),
        card,
        int(manifest.get("day", 0)),
        delta.get("activities", []),
        ops,
        manifest.get("apps", {}),
    )
    try:
        result = ask_structured(
            llm, messages, WorldVerdict, stage="world_judge", check=verdict_problems, max_repairs=max_repairs
        )
    except LLMError as exc:
        return GateResult(name=CHECK_NAME, passed=False, reason=f"the LLM world judge failed: {exc}")
    evidence: dict[str, Any] = {"llm": result.summary()}
    if result.value is None:
        return GateResult(
            name=CHECK_NAME,
            passed=False,
            reason=f"no valid verdict after {len(result.attempts)} attempt(s): {'; '.join(result.errors)}",
            evidence=evidence,
        )
    issues = [f"{i.app}: {i.problem}" for i in result.value.issues]
    evidence["issues"] = issues
    return GateResult(
        name=CHECK_NAME,
        passed=result.value.verdict == "pass",
        reason="; ".join(issues) or "the LLM world judge found no inconsistency",
        evidence=evidence,
    )


def judge_world(llm: LLM, persona: Persona, build: WorldBuild, max_repairs: int = 2) -> WorldBuild:
    """`build` with the ``llm_world_judge`` check added to every day."""
    root = Path(build.root)
    days = [
        d.model_copy(
            update={"checks": [*d.checks, judge_world_day(llm, persona, day_path(root, d.day), max_repairs)]}
        )
        for d in build.days
    ]
    return build.model_copy(update={"days": days})
