"""The Envs-FORGE prompt contract (paper, appendix C): shared contract, solver payload, masks, repair.

The system message carries the shared synthesis contract (C.1) and the Envs-FORGE objective (C.2);
the user message carries the runtime suffix in the paper's order: solver payload, projection and
direction instructions, artifact edit mask, skill subgraph, sample fields, then the shortened
seed files. The repair prompt (C.1) adds the repair index, failure summary and previous artifact.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from envpipeline.models.bundle import Difficulty
from envpipeline.models.selection import Decision, Direction, Projection

SHARED_CONTRACT = (
    "Synthesize one Terminal-Bench-style task directory from the seed task. Return exactly one JSON "
    "object, with top-level keys task_name, instruction_md, files, and metadata. Create a small but real "
    "task variant rather than restating the seed. Rewrite the user-facing instruction and synchronize the "
    "oracle solution, test runner, verifier tests, execution environment, and any changed fixtures or "
    "helper files. Keep the container build context valid, pin the runtime, and ensure that every command "
    "used by the solution and tests exists in the generated environment. Make the tests verify the "
    "generated instruction and solution. Every tested threshold, tie-break, filename, output key, or "
    "fixture value must be stated in the instruction rather than hidden in the verifier. Make the test "
    "runner write reward 1 on success and reward 0 on failure, including when the underlying test command "
    "fails. Before returning, mentally execute the build, oracle solution, and verifier; the expected "
    "result is reward 1."
)

OUTPUT_FORMAT = (
    "Output format: task_name matches [A-Za-z0-9_.-]{1,100}; instruction_md is the full agent-facing "
    "instruction; files maps relative paths to full text contents and must include environment/Dockerfile, "
    "solution/solve.sh and tests/test.sh (fixtures under environment/app/ are copied to /app); paths may "
    "only start with environment/, solution/ or tests/, or be task.toml; no absolute paths, no '..'. "
    "tests/test.sh must write 1 or 0 to /logs/verifier/reward.txt. The environment must not copy "
    "solution/ or tests/ into the image. metadata is a JSON object with a short projection_summary and "
    "skill_nodes (the list of skill nodes the task exercises). "
    "Answer with the JSON object only."
)

FORGE_OBJECTIVE = (
    "Envs-FORGE objective: project the seed toward the current policy's learning frontier; preserve the "
    "target skill subgraph rather than jumping to an unrelated easy task; increase easy seeds, reduce "
    "hard seeds into bridge tasks, and diversify frontier seeds near their current difficulty; materialize "
    "the selected action as one synchronized executable environment. The six possible action variants are "
    "the Cartesian product of increase_complexity, reduce_complexity, or diversify_frontier with in_depth "
    "or in_breadth."
)

GENERATION_CONTRACT = (
    "preserve_nodes must remain observable in the generated instruction and verifier; additions must come "
    "from allowed_added_nodes; a reduction may remove or simulate allowed_removed_nodes only when the "
    "preserved core remains testable. Treat every artifact in required_artifacts as a mandatory "
    "synchronized edit and restrict each edit to the operator families in the selected mask. Keep the "
    "artifact compact and runnable, favor reuse of the seed runtime, deterministic file-level simulations "
    "are allowed for reduced system tasks, no hidden test constraints. Mentally execute build, oracle and "
    "verifier; the expected reward is 1. Store the solver payload, target difficulty and a projection "
    "summary in metadata, and list the skill nodes the generated task exercises in metadata.skill_nodes "
    "(every preserve_node not in allowed_removed_nodes must be among them)."
)

REPAIR_CONTRACT = (
    "Repair a failed generated Terminal-Bench-style task directory. Return one complete JSON object rather "
    "than patch fragments. Make instruction_md identical to the generated instruction file after trimming "
    "whitespace. Make the oracle solve exactly that instruction and make both verifier layers test exactly "
    "that instruction and oracle behavior. Include every changed fixture or helper file, preserve a "
    "buildable environment context, and pin the runtime. State exact verifier expectations in the "
    "instruction and always emit reward 0 or 1 even when the test command fails. Re-evaluate the "
    "build-solve-test path and target oracle reward 1. Keep the selected action, artifact edit mask and "
    "skill subgraph while correcting parsing, build, static-validation, or oracle-verification failures."
)

PROJECTION_INSTRUCTIONS: dict[Projection, str] = {
    "increase_complexity": "The seed appears easy. Add one or two concrete constraints, edge cases, stricter "
    "output requirements, or a larger fixture while preserving the seed skill subgraph.",
    "reduce_complexity": "The seed appears beyond the current agent. Split away secondary systems or create a "
    "smaller bridge task while preserving the target skill subgraph and its important artifacts.",
    "diversify_frontier": "The seed is near the frontier. Keep difficulty similar, diversify data and "
    "constraints, and avoid large simplification or unrelated breadth jumps.",
}

DIRECTION_INSTRUCTIONS: dict[Direction, str] = {
    "in_depth": "Strengthen constraints and edge cases without changing the core skill graph.",
    "in_breadth": "Vary fixtures, neighboring constraints, or surrounding context while keeping difficulty "
    "in the same neighborhood.",
}

#: Artifact names of the masks: Inst, Data, Sol, Test, Env, Help and where each lives in a bundle.
ARTIFACTS = {
    "Inst": "instruction_md (instruction.md)",
    "Data": "input fixtures and data (environment/app/...)",
    "Sol": "oracle solution (solution/solve.sh and helpers)",
    "Test": "tests and reward logic (tests/test.sh and helpers)",
    "Env": "container environment (environment/Dockerfile)",
    "Help": "helper files used by several artifacts",
}


class ArtifactEditMask(BaseModel):
    """Which artifacts an action must / may edit, and with which operator families (C.2)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    projection: Projection
    required_artifacts: list[str]
    optional_artifacts: list[str]
    operators: list[str]


