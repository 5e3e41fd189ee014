"""WildAWM settings as a Dagster resource."""

from pathlib import Path

from dagster import ConfigurableResource
from pydantic import Field

from envpipeline.llm.protocol import LLM
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

    def client(self) -> LLM | None:
        """The LLM the world checks and task gates consult, if one is configured."""
        return self.llm.client() if self.llm is not None else None

    def root(self, home: str) -> str:
        """Where worlds are written: <home>/worlds."""
        return str(Path(home) / "worlds")
