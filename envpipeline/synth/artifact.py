"""The synthesis artifact: parse an LLM answer into `SynthesisOutput` and write it as a bundle.

Both steps return failure reasons instead of raising: a malformed answer is a rejected attempt
whose reasons feed the repair prompt.
"""

from __future__ import annotations

import json
import re
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import ValidationError

from envpipeline.models.bundle import MetadataDifficulty, MetadataSection, TaskConfig
from envpipeline.models.selection import SynthesisOutput
from envpipeline.synth.base import FailureStage
from envpipeline.terminal.bundle import BundleFormatError, dump_task_config, load_task_config, write_files
from envpipeline.terminal.checks import check_bundle

#: Top-level folders a synthesized file may live in; `task.toml` is the only allowed root file.
ALLOWED_DIRS = ("environment", "solution", "tests")
ROOT_FILES = ("task.toml", "instruction.md")
_MAX_ERRORS = 8


def _json_text(text: str) -> str:
    """The JSON part of an answer: outer ``` fences and chatter around the object removed."""
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.split("\n", 1)[1] if "\n" in stripped else ""
        stripped = re.sub(r"\n?```\s*$", "", stripped)
    return stripped


def parse_output(text: str | None) -> tuple[SynthesisOutput | None, FailureStage | None, list[str]]:
    """Parse an answer into `(output, stage, failures)`; stage is "parse" or "contract" on failure, else None."""
    if not text or not text.strip():
        return None, "parse", ["the answer was empty; return one JSON object"]
    body = _json_text(text)
    try:
        data = json.loads(body)
    except json.JSONDecodeError as whole:
        start = body.find("{")
        if start < 0:
            return None, "parse", [f"no JSON object in the answer ({whole.msg})"]
        try:  # the object embedded in chatter
            data, _ = json.JSONDecoder().raw_decode(body, start)
        except json.JSONDecodeError as e:
            return None, "parse", [f"invalid JSON: {e.msg} at line {e.lineno} column {e.colno}"]
    if not isinstance(data, dict):
        return None, "contract", [f"expected a JSON object, got {type(data).__name__}"]
    try:
        return SynthesisOutput.model_validate(data), None, []
    except ValidationError as e:
        failures = [
            f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}"
            for err in e.errors()[:_MAX_ERRORS]
        ]
        return None, "contract", failures


def path_problems(output: SynthesisOutput) -> list[str]:
    """Unsafe or out-of-contract file names, and an instruction.md that disagrees with instruction_md."""
    problems = []
    for name, content in sorted(output.files.items()):
        pure = PurePosixPath(name)
        if not name or "\\" in name or "\0" in name or pure.is_absolute() or ".." in pure.parts:
            problems.append(f"unsafe path {name!r}: use a relative path without '..'")
        elif any(part in ("", ".") for part in name.split("/")):
            problems.append(f"unsafe path {name!r}: empty or '.' path segment")
        elif len(pure.parts) == 1 and name not in ROOT_FILES:
            problems.append(f"{name!r} is outside the contract: put files under {', '.join(ALLOWED_DIRS)}/")
        elif len(pure.parts) > 1 and pure.parts[0] not in ALLOWED_DIRS:
            problems.append(f"{name!r} is outside the contract: top folder must be one of {ALLOWED_DIRS}")
        elif name == "instruction.md" and content.strip() != output.instruction_md.strip():
            problems.append("files['instruction.md'] differs from instruction_md; make them identical")
    return problems


def _task_toml(
    files: dict[str, str], provenance: dict[str, Any], difficulty: MetadataDifficulty, tags: list[str]
) -> str:
    """The given task.toml with provenance merged in, or a fresh one; an unparsable one is kept as-is."""
    given = files.get("task.toml")
    if given is None:
        metadata = MetadataSection(difficulty=difficulty, tags=tags, envpipeline=provenance)
        return dump_task_config(TaskConfig(metadata=metadata))
    return given


def _merge_provenance(bundle_dir: Path, provenance: dict[str, Any], tags: list[str]) -> None:
    """Record provenance (and the skill tags) in a model-written task.toml that parses; leave a
    broken one to the checks."""
    path = bundle_dir / "task.toml"
    try:
        config = load_task_config(path)
    except BundleFormatError:
        return
    metadata = config.metadata.model_copy(
        update={
            "envpipeline": {**config.metadata.envpipeline, **provenance},
            "tags": list(dict.fromkeys([*config.metadata.tags, *tags])),
        }
    )
    path.write_text(dump_task_config(config.model_copy(update={"metadata": metadata})))


def _toml_safe(value: Any) -> Any:
    """Drop None values (TOML has no null) recursively."""
    if isinstance(value, dict):
        return {str(k): _toml_safe(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_toml_safe(v) for v in value if v is not None]
    return value


def materialize_output(
    output: SynthesisOutput,
    bundle_dir: Path,
    *,
    provenance: dict[str, Any],
    difficulty: MetadataDifficulty = "unknown",
    tags: list[str] | None = None,
) -> list[str]:
    """Write `output` as a bundle at `bundle_dir` (which must not exist); returns failure reasons.

    instruction.md comes from `instruction_md`; a task.toml is generated when the answer has none,
    and the provenance (generator, seed, action, sample, solver payload) is recorded in
    `[metadata.envpipeline]` either way. `tags` (the skill nodes the answer declares) are added
    to `[metadata] tags`, where `forge.passrates.seed_skills` reads a seed's skills back.
    """
    tags = list(tags or [])
    problems = path_problems(output)
    if problems:
        return problems
    provenance = _toml_safe(provenance)
    files = {k: v for k, v in output.files.items() if k != "instruction.md"}
    files["task.toml"] = _task_toml(files, provenance, difficulty, tags)
    files["instruction.md"] = output.instruction_md.strip() + "\n"
    bundle_dir.mkdir(parents=True)
    try:
        write_files(bundle_dir, files)
    except BundleFormatError as e:
        return [str(e)]
    except OSError as e:
        return [f"cannot write the bundle: {e}"]
    if "task.toml" in output.files:
        _merge_provenance(bundle_dir, provenance, tags)
    return []


def static_check_failures(bundle_dir: Path) -> list[str]:
    """The default validator: the static checks (schema, paths, files, reward, length, leak)."""
    report = check_bundle(bundle_dir)
    return [f"static check {c.name}: {c.reason}" for c in report.failed()]
