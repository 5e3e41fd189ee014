"""An offline scripted agent of configurable skill that really acts in a composed environment.

It follows the task's plan through the meta-tools, reads every argument it needs from its *own*
observations (never from the reference), and with probability `error_rate` per step makes a
realistic mistake: it skips the step, corrupts an argument, or calls a wrong tool. Mistakes
cascade: a value it failed to discover cannot be used later. At error rate 0 it reproduces the
reference solution, which is how SFT trajectories are made.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from envpipeline.agents.environment import ComposedEnvironment
from envpipeline.agents.metatools import MetaToolbox
from envpipeline.agents.trajectory import TrajectoryRecorder
from envpipeline.models.task import TaskRecord
from envpipeline.rubric import pass_vector
from envpipeline.services.links import VALUE_NOUNS, read_path

MISTAKES = ("skip", "corrupt", "wrong_tool")


@dataclass
class Rollout:
    """One episode: the conversation, the final reply, and the per-criterion pass vector."""

    messages: list[dict[str, Any]]
    output: str
    passes: list[bool]
    tool_calls: int
    mistakes: int


class ScriptedAgent:
    """A plan-following agent with a per-step error rate."""

    def __init__(self, error_rate: float = 0.0, seed: int = 0) -> None:
        if not 0.0 <= error_rate <= 1.0:
            raise ValueError("error_rate must be within [0, 1]")
        self.error_rate = error_rate
        self.seed = seed

    def run(self, task: TaskRecord, episode: int = 0) -> Rollout:
        """Act on a fresh copy of the task's environment and score the result."""
        rng = random.Random(f"{task.task_id}:{self.seed}:{episode}")
        env = ComposedEnvironment.from_task_environment(task.environment)
        recorder = TrajectoryRecorder(MetaToolbox(env), task.instruction)
        recorder.call("list_services", {}, "First, let me see which services are available.")
        listed: set[str] = set()
        described: set[str] = set()
        seen: list[dict[str, Any] | None] = []
        mistakes = 0
        for step in task.reference_solution:
            service = step.tool.split(".", 1)[0]
            if service not in listed:
                recorder.call(
                    "list_tools", {"service": service}, f"Let me see what the {service} service offers."
                )
                listed.add(service)
            if step.tool not in described:
                recorder.call(
                    "describe_tool", {"tool": step.tool}, f"I check the arguments of {step.tool} first."
                )
                described.add(step.tool)
            arguments = self._arguments(step, seen)
            mistake = rng.choice(MISTAKES) if rng.random() < self.error_rate else None
            if arguments is None or mistake == "skip":
                mistakes += mistake is not None
                seen.append(None)
                continue
            tool = step.tool
            if mistake == "corrupt":
                arguments = _corrupt(arguments, rng)
            elif mistake == "wrong_tool":
                tool = f"{service}.{rng.choice(sorted(env.services[service].tools))}"
            mistakes += mistake is not None
            thought = _thought(env, tool)
            seen.append(recorder.call("call_tool", {"tool": tool, "arguments": arguments}, thought))
        output = self._answer(task, seen)
        messages = recorder.finish(output)
        passes = pass_vector(task.criteria, env.states, output)
        return Rollout(messages, output, passes, recorder.tool_calls, mistakes)

    @staticmethod
    def _arguments(step: Any, seen: list[dict[str, Any] | None]) -> dict[str, Any] | None:
        arguments = dict(step.arguments)
        for name, binding in step.bindings.items():
            observation = seen[binding.step] if binding.step < len(seen) else None
            if not observation or not observation.get("success"):
                return None
            try:
                value = read_path(observation["data"], binding.path)
            except KeyError:
                return None
            arguments[name] = binding.fill(value)
        return arguments

    @staticmethod
    def _answer(task: TaskRecord, seen: list[dict[str, Any] | None]) -> str:
        reveal = task.metadata.get("final_reveal", {})
        observation = seen[reveal["step"]] if reveal and reveal["step"] < len(seen) else None
        if observation and observation.get("success"):
            try:
                value = read_path(observation["data"], reveal["path"])
                kinds = task.metadata.get("value_types") or ["value"]
                noun = VALUE_NOUNS.get(kinds[-1], "value")
                return f"Done. The {noun} I found in the last step is {value}."
            except KeyError:
                pass
        return "I could not complete every step."


def _thought(env: ComposedEnvironment, tool: str) -> str:
    """One line of reasoning before a call: a lookup or a change."""
    service, _, local = tool.partition(".")
    tool_def = env.services[service].tools.get(local) if service in env.services else None
    if tool_def is not None and tool_def.writes:
        return f"Now I make the change with {tool}."
    return f"I look this up with {tool}."


def _corrupt(arguments: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    keys = sorted(k for k, v in arguments.items() if isinstance(v, str))
    if not keys:
        return {**arguments, "unexpected": True}
    key = rng.choice(keys)
    return {**arguments, key: arguments[key] + "-x"}
