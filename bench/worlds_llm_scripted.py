"""`envpipeline worlds build --generator llm` against the scripted local server: what a run produces.

Starts `tests.llm_server.ScriptedLLMServer` answering every WildAWM stage from
`tests.worlds_llm_script.StageRouter` (with one adversarial turn per stage: a persona that repeats
the first one, a skill on an unknown table next to a valid one, a task that leaks its answer, a
world verdict with prose around it), runs the real CLI through litellm over HTTP, and prints the
summary's figures: personas accepted/rejected and why, skills proposed/admitted, tasks requested,
synthesized, accepted, gate pass rates, LLM calls/repairs/tokens.

    PYTHONPATH=. python bench/worlds_llm_scripted.py --personas 2 --days 2 --tasks-per-day 1
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from click.testing import CliRunner

from envpipeline.cli import main
from tests.llm_server import ScriptedLLMServer
from tests.worlds_llm_script import GYM_SKILL, PERSONAS, StageRouter, task_draft


def adversarial_router() -> StageRouter:
    """The default answers, with one refused answer per stage first."""
    bad_skill = {
        **GYM_SKILL,
        "name": "pay_rent",
        "scenarios": [{**GYM_SKILL["scenarios"][0], "table": "ledger"}],
    }
    return (
        StageRouter()
        .queue("persona", json.dumps(PERSONAS[0]), json.dumps(PERSONAS[0]))
        .queue("skills", json.dumps({"skills": [GYM_SKILL, bad_skill]}))
        .queue("task", lambda body: json.dumps(task_draft(body, leak=True)))
        .queue("world_judge", 'Looks fine: {"verdict": "pass", "issues": []}')
    )


def main_(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="worlds build --generator llm against the scripted server")
    parser.add_argument("--personas", type=int, default=2)
    parser.add_argument("--days", type=int, default=2)
    parser.add_argument("--tasks-per-day", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="worlds-llm-")) / "worlds"
    router = adversarial_router()
    with ScriptedLLMServer(default=router) as server:
        cli = [
            "worlds",
            "build",
            "--generator",
            "llm",
            "--model",
            "openai/scripted",
            "--api-base",
            server.api_base,
        ]
        cli += [
            "--personas",
            str(args.personas),
            "--days",
            str(args.days),
            "--tasks-per-day",
            str(args.tasks_per_day),
        ]
        cli += ["--no-live", "--out", str(out)]
        result = CliRunner().invoke(main, cli)
    print(result.output.strip())
    if result.exit_code != 0:
        return result.exit_code
    s = json.loads((out / "summary.json").read_text())
    llm = s["llm"]
    print("requests by stage:", dict(router.seen))
    print(
        "personas:",
        [w["persona_id"] for w in s["worlds"]],
        "rejected attempts:",
        len(llm["personas"]["rejected"]),
    )
    for r in llm["personas"]["rejected"]:
        print("  rejected:", r["persona_id"], "by", r["by"], "-", r["feedback"][:110])
    print(
        "skills:",
        [(p["name"], p["admitted"]) for p in llm["skills"]["proposals"]],
        "request",
        llm["skills"]["request"],
    )
    print(
        "worlds:",
        [(w["persona_id"], w["passed"], w["llm_skills_used"], w["failed_checks"]) for w in s["worlds"]],
    )
    t = llm["tasks"]
    print(
        f"tasks: {t['synthesized']} synthesized of {t['requested']} requested; repairs per request:",
        [r["repairs"] for r in t["requests"]],
    )
    print(
        "gated:",
        s["tasks"]["accepted"],
        "accepted of",
        s["tasks"]["candidates"],
        s["tasks"]["by_template"],
        "rejections:",
        s["tasks"]["rejections"],
    )
    print("gates:", {k: f"{v['passed']}/{v['total']}" for k, v in s["gates"].items()})
    print("usage:", llm["usage"])
    print("written to", out)
    return 0


if __name__ == "__main__":
    sys.exit(main_(sys.argv[1:]))