class SkillSubgraph(BaseModel):
    """The skill nodes to keep, and those the rewrite may add or remove."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    preserve_nodes: list[str]
    allowed_added_nodes: list[str]
    allowed_removed_nodes: list[str]


_MASKS: dict[Projection, tuple[list[str], list[str], list[str]]] = {
    "increase_complexity": (
        ["Inst", "Data", "Sol", "Test"],
        ["Env", "Help"],
        [
            "add explicit constraints and edge cases",
            "change or enlarge fixtures",
            "update the algorithm",
            "strengthen checks for boundary cases and deterministic outputs",
        ],
    ),
    "reduce_complexity": (
        ["Inst", "Data", "Sol", "Test", "Env"],
        ["Help"],
        [
            "split secondary systems",
            "replace live dependencies with deterministic fixtures",
            "rewrite the solution for a bridge task",
            "test the core skill only",
            "simplify the runtime",
        ],
    ),
    "diversify_frontier": (
        ["Inst", "Data", "Sol", "Test"],
        ["Env", "Help"],
        [
            "reframe at similar difficulty",
            "replace fixtures while preserving scale",
            "update expected logic while retaining the solution shape",
            "preserve verifier granularity",
        ],
    ),
}


def artifact_edit_mask(projection: Projection) -> ArtifactEditMask:
    """The deterministic edit mask of a projection (outside the solver, paper A.2)."""
    required, optional, operators = _MASKS[projection]
    return ArtifactEditMask(
        projection=projection, required_artifacts=required, optional_artifacts=optional, operators=operators
    )


def skill_subgraph(decision: Decision) -> SkillSubgraph:
    """The three node sets of the skill-subgraph contract (paper, C.2).

    preserve: the required nodes plus the optional nodes the solver activated (counted toward
    coverage, so the rewrite must exercise them); added: the candidate's addable optional nodes
    (taxonomy neighbours; activated additions included); removed: the nodes a reduction may drop
    (its dropped system nodes), never one counted toward coverage.
    """
    counted = list(decision.selected_optional_skills)
    required = list(decision.required_skills)
    removable = set(decision.removable_skills)
    preserve = list(dict.fromkeys([*required, *counted]))
    added = [
        n
        for n in dict.fromkeys([*decision.optional_skills, *counted])
        if n not in removable and n not in required
    ]
    removed = [n for n in decision.removable_skills if n not in counted and n not in required]
    return SkillSubgraph(preserve_nodes=preserve, allowed_added_nodes=added, allowed_removed_nodes=removed)


def target_difficulty(projected_pass_rate: float) -> Difficulty:
    """easy / medium / hard for the current policy at the projected pass rate."""
    if projected_pass_rate >= 0.7:
        return "easy"
    if projected_pass_rate <= 0.3:
        return "hard"
    return "medium"


def solver_payload(decision: Decision) -> dict[str, Any]:
    """The C.2 solver payload of a decision."""
    return {
        "seed_id": decision.seed_id,
        "seed_pass_rate": round(decision.pass_rate, 4),
        "reward_band": decision.reward_band,
        "projection": decision.projection,
        "evolution_direction": decision.direction,
        "action_variant": decision.action_variant,
        "projected_pass_rate": round(decision.projected_pass_rate, 4),
        "frontier_score": round(decision.frontier_score, 4),
        "target_difficulty": target_difficulty(decision.projected_pass_rate),
        "backend": decision.backend,
        "recipe": decision.recipe,
    }


# ----------------------------------------------------------------------------------- seed files

#: The seed files shown first, in this order; the rest follow sorted, if small and textual.
PRIMARY_FILES = (
    "instruction.md",
    "task.toml",
    "environment/Dockerfile",
    "solution/solve.sh",
    "tests/test.sh",
)
PRIMARY_CHARS = 4000
OTHER_CHARS = 1500
OTHER_MAX_BYTES = 64_000
TOTAL_CHARS = 24_000


def _shorten(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n... [truncated {len(text) - limit} characters]"


def _read_text(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data:
        return None
    try:
        return data.decode()
    except UnicodeDecodeError:
        return None


def shortened_seed_files(seed_dir: Path) -> dict[str, str]:
    """The seed's text files for structural reference: primary ones first, all truncated, no links."""
    root = Path(seed_dir)
    others: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            full = Path(dirpath, name)
            relative = full.relative_to(root).as_posix()
            if (
                relative not in PRIMARY_FILES
                and not full.is_symlink()
                and full.stat().st_size <= OTHER_MAX_BYTES
            ):
                others.append(relative)
    shown: dict[str, str] = {}
    budget = TOTAL_CHARS
    for relative in [*PRIMARY_FILES, *others]:
        path = root / relative
        if budget <= 0 or path.is_symlink() or not path.is_file():
            continue
        text = _read_text(path)
        if text is None:
            continue
        limit = min(PRIMARY_CHARS if relative in PRIMARY_FILES else OTHER_CHARS, budget)
        shown[relative] = _shorten(text, limit)
        budget -= len(shown[relative])
    return shown


