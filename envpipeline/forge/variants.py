"""Solution variants of a bundle: the oracle, and for procedural bundles the family's partials."""

from __future__ import annotations

from pathlib import Path

from envpipeline.terminal.bundle import read_bundle
from envpipeline.terminal.families.registry import all_families


def procedural_origin(bundle_dir: Path) -> dict | None:
    """The family provenance recorded in task.toml, or None for imported bundles."""
    meta = read_bundle(bundle_dir).config.metadata.envpipeline
    if meta.get("family") in all_families() and "seed" in meta and "knobs" in meta:
        return dict(meta)
    return None


def solution_variants(bundle_dir: Path) -> dict[str, dict[str, str]]:
    """variant -> solution files; procedural bundles regenerate their family's partial variants."""
    origin = procedural_origin(bundle_dir)
    if origin is None:
        return {}
    family = all_families()[origin["family"]]
    difficulty = read_bundle(bundle_dir).config.metadata.difficulty
    difficulty = difficulty if difficulty in ("easy", "medium", "hard") else "medium"
    task = family.generate(
        int(origin["seed"]), family.knob_model(**origin["knobs"]), difficulty, origin.get("edge_cases")
    )
    return {name: files for name, files in task.solutions.items() if name != "oracle"}


def write_solution(files: dict[str, str], folder: Path) -> Path:
    """Lay out solution files like ``solution/`` (scripts executable)."""
    for relative, content in files.items():
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
        target.chmod(0o755)
    return folder
