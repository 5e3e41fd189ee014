"""WildAWM settings as a Dagster resource."""

from pathlib import Path

from dagster import ConfigurableResource
from pydantic import Field


class WorldsResource(ConfigurableResource):
    """How many persona worlds, how many days, how many task candidates per day."""

    personas: int = Field(default=3, description="personas to accept")
    days: int = Field(default=5, description="days per persona world")
    seed: int = Field(default=0, description="persona and world seed")
    tasks_per_world_day: int = Field(default=3, description="task candidates per world day")
    live_health: bool = Field(
        default=True, description="start the web app and MCP server for every day's check"
    )

    def root(self, home: str) -> str:
        """Where worlds are written: <home>/worlds."""
        return str(Path(home) / "worlds")