def render_seed_files(files: dict[str, str]) -> str:
    """Seed files as fenced blocks headed by their paths."""
    return "\n\n".join(f"### {path}\n```\n{text}\n```" for path, text in files.items())


# --------------------------------------------------------------------------------------- messages


def _block(title: str, value: Any) -> str:
    body = value if isinstance(value, str) else json.dumps(value, indent=2, sort_keys=False)
    return f"## {title}\n{body}"


def action_sections(decision: Decision) -> list[str]:
    """Solver payload, projection and direction instructions, edit mask and skill subgraph blocks."""
    mask = artifact_edit_mask(decision.projection)
    return [
        _block("Solver payload", solver_payload(decision)),
        _block(
            f"Projection instruction ({decision.projection})", PROJECTION_INSTRUCTIONS[decision.projection]
        ),
        _block(
            f"Evolution direction instruction ({decision.direction})",
            DIRECTION_INSTRUCTIONS[decision.direction],
        ),
        _block("Artifact edit mask", {**mask.model_dump(), "artifact_names": ARTIFACTS}),
        _block("Skill subgraph", skill_subgraph(decision).model_dump()),
        _block("Generation contract", GENERATION_CONTRACT),
    ]


def _sample_section(seed_dir: Path, sample_index: int, model: str) -> str:
    fields = {"sample_index": sample_index, "synthesis_model": model, "seed_name": Path(seed_dir).name}
    return _block("Sample", fields)


