"""Which WildAWM stages use the LLM (a light module: the Dagster resources import it at load)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from envpipeline.errors import ConfigError

STAGES: tuple[str, ...] = ("personas", "skills", "tasks", "world_judge", "task_judge")
DEFAULT_STAGES: tuple[str, ...] = ("personas", "skills", "tasks", "world_judge")


class WorldsLLMConfig(BaseModel):
    """Which WildAWM stages use the LLM, and how patiently."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    stages: Annotated[tuple[str, ...], Field(description=f"stages that use the LLM, of {STAGES}")] = (
        DEFAULT_STAGES
    )
    skills: Annotated[int, Field(ge=0, description="skills to ask for (stage 'skills')")] = 3
    max_repairs: Annotated[int, Field(ge=0, description="repair requests after a refused answer")] = 2
    max_revisions: Annotated[
        int, Field(ge=0, description="persona revisions after a diversity rejection")
    ] = 2
    persona_llm_judge: Annotated[
        bool, Field(description="the LLM diversity judge votes beside the rules")
    ] = True

    def model_post_init(self, _context: Any) -> None:
        """Unknown stage names are an error that lists the known ones."""
        unknown = sorted(set(self.stages) - set(STAGES))
        if unknown:
            raise ConfigError(f"unknown LLM stages {unknown}; choose from {', '.join(STAGES)}")

    def uses(self, stage: str) -> bool:
        """Whether `stage` runs through the LLM."""
        return stage in self.stages


def parse_stages(text: str) -> tuple[str, ...]:
    """'personas,tasks' -> ('personas', 'tasks'); 'all' -> the default stages."""
    if text.strip() == "all":
        return DEFAULT_STAGES
    stages = tuple(s.strip().replace("-", "_") for s in text.split(",") if s.strip())
    WorldsLLMConfig(stages=stages)  # validates
    return stages


#: Where a run stores the LLM skills it admitted (the world builds of later steps load them).
