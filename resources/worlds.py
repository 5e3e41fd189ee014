"""WildAWM settings as a Dagster resource."""

from pathlib import Path

from dagster import ConfigurableResource
from pydantic import Field

from envpipeline.llm.protocol import LLM
from envpipeline.worlds.llm.config import DEFAULT_STAGES, WorldsLLMConfig
from resources.llm import LLMResource


class WorldsResource(ConfigurableResource):
    """How many persona worlds, how many days, how many task candidates per day."""

    personas: int = Field(default=3, description="personas to accept")
    days: int = Field(default=5, description="days per persona world")
    seed: int = Field(default=0, description="persona and world seed")
    tasks_per_world_day: int = Field(default=3, description="task candidates per world day")
    live_health: bool = Field(
        default=True, description="start the web app and MCP server for every day's check"
    )

    llm: LLMResource | None = Field(
        default=None, description="an LLM for the day reviewer and the LLM judge; None = offline judges only"
    )
    generator: str = Field(
        default="procedural",
        description="'procedural' or 'llm': with 'llm' (and `llm` set), the stages in llm_stages use the LLM",
    )
    llm_stages: list[str] = Field(
        default=list(DEFAULT_STAGES),
        description="personas, skills, tasks, world_judge, task_judge (generator 'llm' only)",
    )
    llm_skills: int = Field(default=3, description="event skills to ask the LLM for")
    llm_max_repairs: int = Field(default=2, description="repair requests after a refused LLM answer")

    def client(self) -> LLM | None:
        """The LLM the world checks and task gates consult, if one is configured."""
        return self.llm.client() if self.llm is not None else None

    def generator_llm(self) -> LLM | None:
        """The LLM of the generation stages: only with generator 'llm' and an `llm` configured."""
        if self.generator not in ("procedural", "llm"):
            raise ValueError(f"generator must be 'procedural' or 'llm', not {self.generator!r}")
        return self.client() if self.generator == "llm" else None

    def llm_config(self) -> WorldsLLMConfig:
        """The stages config (no stage when the generator is procedural)."""
        stages = tuple(self.llm_stages) if self.generator_llm() is not None else ()
        return WorldsLLMConfig(stages=stages, skills=self.llm_skills, max_repairs=self.llm_max_repairs)

    def reviewer_llm(self) -> LLM | None:
        """The LLM of the procedural day reviewer: the configured one, unless the LLM world judge
        (generator 'llm', stage world_judge) already reviews every day."""
        llm = self.generator_llm()
        return None if llm is not None and self.llm_config().uses("world_judge") else self.client()

    def task_judge_llm(self) -> LLM | None:
        """The LLM judge of the rollouts: the configured one, or with generator 'llm' only when the
        task_judge stage is on."""
        llm = self.generator_llm()
        if llm is None:
            return self.client()
        return llm if self.llm_config().uses("task_judge") else None

    def root(self, home: str) -> str:
        """Where worlds are written: <home>/worlds."""
        return str(Path(home) / "worlds")