def synthesis_messages(seed_dir: Path, decision: Decision, *, sample_index: int, model: str) -> list[dict]:
    """System + user messages of the initial solver-conditioned generation call."""
    system = "\n\n".join([SHARED_CONTRACT, FORGE_OBJECTIVE, OUTPUT_FORMAT])
    user = "\n\n".join(
        [
            *action_sections(decision),
            _sample_section(seed_dir, sample_index, model),
            "## Seed files (shortened, for structural reference)\n"
            + render_seed_files(shortened_seed_files(seed_dir)),
        ]
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


PREVIOUS_ARTIFACT_CHARS = 30_000


def _repair_context(seed_dir: Path, sample_index: int, model: str, previous_artifact: str) -> list[str]:
    """The sections every repair prompt ends with: the sample, the previous artifact, the seed files."""
    return [
        _sample_section(seed_dir, sample_index, model),
        _block("Previous artifact JSON", _shorten(previous_artifact, PREVIOUS_ARTIFACT_CHARS)),
        "## Seed files (shortened, for structural reference)\n"
        + render_seed_files(shortened_seed_files(seed_dir)),
    ]


def repair_messages(
    seed_dir: Path,
    decision: Decision,
    *,
    sample_index: int,
    model: str,
    repair_index: int,
    failure_summary: str,
    previous_artifact: str,
) -> list[dict]:
    """System + user messages of the repair call (C.1 repair prompt, Envs-FORGE strategy)."""
    system = "\n\n".join([REPAIR_CONTRACT, SHARED_CONTRACT, OUTPUT_FORMAT])
    user = "\n\n".join(
        [
            _block("Strategy", f"envs_forge: {decision.action_variant}. {FORGE_OBJECTIVE}"),
            _block("Evolution direction", decision.direction),
            _block("Repair index", str(repair_index)),
            _block("Failure summary", failure_summary),
            *action_sections(decision),
            *_repair_context(seed_dir, sample_index, model, previous_artifact),
        ]
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


# ------------------------------------------------------------------------- fixed-recipe baselines

#: The paper's baseline strategy injection (C.1): strategy key -> (evolution direction, sentence).
BASELINE_STRATEGIES: dict[str, tuple[str, str]] = {
    "few_shot": (
        "none",
        "Create a close variant that preserves the seed task structure while changing concrete "
        "requirements and verifier expectations.",
    ),
    "self_instruct": (
        "none",
        "Invent a related terminal task in the same domain with its own task description, solution, "
        "and verifier.",
    ),
    "evol_instruct_in_depth": (
        "in_depth",
        "Deepen the seed by adding a harder constraint or edge case and update solution and tests accordingly.",
    ),
    "evol_instruct_in_breadth": (
        "in_breadth",
        "Broaden the seed into a neighboring task type while keeping the same Terminal-Bench directory contract.",
    ),
}
EXAMPLE_CHARS = 1500
#: The baseline repair prompt keeps the recipe's strategy instead of a solver action (C.1).
BASELINE_REPAIR_CONTRACT = REPAIR_CONTRACT.replace(
    "Keep the selected action, artifact edit mask and skill subgraph", "Keep the baseline strategy"
)


def example_instructions(seed_dir: Path, shots: int, sample_index: int) -> dict[str, str]:
    """`shots` example tasks besides the seed: the instructions of its sibling folders (the seed
    pool, or the accepted bundles a self-instruct task was drawn from), rotated by the sample."""
    root = Path(seed_dir)
    siblings = sorted(
        p
        for p in root.parent.iterdir()
        if p != root
        and not p.name.startswith(".")
        and not p.is_symlink()
        and (p / "instruction.md").is_file()
    )
    if not siblings or shots < 1:
        return {}
    start = sample_index % len(siblings)
    picked = [siblings[(start + k) % len(siblings)] for k in range(min(shots, len(siblings)))]
    return {p.name: _shorten(_read_text(p / "instruction.md") or "", EXAMPLE_CHARS) for p in picked}


def _strategy(decision: Decision) -> tuple[str, str, str]:
    """(strategy key, direction field, sentence) of a fixed recipe's decision."""
    from envpipeline.forge.recipes import get_recipe

    key = get_recipe(decision.recipe).strategy
    direction, sentence = BASELINE_STRATEGIES[key]
    return key, direction, sentence


def baseline_sections(seed_dir: Path, decision: Decision, sample_index: int) -> list[str]:
    """Strategy, evolution direction, the recipe's restricted edit mask and its example tasks."""
    from envpipeline.forge.recipes import get_recipe

    key, direction, sentence = _strategy(decision)
    sections = [
        _block("Strategy", f"{key}: {sentence}"),
        _block("Evolution direction", direction),
        _block(
            "Artifact edit mask (restricted to the recipe's action)",
            {**artifact_edit_mask(decision.projection).model_dump(), "artifact_names": ARTIFACTS},
        ),
    ]
    examples = example_instructions(seed_dir, get_recipe(decision.recipe).shots, sample_index)
    if examples:
        shown = "\n\n".join(f"### {name}\n```\n{text}\n```" for name, text in examples.items())
        sections.append(f"## Example tasks (instructions, for reference)\n{shown}")
    return sections


def baseline_messages(seed_dir: Path, decision: Decision, *, sample_index: int, model: str) -> list[dict]:
    """The shared baseline template (C.1) with the recipe's strategy injection: no solver payload."""
    system = "\n\n".join([SHARED_CONTRACT, OUTPUT_FORMAT])
    user = "\n\n".join(
        [
            *baseline_sections(seed_dir, decision, sample_index),
            _sample_section(seed_dir, sample_index, model),
            "## Seed files (shortened, for structural reference)\n"
            + render_seed_files(shortened_seed_files(seed_dir)),
        ]
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def baseline_repair_messages(
    seed_dir: Path,
    decision: Decision,
    *,
    sample_index: int,
    model: str,
    repair_index: int,
    failure_summary: str,
    previous_artifact: str,
) -> list[dict]:
    """The shared baseline repair prompt (C.1): it keeps the recipe's strategy while fixing failures."""
    system = "\n\n".join([BASELINE_REPAIR_CONTRACT, SHARED_CONTRACT, OUTPUT_FORMAT])
    user = "\n\n".join(
        [
            *baseline_sections(seed_dir, decision, sample_index),
            _block("Repair index", str(repair_index)),
            _block("Failure summary", failure_summary),
            *_repair_context(seed_dir, sample_index, model, previous_artifact),
        ]
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def recipe_messages(seed_dir: Path, decision: Decision, *, sample_index: int, model: str) -> list[dict]:
    """The initial messages for a decision: Envs-FORGE's for milp, the baseline template otherwise."""
    build = synthesis_messages if decision.recipe == "milp" else baseline_messages
    return build(seed_dir, decision, sample_index=sample_index, model=model)


def recipe_repair_messages(seed_dir: Path, decision: Decision, **fields: Any) -> list[dict]:
    """The repair messages for a decision (Envs-FORGE's for milp, the baseline repair otherwise)."""
    build = repair_messages if decision.recipe == "milp" else baseline_repair_messages
    return build(seed_dir, decision, **fields)
