"""The ``llm`` policy kind: a model behind litellm attempts a task through the family's own tools.

One loop serves the three families (`envpipeline.policies.llm_loop`); what differs is the
episode (`envpipeline.policies.target_episode`) and the system prompt
(`envpipeline.policies.llm_prompts`):

- composed: OpenAI tool calling over the four meta-tools of the task's services;
- terminal: a Terminus-style shell agent, one ``exec`` command per call inside the target's
  sandbox session of the bundle; scored by the bundle's own tests;
- world: the web app (``web__request``), the sandboxed shell (``cli__exec``) and the world's MCP
  tools (``mcp__*``); scored by the task's criteria.

The reward is the task's verifier on whatever state the episode reached, also when the model
failed or the limits cut it short: the criteria's product for composed and world tasks (their
partial credit is ``detail["checklist"]``), the tests' reward for terminal bundles. The record's
verdict is the loop's (`envpipeline.policies.llm_loop`), unless a terminal verifier failed on its
own (``tampered``, ``verifier_timeout``, ...: that verdict wins, the loop's stays in
``detail["loop_verdict"]``) or the scoring itself broke (``score_error``). The endpoint
is any OpenAI-compatible server or hosted model litellm knows (`PolicyConfig.model`,
``api_base``, ``api_key_env``); replies are cached on disk under ``cache_dir/episode-<index>``
when a cache folder is configured, so a rerun replays the same episodes while the episodes of a
group stay independent samples.
"""

from __future__ import annotations

import os
import threading
import time
from typing import TYPE_CHECKING

from envpipeline.errors import ConfigError
from envpipeline.llm.client import LLMClient, LLMConfig, _import_litellm
from envpipeline.llm.protocol import LLM
from envpipeline.llm.usage import UsageSnapshot
from envpipeline.policies.base import PolicyKind, RolloutRecord, RolloutTarget, TargetFamily
from envpipeline.policies.llm_loop import ENVIRONMENT_ERRORS, LoopLimits, LoopOutcome, run_agent_loop
from envpipeline.policies.llm_prompts import system_prompt
from envpipeline.policies.registry import PolicyConfig, register_policy_kind
from envpipeline.policies.target_episode import open_episode

if TYPE_CHECKING:
    from envpipeline.trainers.episode import Episode

#: Longest a single model request may take (the episode's wall-clock limit caps it further).
REQUEST_TIMEOUT_SEC = 300.0


def llm_config(config: PolicyConfig, index: int) -> LLMConfig:
    """The client settings of episode `index` (its own cache subfolder when a cache is configured)."""
    if not config.model:
        raise ConfigError("the llm policy needs a model (PolicyConfig.model, e.g. openai/gpt-4o-mini)")
    return LLMConfig(
        model=config.model,
        api_base=config.api_base,
        api_key_env=config.api_key_env,
        timeout_sec=min(REQUEST_TIMEOUT_SEC, config.timeout_sec),
        num_retries=0,  # the loop retries, within the episode's time (`AgentLoop.ask`)
        temperature=config.temperature,
        cache_dir=None if config.cache_dir is None else config.cache_dir / f"episode-{index}",
    )


