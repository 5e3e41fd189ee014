"""Kind ``scripted``: each family's offline scripted agent, scored by the task's own verifier.

- terminal: `envpipeline.forge.policy.ScriptedTerminalPolicy` (oracle with probability
  ``skill ** (1 + 2 d)``, else a partial variant or nothing), run by the bundle's tests;
- composed: `envpipeline.agents.scripted.ScriptedAgent` through the meta-tools (per-step error
  rate, 0.1 unless configured); reward 1 when every criterion passes;
- world: `envpipeline.worlds.agents.ScriptedAgent` on a copy of W0, scored by
  `envpipeline.worlds.verifier.evaluate`; episode i plays the skill level ``SKILL_CYCLE[i % 3]``
  unless an error rate is configured.

With the default `PolicyConfig` every family's rollouts are the ones these agents gave before the
policy interface existed (same draws for the same seeds).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from envpipeline.errors import ConfigError
from envpipeline.policies.base import (
    ComposedTarget,
    PolicyKind,
    RolloutRecord,
    RolloutTarget,
    TargetFamily,
    TerminalTarget,
    WorldTarget,
)
from envpipeline.policies.registry import PolicyConfig, register_policy_kind
from envpipeline.scratch import scratch_mkdtemp

#: the composed agent's per-step error rate when none is configured (CompoWorld's default)
COMPOSED_ERROR_RATE = 0.1
#: the world agent's skill level by episode (the gates' rollouts 0..5 play it twice)
SKILL_CYCLE: tuple[str, ...] = ("expert", "skilled", "novice")


class ScriptedPolicy:
    """The scripted agents of every family behind one `Policy`."""

    kind: PolicyKind = "scripted"
    families: frozenset[TargetFamily] = frozenset({"terminal", "composed", "world"})

    def __init__(self, config: PolicyConfig | None = None) -> None:
        self.config = config or PolicyConfig()
        self.name = self.config.name or "scripted-v1"

    def rollout(self, target: RolloutTarget, index: int) -> RolloutRecord:
        """One episode on `target` (see the module docstring for each family)."""
        if index < 0:
            raise ConfigError(f"episode index must be >= 0, not {index}")
        if isinstance(target, TerminalTarget):
            return self._terminal(target, index)
        if isinstance(target, ComposedTarget):
            return self._composed(target, index)
        if isinstance(target, WorldTarget):
            return self._world(target, index)
        raise ConfigError(f"the scripted policy cannot attempt a {type(target).__name__}")

    def _terminal(self, target: TerminalTarget, index: int) -> RolloutRecord:
        from envpipeline.forge.policy import ScriptedTerminalPolicy

        agent = ScriptedTerminalPolicy(
            name=self.name, skill=self.config.skill, give_up=self.config.give_up, seed=self.config.seed
        )
        row = agent.rollout(target.bundle_dir, target.sandbox, index, target.limits)
        return RolloutRecord(
            task_id=target.key,
            family="terminal",
            policy=self.name,
            kind="scripted",
            index=index,
            reward=row["reward"],
            submission=row["submission"],
            verdict=row["verdict"],
            seconds=row["seconds"],
            steps=1,
            detail={"skill": row["skill"], "difficulty": row["difficulty"], "backend": row["backend"]},
        )

    def _composed(self, target: ComposedTarget, index: int) -> RolloutRecord:
        from envpipeline.agents.scripted import ScriptedAgent

        rate = COMPOSED_ERROR_RATE if self.config.error_rate is None else self.config.error_rate
        episode = ScriptedAgent(error_rate=rate, seed=self.config.seed).run(target.task, episode=index)
        criteria = dict(zip((c.id for c in target.task.criteria), episode.passes, strict=True))
        return RolloutRecord(
            task_id=target.key,
            family="composed",
            policy=self.name,
            kind="scripted",
            index=index,
            reward=float(all(episode.passes)),
            criteria=criteria,
            submission=episode.output,
            steps=episode.tool_calls,
            detail={"error_rate": rate, "mistakes": episode.mistakes, "messages": episode.messages},
        )

    def _world(self, target: WorldTarget, index: int) -> RolloutRecord:
        from envpipeline.worlds.agents import ScriptedAgent
        from envpipeline.worlds.verifier import evaluate

        task, w0 = target.task, target.day_dir
        seed = (
            f"{task.task_id}:{index}"
            if self.config.seed == 0
            else f"{task.task_id}:{index}:{self.config.seed}"
        )
        skill = SKILL_CYCLE[index % len(SKILL_CYCLE)]
        agent = ScriptedAgent(skill, target.hinted, seed=seed, error_rate=self.config.error_rate)
        scratch = None if target.work_dir else scratch_mkdtemp("envpipeline-world-")
        final = target.work_dir or Path(scratch or "") / w0.name
        if final.exists():
            raise ConfigError(f"{final} exists: a world attempt needs a fresh folder for its copy of W0")
        try:
            shutil.copytree(w0, final)
            result = agent.run(task, final, sandbox=target.sandbox)
            scored = evaluate(task, w0, final, result.trajectory)
        finally:
            if scratch:
                shutil.rmtree(scratch, ignore_errors=True)
        return RolloutRecord(
            task_id=target.key,
            family="world",
            policy=self.name,
            kind="scripted",
            index=index,
            reward=float(scored.verdict),
            criteria=scored.criteria,
            submission=next(
                (m.get("content") or "" for m in reversed(result.trajectory) if m.get("role") == "assistant"),
                "",
            ),
            seconds=result.seconds,
            steps=result.tool_calls,
            detail={
                "skill": skill,
                "error_rate": agent.error_rate,
                "hinted": target.hinted,
                "checklist": scored.checklist,
                "mistakes": result.mistakes,
                "cli_backend": result.cli_backend,
                "trajectory": result.trajectory,
            },
        )


@register_policy_kind("scripted")
def build_scripted(config: PolicyConfig) -> ScriptedPolicy:
    """The scripted policy of `config` (skill, give-up rate, seed, error rate)."""
    return ScriptedPolicy(config)
