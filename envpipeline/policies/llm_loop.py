"""The LLM agent loop over one `Episode`: messages -> model with the episode's tools -> tool calls -> results.

`run_agent_loop` sends the system prompt, the task and the episode's tools (OpenAI function
schemas, ``submit_answer`` included) to an `LLM`, runs each tool call of the reply through
`Episode.call`, appends the results as ``tool`` messages and asks again, until one of:

- ``submit_answer`` is called with a string answer, or a reply has no tool calls (its text is
  the final answer): verdict ``ok``;
- the agent asks for one more tool call after `max_steps` of them: ``step_limit``;
- the wall-clock limit passes (checked before every request and every tool call; a request still
  running at the limit is abandoned): ``timeout``;
- the model fails (a dead server, an HTTP error, a reply litellm cannot parse; retried
  `request_retries` times while time is left) or keeps replying malformed: ``llm_error``, with
  the error in `LoopOutcome.error`;
- the environment itself fails (a sandbox error): ``env_error``.

Malformed replies are fed back, not raised: tool arguments that are not a JSON object and unknown
tool names get the episode's 400/404 observation (and count as steps); an empty reply gets a
reminder. More than `max_malformed` of them end the episode. Nothing here raises for a model's
or a server's failure: the caller always gets an outcome and scores whatever state was reached.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from envpipeline.errors import ConfigError, EnvpipelineError
from envpipeline.llm.client import LLMResponse
from envpipeline.llm.protocol import LLM
from envpipeline.trainers.episode import SUBMIT_ANSWER, Episode, as_arguments

LoopVerdict = Literal["ok", "step_limit", "timeout", "llm_error", "env_error"]
#: Characters of one tool result kept in the conversation (the episodes bound most outputs already).
OBSERVATION_CHARS = 16_000
#: Pause before the first retry of a failed request (doubling after each further failure).
RETRY_PAUSE_SEC = 0.5
#: What the model is told after a reply with neither text nor tool calls.
EMPTY_REPLY_NOTE = (
    "Your reply was empty. Call a tool to continue, or call submit_answer with your final answer."
)


#: What a broken environment raises (a sandbox session that died, a failed subprocess).
ENVIRONMENT_ERRORS = (EnvpipelineError, OSError, subprocess.SubprocessError)


class DeadlineExceeded(Exception):
    """The wall-clock limit passed while a request was running."""


@dataclass(frozen=True)
class LoopLimits:
    """How long an episode may run."""

    max_steps: int = 80
    timeout_sec: float = 600.0
    #: malformed replies (bad arguments, unknown tools, empty replies) fed back before giving up
    max_malformed: int = 5
    #: new attempts after a failed request (while time is left)
    request_retries: int = 2


@dataclass
class LoopOutcome:
    """How an episode ended and what it cost."""

    verdict: LoopVerdict = "ok"
    answer: str = ""
    steps: int = 0
    llm_calls: int = 0
    cached_calls: int = 0
    malformed: int = 0
    failed_requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    error: str = ""
    messages: list[dict[str, Any]] = field(default_factory=list)

    def count(self, response: LLMResponse) -> None:
        """Add one reply's tokens."""
        self.llm_calls += 1
        self.cached_calls += response.cached
        self.prompt_tokens += response.prompt_tokens
        self.completion_tokens += response.completion_tokens


def complete_within(
    llm: LLM, messages: list[dict[str, Any]], tools: list[dict[str, Any]], seconds: float
) -> LLMResponse:
    """One request, abandoned (DeadlineExceeded) when it has not answered within `seconds`.

    The request runs in a daemon thread: an HTTP call cannot be interrupted from outside, so a
    late one is left to end on its own (at the client's request timeout) while the episode ends.
    """
    box: dict[str, Any] = {}
    done = threading.Event()

    def request() -> None:
        try:
            box["response"] = llm.complete(list(messages), tools=tools)
        except BaseException as e:  # handed to the caller's thread below
            box["error"] = e
        finally:
            done.set()

    threading.Thread(target=request, name="llm-agent-request", daemon=True).start()
    if not done.wait(max(seconds, 0.0)):
        raise DeadlineExceeded(f"no reply within the {seconds:.1f} s left of the episode")
    if "error" in box:
        raise box["error"]
    return box["response"]


def _assistant_message(response: LLMResponse, turn: int) -> dict[str, Any]:
    """The reply as the assistant message to send back (every tool call gets an id)."""
    calls = []
    for number, call in enumerate(response.tool_calls):
        function = call.get("function") or {}
        calls.append(
            {
                "id": call.get("id") or f"call_{turn}_{number}",
                "type": "function",
                "function": {
                    "name": function.get("name") or "",
                    "arguments": function.get("arguments") or "",
                },
            }
        )
    message: dict[str, Any] = {"role": "assistant", "content": response.content or ""}
    if calls:
        message["tool_calls"] = calls
    return message


def _malformed(episode: Episode, name: str, arguments: str) -> bool:
    """An unknown tool, or arguments that are not a JSON object (the episode answers 404/400)."""
    return name not in episode.tools or isinstance(as_arguments(arguments), str)