class LLMAgentPolicy:
    """A model attempting tasks through litellm (implements `envpipeline.policies.base.Policy`)."""

    kind: PolicyKind = "llm"
    families: frozenset[TargetFamily] = frozenset({"terminal", "composed", "world"})

    def __init__(self, config: PolicyConfig, llm: LLM | None = None) -> None:
        """Args:
        config: the policy settings (``model`` is required unless `llm` is given).
        llm: a model to use for every episode instead of litellm clients (e.g. `ScriptedLLM`).
        """
        if llm is None:  # a missing model or key is an error now, not at the first rollout
            llm_config(config, 0)
            if config.api_key_env and not os.environ.get(config.api_key_env):
                raise ConfigError(
                    f"the llm policy's API key variable ${config.api_key_env} is not set; "
                    "export it or change api_key_env"
                )
        self.config = config
        self.name = config.name or f"llm:{config.model or 'scripted'}"
        self.limits = LoopLimits(max_steps=config.max_steps, timeout_sec=config.timeout_sec)
        self._llm = llm
        self._clients: dict[int, LLMClient] = {}
        self._lock = threading.Lock()

    def client(self, index: int) -> LLM:
        """The model of episode `index` (one litellm client per index when a cache is configured)."""
        if self._llm is not None:
            return self._llm
        key = index if self.config.cache_dir is not None else 0
        with self._lock:
            if key not in self._clients:
                self._clients[key] = LLMClient(llm_config(self.config, key))
            return self._clients[key]

    def usage(self) -> UsageSnapshot:
        """Calls, tokens and cost of every episode so far (litellm clients only)."""
        with self._lock:
            snapshots = [client.usage() for client in self._clients.values()]
        if self._llm is not None:
            snapshots.append(self._llm.usage())
        totals: dict[str, float] = {}
        for snapshot in snapshots:
            for key, value in snapshot.model_dump().items():
                totals[key] = totals.get(key, 0) + value
        return UsageSnapshot.model_validate(totals) if totals else UsageSnapshot()

    def rollout(self, target: RolloutTarget, index: int) -> RolloutRecord:
        """One episode on `target`: the agent loop, then the task's verifier on the state it reached."""
        if target.family not in self.families:
            raise ConfigError(f"the llm policy cannot attempt {target.family} tasks")
        started = time.monotonic()
        llm = self.client(index)
        if isinstance(llm, LLMClient):  # the seconds-long first import is not the episode's time
            _import_litellm()
        episode = open_episode(target)
        try:
            outcome = run_agent_loop(episode, llm, system_prompt(target.family), self.limits)
            reward, criteria, scoring = score(episode)
        finally:
            episode.close()
        return RolloutRecord(
            task_id=target.key,
            family=target.family,
            policy=self.name,
            kind=self.kind,
            index=index,
            reward=reward,
            criteria=criteria,
            submission=outcome.answer,
            verdict=verdict_of(outcome, scoring),
            seconds=round(time.monotonic() - started, 3),
            steps=outcome.steps,
            prompt_tokens=outcome.prompt_tokens,
            completion_tokens=outcome.completion_tokens,
            detail=detail(self.config, outcome, scoring),
        )


def score(episode: Episode) -> tuple[float, dict[str, bool] | None, dict[str, object]]:
    """(reward, per-criterion results, scoring facts) of the episode's state; 0 when scoring fails."""
    from envpipeline.trainers.families.terminal import TerminalEpisode

    try:
        if isinstance(episode, TerminalEpisode):
            result = episode.verify()
            reward = episode.tests_reward()
            facts = {
                "checklist": reward,
                "tests_verdict": result.verdict,
                "tests_reason": result.reason[:500],
            }
            return reward, {"tests": reward >= 1.0}, facts
        ids = [str(c.get("id", number)) for number, c in enumerate(episode.spec.criteria)]
        passed = episode.criteria_passed()
        checklist = episode.reward("checklist")
        return (
            float(bool(passed) and all(passed)),
            dict(zip(ids, passed, strict=True)),
            {"checklist": checklist},
        )
    except ENVIRONMENT_ERRORS as e:  # the verifier could not run: recorded, scored 0
        return 0.0, None, {"score_error": f"{type(e).__name__}: {str(e)[:1000]}"}


def verdict_of(outcome: LoopOutcome, scoring: dict[str, object]) -> str:
    """How the episode ended; a terminal verifier's own failure (tampered, timeout, ...) outranks it."""
    tests = scoring.get("tests_verdict")
    if isinstance(tests, str) and tests != "ok":
        return tests
    return "score_error" if "score_error" in scoring else outcome.verdict


def detail(config: PolicyConfig, outcome: LoopOutcome, scoring: dict[str, object]) -> dict[str, object]:
    """The record's kind-specific facts: model, limits, calls, malformed replies and any error."""
    facts: dict[str, object] = {
        "model": config.model,
        "api_base": config.api_base,
        "max_steps": config.max_steps,
        "timeout_sec": config.timeout_sec,
        "llm_calls": outcome.llm_calls,
        "cached_calls": outcome.cached_calls,
        "malformed": outcome.malformed,
        "failed_requests": outcome.failed_requests,
        "loop_verdict": outcome.verdict,
        "loop_seconds": round(outcome.seconds, 3),
        **scoring,
    }
    if outcome.error:
        facts["error"] = outcome.error
    return facts


@register_policy_kind("llm")
def build_llm_policy(config: PolicyConfig) -> LLMAgentPolicy:
    """The ``llm`` kind's factory (ConfigError without a model)."""
    return LLMAgentPolicy(config)
