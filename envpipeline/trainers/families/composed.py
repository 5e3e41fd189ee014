"""Composed (CompoWorld) episodes: the four meta-tools over the task's live services.

The environment is rebuilt from the spec's inline initial state (`ComposedEnvironment`); tools
are ``list_services``, ``list_tools``, ``describe_tool`` and ``call_tool`` (`MetaToolbox`, whose
service calls validate their arguments and answer bad ones with the 400 observation). The
criteria are the task's own (`envpipeline.rubric.pass_vector`) over the live states and the
submitted answer.
"""

from __future__ import annotations

from typing import Any

from envpipeline.agents.environment import ComposedEnvironment
from envpipeline.agents.metatools import META_TOOL_SCHEMAS, MetaToolbox
from envpipeline.models.criteria import Criterion
from envpipeline.models.env_spec import EnvSpec
from envpipeline.rubric import held_at_start, pass_vector
from envpipeline.trainers.episode import Episode, register_episode

#: The meta-tools by name, built once (`Episode.call` looks a tool up here on every call).
META_TOOLS: dict[str, dict[str, Any]] = {schema["function"]["name"]: schema for schema in META_TOOL_SCHEMAS}


@register_episode("compose")
class ComposedEpisode(Episode):
    """A composed task's services behind the meta-tools."""

    def __init__(self, spec: EnvSpec, **_options: Any) -> None:
        super().__init__(spec)
        self.toolbox = MetaToolbox(ComposedEnvironment.from_task_environment(spec.environment))
        self.criteria = [Criterion.model_validate(c) for c in spec.criteria]
        self._held = held_at_start(self.criteria, self.toolbox.env.states)

    def agent_tools(self) -> dict[str, dict[str, Any]]:
        return META_TOOLS

    def run_tool(self, tool: str, arguments: dict[str, Any]) -> str:
        return self.toolbox.dispatch(tool, arguments)

    def criteria_passed(self) -> list[bool]:
        return pass_vector(self.criteria, self.toolbox.env.states, self.answer)

    def held_at_start(self) -> list[bool]:
        return list(self._held)
