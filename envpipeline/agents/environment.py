"""A composed environment: the product of several services, addressed by namespaced tools."""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import BaseModel

from envpipeline.errors import ConfigError
from envpipeline.models.task import ComposeEnvironmentRef
from envpipeline.services import vocab
from envpipeline.services.base import NOT_FOUND, Service, dump_state, error_observation
from envpipeline.services.registry import get_service

S = TypeVar("S", bound=BaseModel)


def canonical_order(state: S) -> S:
    """`state` with every record collection in key order, as the store keeps it.

    The store writes states as sorted JSON, so a rebuilt state lists ``usr_10`` before ``usr_9``
    while the freshly planted one did not; every environment is rebuilt in this one order, so
    searches return the same records, in the same order, to the gates, the exports and the agents.
    """
    for name, value in list(vars(state).items()):
        if isinstance(value, dict):
            setattr(state, name, {key: value[key] for key in sorted(value)})
    return state


class ComposedEnvironment:
    """Joint state of several services; a call updates only the addressed service."""

    def __init__(self, services: dict[str, Service]) -> None:
        self.services = services

    @classmethod
    def from_initial_state(cls, initial_state: dict[str, dict[str, Any]]) -> ComposedEnvironment:
        """Rebuild live services from a stored joint initial state (service -> state JSON)."""
        services = {}
        for name, state in initial_state.items():
            service_cls = get_service(name)
            services[name] = service_cls(canonical_order(service_cls.state_model.model_validate(state)))
        return cls(services)

    @classmethod
    def from_task_environment(
        cls, environment: ComposeEnvironmentRef | dict[str, Any]
    ) -> ComposedEnvironment:
        """Rebuild a task's environment: planted states as stored, untouched services from seeds.

        Services the task does not need (distractors) keep their generated initial state, so a
        task stores only their state seed (``"<candidate seed>:<service>"``).
        """
        if isinstance(environment, dict):
            environment = ComposeEnvironmentRef.model_validate(environment)
        env = cls.from_initial_state(environment.initial_state)
        for name, state_seed in environment.state_seeds.items():
            service_cls = get_service(name)
            generated = service_cls.generate_state(vocab.seeded(state_seed))
            env.services[name] = service_cls(canonical_order(generated))
        return env

    @classmethod
    def from_json(cls, initial_state_json: str) -> ComposedEnvironment:
        """Rebuild from the JSON string stored in a task record."""
        try:
            return cls.from_initial_state(json.loads(initial_state_json))
        except json.JSONDecodeError as e:
            raise ConfigError(f"initial state is not valid JSON: {e}") from e

    def call(self, tool: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
        """Call a namespaced tool (``calendar.update_event``); always returns an observation."""
        namespace, _, local = tool.partition(".")
        service = self.services.get(namespace)
        if service is None or not local:
            return error_observation(NOT_FOUND, f"unknown tool '{tool}'; use list_services/list_tools")
        return service.call(local, arguments)

    @property
    def states(self) -> dict[str, Any]:
        """Live state models by service name (for rubric checks)."""
        return {name: s.state for name, s in self.services.items()}

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """The joint state as plain JSON data."""
        return {name: dump_state(s.state) for name, s in self.services.items()}

    def tool_names(self) -> set[str]:
        """Every namespaced tool exposed by this environment."""
        return {f"{n}.{t}" for n, s in self.services.items() for t in s.tools}
