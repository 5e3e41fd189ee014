"""The prompts of the WildAWM LLM stages, each with the passage of the paper it follows.

Source: "Agent World Model in the Wild: Computer-Use Agent Environment Synthesis" (WildAWM),
`seeds/001_a505aedea8c17030.txt` of the project brief. The paper's text gives each stage's inputs,
outputs and acceptance rule but not its verbatim prompt, so every prompt below states those
passages (quoted in `PAPER`) as instructions, and adds the output contract this codebase validates
(the JSON schema of the stage's pydantic model).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

#: The passages each stage follows, quoted from the paper (section "Synthesizing Computer
#: Environments", "Generating Verifiable Tasks" and appendix "Synthesis Pipeline Details").
PAPER: dict[str, str] = {
    "persona": (
        "Prompt a coding agent (GLM-5.2) to generate a persona description c (occupation, contacts, "
        "favorite sites). Compare the new persona against existing ones; if similarity exceeds a "
        "threshold, regenerate with feedback."
    ),
    "diversity_judge": (
        "To ensure variety, an LLM diversity judge rejects any candidate that repeats an occupation, "
        "core tool, or narrative arc already seen, providing diagnostic feedback for up to two "
        "revision attempts."
    ),
    "skill": (
        "World synthesis draws from a library of 83 event-creation skills; Table 17 shows the "
        "`book_flight` skill, which writes consistent state changes across five applications (Google "
        "Flights, email, direct-message, calendar, and a local notes file). [...] Each scenario "
        "specifies the state changes in one application."
    ),
    "task": (
        "Generate a candidate XAI task from W0 and produce tau, V, R, h, and the ordered sub-task "
        "document. [...] Our verifier requires *all* N binary criteria to be true. [...] A state "
        "already satisfying the request fails the initial unsatisfaction gate, ensuring the rollout "
        "must effect a change."
    ),
    "world_judge": (
        "World verification runs five gated checks: static lint, replay determinism, declaration "
        "verification, live health, and an independent reviewer inspection, rejecting any world that "
        "fails any step."
    ),
}


def schema_text(model: type[BaseModel]) -> str:
    """The JSON schema of `model`, compact, for the output contract of a prompt."""
    return json.dumps(model.model_json_schema(), separators=(",", ":"))


def _system(stage: str, role: str) -> dict[str, Any]:
    return {
        "role": "system",
        "content": (
            f"{role}\nThe method you follow (WildAWM): {PAPER[stage]}\n"
            "Answer with exactly one JSON object that matches the given schema: no prose, no comments."
        ),
    }


def persona_messages(
    schema: str,
    index: int,
    accepted: list[dict[str, Any]],
    apps: list[str],
    skills: dict[str, str],
    feedback: str = "",
) -> list[dict[str, Any]]:
    """Generate persona `index`, unlike the `accepted` ones (their occupation, core tools, arcs)."""
    taken = [
        {"occupation": p["occupation"], "core_tools": p["core_tools"], "arcs": p["arcs"]} for p in accepted
    ]
    user = (
        f"Write persona number {index + 1} of a synthetic personal-computer user: a persona bible "
        "with an occupation, a city, a description, contacts (with relations: friend, family, "
        "colleague, client ...), favourite sites, core tools and two story arcs for the coming days.\n"
        f"core_tools: three of the apps {apps}.\n"
        "Each arc lists, in story order, skills from this library (name: what it does):\n"
        + "\n".join(f"- {name}: {summary}" for name, summary in sorted(skills.items()))
        + f"\nPersonas accepted so far (do not repeat an occupation, core tool set or arc): {json.dumps(taken)}\n"
        f"Schema: {schema}"
    )
    if feedback:
        user += f"\nThe diversity judge rejected your previous candidate: {feedback}\nRegenerate accordingly."
    return [
        _system("persona", "You create diverse personas for synthetic computer worlds."),
        {"role": "user", "content": user},
    ]


def diversity_messages(
    schema: str, candidate: dict[str, Any], accepted: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Judge `candidate` against the `accepted` personas."""
    user = (
        "Decide whether the candidate persona repeats an accepted one. Reject it when its occupation, "
        "its core tool set or one of its story arcs repeats an accepted persona's, or when its "
        "description is a near paraphrase of one; list what repeats and give feedback for a revision.\n"
        f"Accepted personas: {json.dumps(accepted)}\nCandidate: {json.dumps(candidate)}\nSchema: {schema}"
    )
    return [
        _system("diversity_judge", "You are the diversity judge of a persona generator."),
        {"role": "user", "content": user},
    ]


