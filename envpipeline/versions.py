"""Every code version in one place: bump one when its stage's output changes for the same input.

A code version is stamped on every lake row (``_code_version``) and on every Dagster asset, so
Dagster marks downstream assets stale and the re-verification sensor re-runs gold verification
when one changes. Generator versions also travel in each task's provenance.
"""

from __future__ import annotations

from enum import StrEnum

PACKAGE = "0.1.0"

#: CompoWorld's random-walk composer (task ids depend on its output)
COMPOSE_GENERATOR = "1"
#: WildAWM's task templates
WORLD_GENERATOR = "1"
#: the terminal families and the LLM bundle synthesizer
TERMINAL_GENERATOR = "1"
#: gold verification (oracle twice = 1, nop = 0, red team, tampered, runtime guard, plain rewards); `terminal.verify.VERIFIER_VERSION`
VERIFIER = "gold-verify-4"


class Stage(StrEnum):
    """The stages that stamp a code version on what they write."""

    COMPOSE = "compose"
    WORLDS = "worlds"
    TERMINAL = "terminal"
    FORGE = "forge"
    DATASETS = "datasets"


CODE_VERSIONS: dict[Stage, str] = {
    Stage.COMPOSE: f"envpipeline-{PACKAGE}+compose-{COMPOSE_GENERATOR}",
    Stage.WORLDS: "wildawm-1",
    Stage.TERMINAL: f"terminal-{VERIFIER}",
    Stage.FORGE: "forge-1",
    Stage.DATASETS: "datasets-1",
}


def code_version(stage: Stage) -> str:
    """The code version a stage stamps on its rows and assets."""
    return CODE_VERSIONS[stage]