class AgentLoop:
    """One episode's conversation; `run` drives it to an outcome."""

    def __init__(
        self,
        episode: Episode,
        llm: LLM,
        system_prompt: str,
        limits: LoopLimits,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.episode = episode
        self.llm = llm
        self.limits = limits
        self.clock = clock
        self.tools = list(episode.tools.values())
        self.outcome = LoopOutcome(
            messages=[
                {"role": "system", "content": system_prompt},
                {"role": "user", "content": episode.instruction},
            ]
        )
        self.started = clock()

    def remaining(self) -> float:
        """Seconds left before the wall-clock limit."""
        return self.limits.timeout_sec - (self.clock() - self.started)

    def end(self, verdict: LoopVerdict, error: str = "") -> bool:
        """Record how the episode ended; True (the loop stops)."""
        self.outcome.verdict = verdict
        self.outcome.error = error
        return True

    def run(self) -> LoopOutcome:
        """Ask, act, repeat until the episode ends (see the module docstring); never raises for the model."""
        turn = 0
        while not self.turn(turn):
            turn += 1
        self.outcome.answer = self.episode.answer
        self.outcome.seconds = max(self.clock() - self.started, 0.0)
        return self.outcome

    def turn(self, turn: int) -> bool:
        """One request and its tool calls; True when the episode is over."""
        if self.remaining() <= 0:
            return self.end("timeout", f"the {self.limits.timeout_sec:g} s wall-clock limit passed")
        response = self.ask()
        if response is None:
            return True
        self.outcome.count(response)
        message = _assistant_message(response, turn)
        self.outcome.messages.append(message)
        if "tool_calls" not in message:
            return self.final_text(response.content or "")
        return any(self.tool_call(call) for call in message["tool_calls"])

    def ask(self) -> LLMResponse | None:
        """The model's reply, retried after a failure while time is left; None when the episode ended.

        Retries live here, not in the client: a request abandoned at the deadline must not retry
        on its own (and consume replies meant for later requests).
        """
        error = ""
        for attempt in range(self.limits.request_retries + 1):
            try:
                return complete_within(self.llm, self.outcome.messages, self.tools, self.remaining())
            except DeadlineExceeded as e:
                self.end("timeout", str(e))
                return None
            except ConfigError as e:  # a missing API key: retrying cannot help
                self.end("llm_error", f"{type(e).__name__}: {e}")
                return None
            except Exception as e:  # any failure of the model or its server ends the episode, not the caller
                error = f"{type(e).__name__} after {attempt + 1} attempt(s): {str(e)[:1000]}"
                self.outcome.failed_requests += 1
            pause = RETRY_PAUSE_SEC * 2**attempt
            if attempt == self.limits.request_retries or self.remaining() <= pause:
                break
            time.sleep(pause)
        self.end("llm_error", error)
        return None

    def final_text(self, text: str) -> bool:
        """A reply without tool calls: its text is the answer; an empty one is a malformed reply."""
        if text.strip():
            self.episode.submit_answer(text.strip())
            return self.end("ok")
        self.outcome.messages.append({"role": "user", "content": EMPTY_REPLY_NOTE})
        return self.malformed("an empty reply")

    def malformed(self, what: str) -> bool:
        """Count one malformed reply; True when there have been too many."""
        self.outcome.malformed += 1
        if self.outcome.malformed > self.limits.max_malformed:
            return self.end(
                "llm_error", f"more than {self.limits.max_malformed} malformed replies (last: {what})"
            )
        return False

    def cap_command_time(self) -> None:
        """A terminal command may not outlive the episode: its cap is at most the time left."""
        from envpipeline.trainers.families.terminal import TerminalEpisode

        episode = self.episode
        if isinstance(episode, TerminalEpisode):
            episode.max_command_sec = min(episode.max_command_sec, max(self.remaining(), 1.0))

    def tool_call(self, call: dict[str, Any]) -> bool:
        """Run one tool call and append its result; True when the episode is over."""
        name, arguments = call["function"]["name"], call["function"]["arguments"]
        if name != SUBMIT_ANSWER:
            if self.outcome.steps >= self.limits.max_steps:
                return self.end("step_limit", f"more than {self.limits.max_steps} tool calls")
            self.outcome.steps += 1
        if self.remaining() <= 0:
            return self.end("timeout", f"the {self.limits.timeout_sec:g} s wall-clock limit passed")
        self.cap_command_time()
        bad = _malformed(self.episode, name, arguments)
        try:
            observation = self.episode.call(name, arguments)
        except ENVIRONMENT_ERRORS as e:  # the sandbox or a service broke: the environment's fault
            return self.end("env_error", f"{type(e).__name__}: {str(e)[:1000]}")
        self.outcome.messages.append(
            {"role": "tool", "tool_call_id": call["id"], "content": observation[:OBSERVATION_CHARS]}
        )
        if name == SUBMIT_ANSWER and not bad and _submitted(observation):
            return self.end("ok")
        if bad or (name == SUBMIT_ANSWER and not _submitted(observation)):
            return self.malformed(f"{name or '(no name)'}: {observation[:200]}")
        return False


def _submitted(observation: str) -> bool:
    """Whether a submit_answer call was accepted."""
    try:
        return bool(json.loads(observation).get("success"))
    except (json.JSONDecodeError, AttributeError):
        return False


def run_agent_loop(
    episode: Episode,
    llm: LLM,
    system_prompt: str,
    limits: LoopLimits,
    clock: Callable[[], float] = time.monotonic,
) -> LoopOutcome:
    """Drive `episode` with `llm` until it ends (see the module docstring); the caller scores and closes it."""
    return AgentLoop(episode, llm, system_prompt, limits, clock).run()