def skill_messages(
    schema: str,
    existing: dict[str, str],
    tables: dict[str, dict[str, list[str]]],
    placeholders: list[str],
    n: int,
) -> list[dict[str, Any]]:
    """Propose `n` new event-creation skills over the world's apps and tables."""
    user = (
        f"Propose {n} new event-creation skills for a persona's day. A skill is a list of scenarios; "
        "each scenario is one operation on one application (insert/update/delete on an app table, "
        "or write_file/append_file under home/), and together they must leave the apps consistent "
        "(a payment changes the balance and adds the transaction; a booking gets its email and "
        "calendar event).\n"
        f"Apps and tables (columns; ids are assigned automatically): {json.dumps(tables)}\n"
        "In values and contents you may use these placeholders, filled when the skill runs: "
        f"{', '.join('{' + p + '}' for p in placeholders)}. An update adds to an integer column with "
        '{"$add": n}. Every insert sets every column.\n'
        f"Existing skills (do not duplicate): {json.dumps(existing)}\nSchema: {schema}"
    )
    return [
        _system("skill", "You write event-creation skills for a synthetic computer world."),
        {"role": "user", "content": user},
    ]


def task_messages(
    schema: str, persona: dict[str, Any], world: dict[str, Any], actions: dict[str, str], day: int, index: int
) -> list[dict[str, Any]]:
    """Synthesize cross-interface task `index` of world day `day`."""
    user = (
        f"Synthesize task {index + 1} on day {day} of this persona's computer: a request the persona "
        "would make that needs at least two of the interfaces web, cli and mcp. Give the instruction "
        "(it must not state the values the agent has to find), the ordered sub-tasks with one hint "
        "each, the reference solution steps of each sub-task, and binary criteria comparing the final "
        "state with the initial one (all must hold). Optional setup operations insert the trigger "
        "(an incoming mail, DM or chat message) into the initial state.\n"
        f"Persona: {json.dumps(persona)}\nWorld day (recent rows and files): {json.dumps(world)[:8000]}\n"
        "Solution step actions (interface.verb: arguments):\n"
        + "\n".join(f"- {name}: {doc}" for name, doc in sorted(actions.items()))
        + "\nRead steps capture regex groups into `vars`; write steps use {var} in their text.\n"
        f"Schema: {schema}"
    )
    return [
        _system("task", "You synthesize verifiable cross-interface computer-use tasks."),
        {"role": "user", "content": user},
    ]


def world_judge_messages(
    schema: str,
    persona: dict[str, Any],
    day: int,
    activities: list[Any],
    ops: list[Any],
    counts: dict[str, Any],
) -> list[dict[str, Any]]:
    """Review one materialized world day as the independent reviewer."""
    user = (
        f"Inspect day {day} of this persona's synthetic computer world. Fail it when the operations "
        "contradict each other or the persona (an order without its confirmation, money moved on "
        "one side only, a booking without its calendar event, events out of time order, content "
        "that does not fit the persona); pass it otherwise.\n"
        f"Persona: {json.dumps(persona)}\nActivities: {json.dumps(activities)}\n"
        f"Operations: {json.dumps(ops)[:6000]}\nRow counts after the day: {json.dumps(counts)}\nSchema: {schema}"
    )
    return [
        _system("world_judge", "You are the independent reviewer of a synthetic computer world."),
        {"role": "user", "content": user},
    ]
